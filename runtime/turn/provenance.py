"""Argument provenance: a personal value in a call must be one the citizen gave.

A field is personal when the adapter's input schema says so: its ``x-slot`` names a slot type the
slot table marks ``personal`` (registry/_slots/personal.yaml: name, birth date, phone, resident
number, address, account, card, e-mail, passport, licence, vehicle number …) or it carries
``x-personal: true``; the slot type's ``compare`` says which normal form the check uses. For such a field the value
must appear in the citizen's own words: this message (``TurnContext.citizen_texts``), or an
earlier message of this session, checked against the keyed digests the session keeps of them
(runtime/dialogue/given.py — the session never holds the value itself),
compared in a normal form: 「1988년 3월 2일생」 = ``1988-03-02``, 「010 1234 5678」 = ``01012345678``,
「홍 길동」 = ``홍길동``. A value the citizen never gave — a model's guess, or a name copied from an
upstream result — is refused before the gate, and the turn asks the citizen for it (``needs_input``).
The rule is the engine's, so it holds for every planner.
"""

from __future__ import annotations

from typing import Any

from ummaya.model.manifest import Manifest

from ..catalog import Catalog
from ..dialogue.given import given_earlier
from ..understand import table
from ..understand.personal_forms import compare_of, dates_in
from ..understand.personal_forms import digits as _digits
from ..understand.personal_forms import squash as _squash
from .values import CheckInput, Refusal, TurnResult

__all__ = ["ArgumentProvenance", "compare_of", "dates_in", "given_by_citizen", "personal_fields",
           "personal_values", "turn_personal_values"]


def personal_fields(m: Manifest) -> dict[str, str]:
    """field name → slot, for the adapter's personal input fields."""
    out: dict[str, str] = {}
    for name, prop in (m.input_schema.get("properties") or {}).items():
        if not isinstance(prop, dict):
            continue
        slot = prop.get("x-slot") or name
        if table.is_personal(slot) or prop.get("x-personal") is True:
            out[name] = slot
    return out


def given_by_citizen(slot: str, value: Any, texts: list[str]) -> bool:
    """Whether ``value`` for ``slot`` appears, normalised, in the citizen's own words."""
    if value is None or value == "":
        return True  # nothing was supplied, so nothing was invented
    raw = str(value)
    compare = compare_of(slot)
    if compare == "date":
        want = dates_in(raw) or dates_in(_digits(raw))
        return bool(want) and any(want & dates_in(t) for t in texts)
    if compare == "digits":
        d = _digits(raw)
        return len(d) >= 4 and any(d in _digits(t) for t in texts)
    v = _squash(raw)
    return bool(v) and any(v in _squash(t) for t in texts)


class ArgumentProvenance:
    """The argument check (checks.py) for personal fields."""

    name = "argument_provenance"

    def __call__(self, given: CheckInput) -> list[Refusal]:
        refusals: list[Refusal] = []
        ctx = given.context
        texts = ctx.citizen_texts
        state = getattr(ctx, "dialogue", None)
        known = set(getattr(state, "given", None) or ())
        key = getattr(ctx, "given_key", None)
        for call in given.calls:
            m = given.candidates.get(call.adapter_id)
            if m is None or not isinstance(call.arguments, dict):
                continue
            for name, slot in personal_fields(m).items():
                value = call.arguments.get(name)
                if name in call.arguments and not given_by_citizen(slot, value, texts) \
                        and not given_earlier(slot, value, key, known):
                    refusals.append(Refusal(
                        self.name, m.id, name, "needs_input",
                        f"{m.id}.{name}: the citizen did not give this {slot} in this session", [slot]))
        return refusals


def personal_values(calls: list[dict[str, Any]], outputs: list[tuple[str, Any]], catalog: Any) -> list[Any]:
    """The personal values a turn handled, for the trace writer (runtime/store/retention.py): the
    arguments of every call row's personal input fields, and the output fields an adapter marks
    ``x-personal`` (or ``x-trace: none``) in ``outputs`` ((adapter id, output) pairs)."""
    from ..store.retention import PersonalValue, mode_of

    out: list[Any] = []
    adapters = getattr(catalog, "adapters", None) or {}
    for row in calls:
        m = adapters.get(row.get("adapter_id"))
        args = row.get("arguments")
        if m is None or not isinstance(args, dict):
            continue
        props = m.input_schema.get("properties") or {}
        for name in personal_fields(m):
            if args.get(name) not in (None, ""):
                out.append(PersonalValue(name, args[name], mode_of(props.get(name))))

    def walk(value: Any, schema: Any) -> None:
        if not isinstance(schema, dict):
            return
        if isinstance(value, dict):
            props = schema.get("properties") or {}
            for k, v in value.items():
                prop = props.get(k)
                marked = isinstance(prop, dict) and (prop.get("x-personal") is True or "x-trace" in prop)
                if marked and v not in (None, "") and not isinstance(v, (dict, list)):
                    out.append(PersonalValue(k, v, mode_of(prop)))
                else:
                    walk(v, prop)
        elif isinstance(value, list):
            for v in value:
                walk(v, schema.get("items"))

    for adapter_id, output in outputs:
        m = adapters.get(adapter_id)
        if m is not None and isinstance(output, dict):
            walk(output, m.output_schema)
    return out


def turn_personal_values(r: TurnResult, catalog: Catalog) -> list[Any]:
    """The personal values a finished turn handled (arguments and marked outputs), which its
    stored trace masks wherever they occur (runtime/store/retention.py)."""
    outputs = [(e["adapter_id"], e.get("summary")) for e in r.evidence
               if isinstance(e, dict) and isinstance(e.get("adapter_id"), str)]  # no id: no schema marks it
    return personal_values(list(r.calls or []), outputs, catalog)
