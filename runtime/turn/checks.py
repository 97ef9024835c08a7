"""Stage 5, argument checks: between validate and gate, every check in the engine's list looks at
the validated calls and may refuse one (argument provenance, the personal-data guard). A refusal
is an event (``check``) and stops the turn with its reason; ``needs_input`` asks the citizen for
the refused slots — after the gate has had its say, since consent comes before collection."""

from __future__ import annotations

from collections.abc import Sequence

from ..guard.personal import Redaction, guard_arguments, is_span
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


class PersonalDataGuard:
    """The engine's built-in argument check (runtime/turn/checks.py): personal values are removed
    from every argument they may not be in, in place, and each removal is a ``redaction`` event.
    A required argument with nothing left is refused: the citizen is asked for it again."""

    name = "personal_data"

    def __call__(self, given: CheckInput) -> list[Refusal]:
        refusals = []
        self.redactions: list[Redaction] = []
        for call in given.calls:
            m = given.candidates.get(call.adapter_id)
            if m is None or not isinstance(call.arguments, dict):
                continue
            cleaned, found = guard_arguments(m, call.arguments, language=given.context.language)
            if not found:
                continue
            call.arguments = cleaned
            self.redactions.extend(found)
            required = set(m.input_schema.get("required", []))
            props = m.input_schema.get("properties", {})
            for r in found:
                if r.action == "dropped" and r.field in required:
                    slot = str(props.get(r.field, {}).get("x-slot", r.field))
                    refusals.append(Refusal(
                        check=self.name, adapter_id=m.id, field=r.field, reason="needs_input",
                        message=f"{r.field}: only personal data ({', '.join(r.kinds)}) was given",
                        missing=["place" if is_span(slot) else slot],
                    ))
        return refusals
