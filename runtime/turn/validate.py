"""Stage 4, validate: every proposed call names an offered candidate and its arguments satisfy the
adapter's input schema. A refused call goes back to the planner to repair — at most
``TurnRequest.repair_budget`` times per adapter in a turn; past that the turn stops
(``invalid_arguments``) and nothing reaches an adapter.

A repair is shown the way a model can use it: the refused call as the planner's own assistant
message, each call answered by a ``tool`` message carrying its error (never a second user message
in a row, which several chat templates reject)."""

from __future__ import annotations

import json

from ummaya.model.manifest import Manifest

from .. import compose as ans
from ..plan.protocol import ToolCall
from ..call_rules import validate_call
from .log import TurnLog
from .values import Checked, Stop, TurnContext, TurnState


def validate(calls: list[ToolCall], by_id: dict[str, Manifest], st: TurnState, log: TurnLog) -> Checked:
    log.stage = "validate"
    checked = Checked(calls, [validate_call(c, by_id) for c in calls])
    for c, errs in zip(calls, checked.errors, strict=False):
        log.emit("validation", "validate", adapter_id=c.adapter_id, ok=not errs, errors=errs,
                 repair=st.repairs.get(c.adapter_id, 0) > 0)
    return checked


def repair_budget_left(st: TurnState, adapter_ids: list[str], budget: int) -> bool:
    return all(st.repairs.get(a, 0) < budget for a in adapter_ids)


def show_refused(st: TurnState, calls: list[ToolCall], errors: dict[str, str]) -> None:
    """The refused step as the planner sent it (arguments as written, even when they were not
    JSON), each call answered by a ``tool`` message: its error, or that it was not run because
    another call of the step was refused."""
    st.messages.append({"role": "assistant", "content": None, "tool_calls": [
        {"id": c.id, "type": "function", "function": {
            "name": c.adapter_id,
            "arguments": json.dumps(c.arguments, ensure_ascii=False) if c.arguments is not None else c.raw_arguments}}
        for c in calls]})
    for c in calls:
        err = errors.get(c.id)
        body = {"error": "refused", "message": err, "note": "not executed; fix it or ask the citizen"} if err \
            else {"error": "not_run", "message": "not executed because another call of this step was refused; call it again if it is still needed"}
        st.messages.append({"role": "tool", "tool_call_id": c.id, "content": json.dumps(body, ensure_ascii=False)})


def repair_or_stop(checked: Checked, ctx: TurnContext, st: TurnState, call_row, budget: int = 1) -> bool:
    """After a failed validation: True = the planner gets it back (once per adapter within
    ``budget``); past the budget raises the ``invalid_arguments`` stop."""
    problems = "; ".join(checked.problems)
    failing = [c.adapter_id for c, errs in zip(checked.calls, checked.errors, strict=False) if errs]
    if repair_budget_left(st, failing, budget):
        for a in failing:
            st.repairs[a] = st.repairs.get(a, 0) + 1
        st.repaired, st.repair, st.repair_kind = True, problems, "validation"
        show_refused(st, checked.calls, {c.id: "; ".join(errs) for c, errs in zip(checked.calls, checked.errors, strict=False) if errs})
        return True
    for c in checked.calls:
        st.calls.append(call_row(c, "invalid"))
    raise Stop("invalid_arguments", ans.compose_stop("invalid_arguments", ctx.language, problems), problems)
