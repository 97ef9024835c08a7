"""Stage 4, validate: every proposed call names an offered candidate and its arguments satisfy the
adapter's input schema. One repair is allowed per turn; a second invalid step stops the turn
(``invalid_arguments``) and nothing reaches an adapter."""

from __future__ import annotations

from ummaya.codegen.manifest import Manifest

from .. import answer as ans
from ..plan.base import ToolCall
from ..validate import validate_call
from .log import TurnLog
from .values import Checked, Stop, TurnContext, TurnState


def validate(calls: list[ToolCall], by_id: dict[str, Manifest], st: TurnState, log: TurnLog) -> Checked:
    log.stage = "validate"
    checked = Checked(calls, [validate_call(c, by_id) for c in calls])
    for c, errs in zip(calls, checked.errors):
        log.emit("validation", "validate", adapter_id=c.adapter_id, ok=not errs, errors=errs, repair=st.repaired)
    return checked


def repair_or_stop(checked: Checked, ctx: TurnContext, st: TurnState, call_row) -> bool:
    """After a failed validation: True = ask the planner once more (the problems become its
    repair note); a second failure raises the ``invalid_arguments`` stop."""
    problems = "; ".join(checked.problems)
    if not st.repaired:
        st.repaired, st.repair = True, problems
        return True
    for c in checked.calls:
        st.calls.append(call_row(c, "invalid"))
    raise Stop("invalid_arguments", ans.compose_stop("invalid_arguments", ctx.language, problems), problems)
