"""What a finished turn leaves in the dialogue state (the other half of resolve.py)."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any, Literal

from ..understand import table
from ..understand.places import find_place
from ..understand.regions import find_region
from .resolve import Frame
from .state import DialogueState, Intent, PendingQuestion, Place, Policy

# Output fields worth remembering by name: a later step may reuse them (「그럼 신청해줘」 after an
# eligibility check, 「접수번호로 조회」 after an application).
_REFERENCE_FIELD = re.compile(r"(receipt|reference|application_id|confirmation|case_number)", re.I)
# Output fields that name what a service or product is called (kept for a later 「그거」).
_NAME_FIELD = re.compile(r"^(?:service|drug|benefit|product)_name$")


def _class_of(slot: str) -> str | None:
    st = table.slot(slot)
    return st.class_ if st is not None else None


def _remembered(slot: str) -> bool:
    """An argument worth remembering by name for a later step: what was asked about (a product, a
    keyword with a vocabulary …), never where, when or anything personal."""
    st = table.slot(slot)
    return bool(st and not st.personal and ("subject" in st.facets or st.class_ == "code")
                and not ({"where", "when"} & st.facets))


def non_personal(m: Any, arguments: dict[str, Any] | None) -> dict[str, Any]:
    """Arguments without personal fields (never kept in the state) or personal values."""
    from ..guard.personal import contains_personal

    props = m.input_schema.get("properties", {})
    out = {}
    for name, value in (arguments or {}).items():
        if table.is_personal(props.get(name, {}).get("x-slot", name)) or props.get(name, {}).get("x-personal"):
            continue
        if contains_personal(value):
            continue
        out[name] = value
    return out


def after_turn(
    state: DialogueState, frame: Frame | None, *, catalog: Any, query: str, language: Literal["ko", "en"],
    policy: Policy, stop_reason: str, asked: dict[str, Any] | None, calls: list[dict[str, Any]],
    slots: dict[str, Any], outputs: dict[str, Any] | None = None, now: dt.datetime | None = None,
) -> DialogueState:
    """The state after a turn.

    ``asked``: the planner's question when the turn stopped for input (``adapter_id``, ``missing``,
    ``arguments``); ``calls``: the turn's call rows (``adapter_id``, ``status``, ``arguments``);
    ``slots``: the slots the turn ended with (carried ones plus what locate adapters resolved);
    ``outputs``: call id → output, for references.
    """
    from ..request_context import now_kst

    new = state.model_copy(deep=True)
    new.language = language
    new.policy = policy
    new.turns = state.turns + 1
    new.facts.now_kst = (now or now_kst()).isoformat(timespec="seconds")

    # The pending question: only while the engine waits for an answer.
    new.pending = None
    if stop_reason == "needs_input" and asked and asked.get("adapter_id") in catalog.adapters:
        m = catalog.get(asked["adapter_id"])
        new.pending = PendingQuestion(adapter_id=m.id, missing=list(asked.get("missing") or []),
                                      arguments=non_personal(m, asked.get("arguments")))
        if new.last_intent is None or frame is None or frame.kind == "new":
            # The topic is the one asked about, even before it could run.
            new.last_intent = Intent(adapter_id=m.id, primitive=m.primitive,
                                     arguments=non_personal(m, asked.get("arguments")))

    # A consent notice is a question too: 「네」 answers it (the gate asks again, with how to agree),
    # 「아니」 declines it.
    if stop_reason == "consent_required":
        row = next((c for c in reversed(calls) if c.get("status") == "consent_required"
                    and c.get("adapter_id") in catalog.adapters), None)
        if row is not None:
            m = catalog.get(row["adapter_id"])
            new.pending = PendingQuestion(adapter_id=m.id, kind="consent", arguments=non_personal(m, row.get("arguments")))
            new.last_intent = Intent(adapter_id=m.id, primitive=m.primitive, arguments=non_personal(m, row.get("arguments")))

    # The last intent: the last call that did what was asked (a find/check/send over the locate
    # steps that served it).
    done = [c for c in calls if c.get("status") in ("ok", "no_data", "handoff") and c.get("adapter_id") in catalog.adapters]
    target = next((c for c in reversed(done) if c.get("primitive") != "locate"), None) or (done[-1] if done else None)
    if target is not None:
        m = catalog.get(target["adapter_id"])
        args = non_personal(m, target.get("arguments"))
        props = m.input_schema.get("properties", {})
        new.last_intent = Intent(
            adapter_id=m.id, primitive=m.primitive, arguments=args,
            slots={props.get(k, {}).get("x-slot", k): v for k, v in args.items()},
        )
        for name, value in args.items():
            slot = props.get(name, {}).get("x-slot", name)
            if isinstance(value, str) and (_NAME_FIELD.match(name) or (_remembered(slot) and _class_of(slot) == "product")):
                new.references[name] = value
        out = (outputs or {}).get(target.get("call_id", ""))
        _references_from_output(new, out)

    # The place: a newly named place replaces the old one entirely; otherwise what this turn
    # resolved refines the carried one. A carried value is kept in its slot's own spelling, never
    # one upstream's code (work24's 「11000」 is 서울특별시, which HRD's field reads as 「11」).
    turn_place = Place.from_slots(_labelled(slots, calls, catalog))
    named = None
    if frame is not None and frame.new_place:
        named = frame.hints.place or find_place(query, language)
        region = find_region(query)
        if named is None and region is not None:
            named = region.text()
    if frame is not None and frame.new_place and (turn_place is not None or named):
        place = turn_place or Place()
        if named and not place.name:
            place.set_name(named)
        region = find_region(named or query)
        if region is not None:
            place.set_region(region)
        if stop_reason != "needs_input" or turn_place is not None:
            new.place = place
    elif turn_place is not None:
        merged = (new.place.slots() if new.place else {}) | turn_place.slots()
        new.place = Place(**merged)
    elif new.place is None and frame is not None:
        region = find_region(query)
        if region is not None and target is not None:
            new.place = Place()
            new.place.set_name(region.text())
            new.place.set_region(region)
    new.touch()
    return new


def _labelled(slots: dict[str, Any], calls: list[dict[str, Any]], catalog: Any) -> dict[str, Any]:
    """The turn's slots with each value a call sent as a coded field's code (x-enum-labels) read
    back as its label, through the same rule a follow-up's carried arguments follow
    (resolve._canonical): the next adapter's field reads the label into its own code."""
    from .resolve import _canonical

    out = dict(slots)
    for c in calls:
        m = catalog.adapters.get(c.get("adapter_id"))
        if m is None:
            continue
        props = m.input_schema.get("properties", {})
        for name, value in (c.get("arguments") or {}).items():
            slot = (props.get(name) or {}).get("x-slot")
            if slot in out and out[slot] == value:
                out[slot] = _canonical(props.get(name) or {}, value)
    return out


def _references_from_output(state: DialogueState, output: Any) -> None:
    if not isinstance(output, dict):
        return
    items = output.get("items")
    rows = [output] + ([items[0]] if isinstance(items, list) and items and isinstance(items[0], dict) else [])
    for row in rows:
        for key, value in row.items():
            if not isinstance(value, str) or not value:
                continue
            if _REFERENCE_FIELD.search(key):
                state.references[key] = value
            elif _NAME_FIELD.match(key):
                state.references.setdefault(key, value)


__all__ = ["after_turn", "non_personal"]
