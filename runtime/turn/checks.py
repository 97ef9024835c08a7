"""Stage 5, argument checks: between validate and gate, every check in the engine's list looks at
the validated calls and may refuse one (argument provenance, the personal-data guard). A refusal
is an event (``check``) and stops the turn with its reason; ``needs_input`` asks the citizen for
the refused slots — after the gate has had its say, since consent comes before collection."""

from __future__ import annotations

from collections.abc import Sequence

from .log import TurnLog
from .values import ArgumentCheck, CheckInput, Refusal


def run_checks(checks: Sequence[ArgumentCheck], given: CheckInput, log: TurnLog) -> list[Refusal]:
    log.stage = "checks"
    refusals: list[Refusal] = []
    for check in checks:
        for r in check(given):
            refusals.append(r)
            log.emit("check", "validate", check=r.check, adapter_id=r.adapter_id, field=r.field,
                     reason=r.reason, message=r.message, missing=r.missing)
    return refusals
