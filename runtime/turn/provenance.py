"""Argument provenance: a personal value in a call must be one the citizen gave.

A field is personal when the adapter's input schema says so: its ``x-slot`` names a personal slot
(person_name, birth_date, phone, resident number, home address, account, card, e-mail, passport,
driver's licence, vehicle number) or it carries ``x-personal: true``. For such a field the value
must appear in the citizen's own words: this message (``TurnContext.citizen_texts``), or an
earlier message of this session, checked against the keyed digests the session keeps of them
(runtime/dialogue/given.py — the session never holds the value itself),
compared in a normal form: 「1988년 3월 2일생」 = ``1988-03-02``, 「010 1234 5678」 = ``01012345678``,
「홍 길동」 = ``홍길동``. A value the citizen never gave — a model's guess, or a name copied from an
upstream result — is refused before the gate, and the turn asks the citizen for it (``needs_input``).
The rule is the engine's, so it holds for every planner.
"""

from __future__ import annotations

import re
from typing import Any

from ummaya.codegen.manifest import Manifest

from ..dialogue.state import PERSONAL_SLOTS as DIALOGUE_PERSONAL
from ..dialogue.given import given_earlier
from .values import CheckInput, Refusal

# The dialogue's list (never carried, never stored) and the kinds a call may carry on top of it.
PERSONAL_SLOTS = DIALOGUE_PERSONAL | frozenset({
    "home_address", "address", "account", "account_number", "bank_account", "driver_license",
    "foreigner_number",
})

_DATE_KO = re.compile(r"(?<!\d)((?:19|20)?\d{2})\s*(?:년|[-./])\s*(\d{1,2})\s*(?:월|[-./])\s*(\d{1,2})\s*일?")
_DATE_COMPACT = re.compile(r"(?<!\d)((?:19|20)\d{2})(\d{2})(\d{2})(?!\d)")
_RRN_FRONT = re.compile(r"(?<!\d)(\d{2})(\d{2})(\d{2})\s*-\s*[1-8]")  # 880302-1…: born 1988-03-02


# Slots compared by their digits alone (「010 1234 5678」 = ``01012345678``).
DIGIT_SLOTS = frozenset({"phone", "resident_number", "rrn", "account", "account_number", "bank_account",
                         "card_number", "foreigner_number"})


def personal_fields(m: Manifest) -> dict[str, str]:
    """field name → slot, for the adapter's personal input fields."""
    out: dict[str, str] = {}
    for name, prop in (m.input_schema.get("properties") or {}).items():
        if not isinstance(prop, dict):
            continue
        slot = prop.get("x-slot") or name
        if slot in PERSONAL_SLOTS or prop.get("x-personal") is True:
            out[name] = slot
    return out


def dates_in(text: str) -> set[tuple[int, int, int]]:
    out: set[tuple[int, int, int]] = set()
    for m in _DATE_KO.finditer(text):
        out.add(_ymd(m.group(1), m.group(2), m.group(3)))
    for m in _DATE_COMPACT.finditer(text):
        out.add(_ymd(m.group(1), m.group(2), m.group(3)))
    for m in _RRN_FRONT.finditer(text):
        out.add(_ymd(m.group(1), m.group(2), m.group(3)))
    return out


def _ymd(y: str, m: str, d: str) -> tuple[int, int, int]:
    year = int(y)
    if len(y) == 2:  # 88년생 → 1988; 05년생 → 2005
        year += 2000 if year <= 29 else 1900
    return year, int(m), int(d)


def _digits(s: str) -> str:
    return re.sub(r"\D", "", s)


def _squash(s: str) -> str:
    return re.sub(r"[\s\-·.,]", "", s).lower()


def given_by_citizen(slot: str, value: Any, texts: list[str]) -> bool:
    """Whether ``value`` for ``slot`` appears, normalised, in the citizen's own words."""
    if value is None or value == "":
        return True  # nothing was supplied, so nothing was invented
    raw = str(value)
    if slot == "birth_date":
        want = dates_in(raw) or dates_in(_digits(raw))
        return bool(want) and any(want & dates_in(t) for t in texts)
    if slot in DIGIT_SLOTS:
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
