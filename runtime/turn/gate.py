"""Stage 6, gate: each call's permission decision (runtime/permission.py), recording first a consent the
request grants up front. A protected adapter without consent stops the turn with the consent
notice (``consent_required``); a blocked one with ``permission_denied``. The same decision runs
before the engine asks the citizen for an adapter's input: consent comes before collection."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ummaya.model.manifest import Manifest

from .. import compose as ans
from ..permission import ConsentBook, GateResult, consent_state, decide, needs_consent
from ..plan.protocol import ToolCall
from .log import TurnLog
from .values import Stop, TurnContext, TurnState

Grant = Callable[[str, Manifest], str]


def gate_one(m: Manifest, ctx: TurnContext, book: ConsentBook, grant: Grant) -> tuple[GateResult, Stop | None]:
    """The decision for one adapter and the stop it causes, if any."""
    sid = ctx.session.session_id
    if ctx.policy == "lookup_only" and m.permission.gate != "read-only":
        # Look-up-only sessions never go on into a protected check, sign-in or submission.
        g = GateResult(gate=m.permission.gate, decision="deny")
        return g, Stop("permission_denied", ans.compose_lookup_only(m, ctx.language), "policy_lookup_only")
    state = consent_state(book, sid, m.id) if needs_consent(m) else None  # the one lookup
    if state == "absent" and m.id in ctx.consents and m.permission.consent is not None:
        state = "granted" if grant(sid, m) else "broken"  # "" = the ledger refused the append
    g = decide(m, sid, book, state=state)
    if g.decision == "consent_required":
        return g, Stop("consent_required", ans.compose_consent(m, ctx.language))
    if g.decision == "deny":
        return g, Stop("permission_denied", ans.compose_stop("permission_denied", ctx.language))
    return g, None


def gate(
    calls: list[ToolCall], by_id: dict[str, Manifest], ctx: TurnContext, st: TurnState, log: TurnLog,
    *, book: ConsentBook, grant: Grant, call_row: Callable[[ToolCall, str], dict[str, Any]],
    quiet_when_allowed: bool = False,
) -> None:
    """Gate every call in order; the first refusal is recorded as the call's row and stops the turn.
    ``quiet_when_allowed``: before a question only refusals are events (nothing is dispatched)."""
    log.stage = "gate"
    for c in calls:
        if c.adapter_id not in by_id:
            continue
        g, stop = gate_one(by_id[c.adapter_id], ctx, book, grant)
        if stop is not None or not quiet_when_allowed:
            log.emit("permission", "gate", adapter_id=c.adapter_id, gate=g.gate, decision=g.decision)
        if stop is not None:
            st.calls.append(call_row(c, stop.reason))
            raise stop
        if g.consented and by_id[c.adapter_id].permission.consent is not None:
            st.consented.add(c.adapter_id)  # the claim check lets "동의하신 내용으로" stand only then
