"""Slot types: what an ``x-slot`` means, declared once in ``registry/_slots/*.yaml``.

A manifest's input field says ``x-slot: drug_name``; the slot type says what that is — its class
(a place, a date, a product name, a closed vocabulary …), whether a session carries it to the next
turn, whether it is personal data, whether it is *derived* (the citizen does not say it: an
adapter's output or the session supplies it), which shared reader takes it from a request and with
which vocabulary. The build validates every file (``path:line`` errors), compiles the table into
``generated/understand/slots.json`` and documents it in the published manifest schema; the runtime
(dialogue, guard, provenance, dispatch, planner) reads the compiled table, so no slot name is
written in Python.

The classes are this model's own closed list, and what a class implies (where / when / the subject
of a request / a span of the citizen's words) is decided here, once, by class — never per slot
name.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

SLOT_NAME = r"^[a-z][a-z0-9_]{0,47}$"

SlotClass = Literal[
    "place",        # a place the citizen names: a landmark, a 동, a road with its building number
    "address",      # a full address (도로명 or 지번), as the citizen or an upstream writes it
    "region",       # an administrative region: 시·도, 시·군·구, or its code
    "coordinates",  # WGS84 latitude / longitude (or the pair)
    "stop",         # a transit stop, by its name as on the sign
    "date",         # a calendar day
    "month",        # a month of the year
    "year",         # a year
    "time",         # a time of day
    "count",        # how many results the citizen wants (「3곳만」)
    "number",       # another quantity (an amount of money …)
    "product",      # a product or brand name (a medicine …), whole
    "keyword",      # a search word in the citizen's own words
    "text",         # free text the citizen writes (a report's description)
    "code",         # a closed vocabulary: a code or label from a declared list
    "identifier",   # an id an upstream or a lookup issues (a stop's node id, a receipt number)
    "personal",     # personal data about the citizen (name, birth date, phone …)
]

# What a class implies, decided once here (the runtime asks by facet, never by slot name):
#   where   — it says where: a follow-up naming a new place replaces all of them at once
#   when    — it says when: a follow-up naming a new day replaces them
#   subject — what is asked about, in the citizen's words (a drug, a keyword, a stop): a pointer
#             (그거, 거기) fills it from the conversation, and Mock says when it replays another one
#   span    — the value is a span of the citizen's words: personal data removed from it leaves the
#             place span, not the whole message
CLASS_FACETS: dict[str, frozenset[str]] = {
    "place": frozenset({"where", "span"}),
    "address": frozenset({"where", "span"}),
    "region": frozenset({"where"}),
    "coordinates": frozenset({"where"}),
    "stop": frozenset({"where", "subject", "span"}),
    "date": frozenset({"when"}),
    "month": frozenset({"when"}),
    "year": frozenset({"when"}),
    "time": frozenset({"when"}),
    "count": frozenset(),
    "number": frozenset(),
    "product": frozenset({"subject", "span"}),
    "keyword": frozenset({"subject", "span"}),
    "text": frozenset({"subject", "span"}),
    "code": frozenset(),
    "identifier": frozenset(),
    "personal": frozenset(),
}
FACETS = ("where", "when", "subject", "span")

# Kinds of personal data the shared detector (wire/redact.py) finds in text.
PersonalKind = Literal["rrn", "phone", "email", "card", "passport", "driver_licence"]
# How a personal value is compared with the citizen's words (argument provenance).
Compare = Literal["text", "digits", "date"]
# Normalisations a reader applies to the value it read, in order.
Normalise = Literal["strip_spaces", "digits", "upper", "lower"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class SlotQuestion(_Strict):
    """What the engine asks the citizen when a required field of this slot type is missing, in
    each language it answers in."""

    ko: str = Field(min_length=1, description="The question in Korean (「어떤 약인가요? 제품 이름을 알려주세요.」)")
    en: str = Field(min_length=1, description="The question in English")

    def get(self, language: str) -> str:
        return self.en if language == "en" else self.ko


class SlotType(_Strict):
    """One slot type, as a contributor declares it."""

    name: str = Field(pattern=SLOT_NAME, description="What input (and output) fields name in x-slot")
    class_: SlotClass = Field(alias="class", description="What kind of value it is (the closed list of classes)")
    description: str = Field(min_length=1)
    carried: bool = Field(default=False, description="A session carries it to the next turn (a resolved place, coordinates, a region)")
    personal: bool = Field(default=False, description="Personal data: never carried, never stored, sent only to a consented protected adapter")
    personal_kinds: list[PersonalKind] = Field(
        default_factory=list,
        description="Kinds of personal data the shared detector finds that a field of this slot may hold (a phone field holds a phone number)",
    )
    compare: Compare = Field(default="text", description="How argument provenance compares a personal value with the citizen's words")
    derived: bool = Field(
        default=False,
        description="The citizen does not normally say it: an earlier adapter's output (its provides), the session, or the "
        "engine's official code tables supply it. A value must be traceable to one of those or to the citizen's own words as "
        "read by the slot's reader (issue 24's provenance check reads this)",
    )
    reader: str | None = Field(
        default=None,
        description="The shared reader that takes it from a request (runtime/understand/readers.py); none: only outputs and the session fill it",
    )
    vocabulary: str | None = Field(default=None, description="The vocabulary (registry/_vocab/<name>.yaml) the reader matches against")
    vocabulary_for: Literal["every", "english"] = Field(
        default="every",
        description="Which requests the vocabulary reads: every request, or only English ones (a translation table: "
        "\"care worker\" → 요양보호사, while a Korean request keeps its own words whole — 물류센터, not 물류)",
    )
    fill_optional: Literal["always", "vocabulary", "never"] = Field(
        default="always",
        description="When the field is optional: always read it; only when the request names a word of the vocabulary; or "
        "never guess it (an optional filter filled by a guess silently narrows the answer)",
    )
    asked_as: str | None = Field(default=None, description="What the engine asks the citizen for when this is missing (coordinates → a place)")
    question: SlotQuestion | None = Field(
        default=None,
        description="What the engine asks when a required field of this slot type is missing (ko and en); every slot "
        "type a manifest's input requires has one, or the one it is asked as (asked_as) has — `ummaya check` says so",
    )
    region_level: Literal["sido", "sigungu", "full", "code"] | None = Field(
        default=None,
        description="For a region: which part of the region a field of this slot takes without an enum — the 시·도, the "
        "시·군·구, both as one name, or the 법정동 code (an enum or x-enum-labels on the field picks its own spelling)",
    )
    parts: list[str] = Field(default_factory=list, description="Slot types that together are this one (coordinates = latitude + longitude)")
    pattern: str | None = Field(default=None, description="For the pattern reader: a regular expression whose first group (or whole match) is the value")
    normalise: list[Normalise] = Field(default_factory=list, description="Normalisations of a value read from text, in order")
    examples: list[str] = Field(default_factory=list, description="Requests and the value read from them, for the docs")

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, v: str | None) -> str | None:
        if v is not None:
            try:
                re.compile(v)
            except re.error as exc:
                raise ValueError(f"not a regular expression: {exc}") from exc
        return v

    @model_validator(mode="after")
    def _consistent(self) -> SlotType:
        if self.personal_kinds and not self.personal:
            raise ValueError("personal_kinds is only for a personal slot (personal: true)")
        if self.class_ == "personal" and not self.personal:
            raise ValueError("a slot of class 'personal' is personal (personal: true)")
        if self.personal and self.carried:
            raise ValueError("a personal slot is never carried across turns")
        if self.fill_optional == "vocabulary" and not self.vocabulary:
            raise ValueError("fill_optional: vocabulary needs a vocabulary")
        if self.reader == "pattern" and not self.pattern:
            raise ValueError("the pattern reader needs a pattern")
        if self.region_level is not None and self.class_ != "region":
            raise ValueError("region_level is only for a slot of class 'region'")
        return self

    @property
    def facets(self) -> frozenset[str]:
        return CLASS_FACETS[self.class_]


class SlotFile(_Strict):
    """One ``registry/_slots/<name>.yaml``: a group of slot types."""

    slots: list[SlotType] = Field(min_length=1)


SLOT_TABLE_FORMAT: Literal[1] = 1


class SlotTable(_Strict):
    """The compiled table (``generated/understand/slots.json``): every slot type by name, and the
    vocabularies the build compiled beside it (name → file under ``generated/understand/``)."""

    format: Literal[1] = SLOT_TABLE_FORMAT
    slots: dict[str, SlotType] = Field(default_factory=dict)
    vocabularies: dict[str, str] = Field(default_factory=dict)

    def get(self, name: str | None) -> SlotType | None:
        return self.slots.get(name) if name else None

    def names(self) -> tuple[str, ...]:
        return tuple(sorted(self.slots))

    def with_facet(self, facet: str) -> frozenset[str]:
        return frozenset(n for n, s in self.slots.items() if facet in s.facets)

    def of_class(self, *classes: str) -> frozenset[str]:
        return frozenset(n for n, s in self.slots.items() if s.class_ in classes)

    def where(self, predicate: Any) -> frozenset[str]:
        return frozenset(n for n, s in self.slots.items() if predicate(s))

    def question_for(self, name: str) -> SlotQuestion | None:
        """What the engine asks for slot ``name``: its own question, else the one of the slot it
        is asked as (coordinates → place)."""
        st = self.slots.get(name)
        if st is None:
            return None
        if st.question is None and st.asked_as:
            other = self.slots.get(st.asked_as)
            return other.question if other is not None else None
        return st.question

    def whole_of(self, name: str) -> str | None:
        """The slot this one is a part of (latitude → coordinates)."""
        return next((n for n, s in self.slots.items() if name in s.parts), None)


__all__ = ["CLASS_FACETS", "FACETS", "SlotClass", "SlotQuestion", "SlotFile", "SlotTable", "SlotType", "SLOT_TABLE_FORMAT"]
