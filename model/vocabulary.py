"""Vocabularies: the words the shared readers know, as data with provenance (``registry/_vocab/``).

A vocabulary file says where its words came from and when (``source``), and holds one or more
sections:

- ``terms`` — a closed vocabulary: each term an official label with the words citizens use for it
  (진료과목, 생애주기, welfare programmes …). A field's own ``enum`` / ``x-enum-labels`` then picks the
  spelling its upstream wants.
- ``words`` — named classes of words (request words, degree words, deixis, dosage forms …) the
  readers skip or act on; each class's meaning is documented in the file.
- ``places`` — names citizens use that no code table holds (landmarks, stations, campuses), each
  with the 시·도 (and 시·군·구) it is in.
- ``regions`` — the official 법정동 code table (a file copied unchanged beside the YAML), the
  metadata it lacks (short, old and English names, a centre per 시·도) and every change since the
  table's date, each with its source and whether it was verified.
- ``calendar`` — day, weekday, month and holiday words, relative offsets, and lunar holidays by
  year from an official source.

The build validates each file (``path:line``), compiles it into ``generated/understand/`` and the
runtime loads a compiled vocabulary only when a reader first needs it.
"""

from __future__ import annotations

import datetime as dt
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

VOCAB_NAME = r"^[a-z][a-z0-9_]{0,47}$"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class Provenance(_Strict):
    title: str = Field(min_length=1, description="What the words are taken from")
    publisher: str | None = Field(default=None, description="Who publishes it (an agency, a standard)")
    url: str | None = Field(default=None, pattern=r"^https?://")
    checked: dt.date = Field(description="When the words were taken or last checked against the source")
    method: Literal["official", "derived", "curated"] = Field(
        description="official: copied from the publisher; derived: computed from an official source; curated: written by "
        "contributors from usage (each entry checked as the notes say)"
    )
    licence: str | None = None
    notes: str | None = None


class Term(_Strict):
    label: str = Field(min_length=1, description="The official label (as an upstream's x-enum-labels names it)")
    code: str | None = Field(
        default=None,
        description="A standard code for it (ISO 3166-1 alpha-2, an IATA designator): what a field without its own enum "
        "receives, and how a field whose enum lists such codes is matched",
    )
    ko: list[str] = Field(default_factory=list, description="Korean words citizens use for it (the label itself counts too)")
    en: list[str] = Field(default_factory=list, description="English words for it")
    broader: str | None = Field(default=None, description="A broader term's label this one is part of")


class Landmark(_Strict):
    name: str = Field(min_length=1, description="The name as citizens say it (동아대, 부산역, 광안리)")
    sido: str = Field(min_length=2, description="The 시·도 it is in (short or full name)")
    sigungu: str | None = Field(default=None, description="The 시·군·구 it is in")
    aliases: list[str] = Field(default_factory=list)
    en: list[str] = Field(default_factory=list, description="English names")


class SidoMeta(_Strict):
    code: str = Field(pattern=r"^\d{2}$")
    name: str
    short: str
    en: str = Field(description="Its English name as the 시·도 publishes it (Revised Romanization)")
    en_aliases: list[str] = Field(default_factory=list, description="Other English spellings citizens write")
    old: list[str] = Field(default_factory=list, description="Names it had before (강원도, 전라북도)")
    centre: tuple[float, float] = Field(description="WGS84 latitude, longitude of the 시·도 office")


class RegionChange(_Strict):
    """A change to the official table since its date, applied by the build."""

    date: dt.date
    kind: Literal["recode_sido", "move", "add", "retire"] = Field(
        description="recode_sido: every code under a 시·도 prefix moves to another prefix (with the new name); move: a 시·군·구 "
        "moves to another 시·도 (its codes change prefix); add: a new 시·군·구 code; retire: a code no longer current (its "
        "name still resolves, as citizens and upstreams keep using it)"
    )
    code: str = Field(pattern=r"^\d{2}(\d{3})?$", description="The code changed (2-digit 시·도 or 5-digit 시·군·구)")
    to: str | None = Field(default=None, pattern=r"^\d{2}(\d{3})?$", description="The new code (recode_sido, move)")
    name: str | None = Field(default=None, description="The full name after the change (add, recode_sido, move)")
    source: str = Field(min_length=1, description="Where the change is documented")
    verified: bool = Field(description="Whether the code was checked against a source that names it")
    notes: str | None = None

    @model_validator(mode="after")
    def _complete(self) -> RegionChange:
        if self.kind in ("recode_sido", "move") and not self.to:
            raise ValueError(f"a {self.kind} change names the new code (to)")
        if self.kind in ("add", "recode_sido", "move") and not self.name:
            raise ValueError(f"a {self.kind} change names the region after it (name)")
        if self.kind == "recode_sido" and (len(self.code) != 2 or len(self.to or "") != 2):
            raise ValueError("recode_sido changes a 2-digit 시·도 code")
        if self.kind in ("move", "add") and len(self.code) != 5:
            raise ValueError(f"a {self.kind} change names a 5-digit 시·군·구 code")
        return self


RegionLevel = Literal["sido", "sigungu", "eupmyeondong", "ri"]
_DEFAULT_LEVELS: tuple[RegionLevel, ...] = ("sido", "sigungu", "eupmyeondong")


class Regions(_Strict):
    table: str = Field(pattern=r"^[A-Za-z0-9._-]+\.csv$", description="The official code table, a CSV beside this file")
    table_source: Provenance
    levels: list[RegionLevel] = Field(
        default_factory=lambda: list(_DEFAULT_LEVELS),
        description="Which levels of the table are compiled (리 names are many and rarely asked for)",
    )
    sido: list[SidoMeta] = Field(min_length=1)
    changes: list[RegionChange] = Field(default_factory=list)


class FixedHoliday(_Strict):
    name: str
    month: int = Field(ge=1, le=12)
    day: int = Field(ge=1, le=31)
    aliases: list[str] = Field(default_factory=list)
    en: list[str] = Field(default_factory=list)


class LunarHoliday(_Strict):
    name: str
    aliases: list[str] = Field(default_factory=list)
    en: list[str] = Field(default_factory=list)
    dates: dict[int, list[dt.date]] = Field(description="Year → the days (solar calendar) of the holiday that year")

    @field_validator("dates")
    @classmethod
    def _years_match(cls, v: dict[int, list[dt.date]]) -> dict[int, list[dt.date]]:
        for year, days in v.items():
            if not days or any(d.year not in (year, year + 1) for d in days):
                raise ValueError(f"{year}: the days of a year's holiday fall in that year")
        return v


class Calendar(_Strict):
    days: dict[str, int] = Field(default_factory=dict, description="Word → days from today (오늘 0, 내일 1, 어제 -1 …)")
    weekdays: dict[str, int] = Field(default_factory=dict, description="Word → weekday, Monday 0 (월요일 0, friday 4 …)")
    weeks: dict[str, int] = Field(default_factory=dict, description="Word before 주 → weeks from this one (이번 0, 다음 1 …)")
    months: dict[str, int] = Field(default_factory=dict, description="Word → month of the year (오월 5, 시월 10, may 5 …)")
    relative_months: dict[str, int] = Field(default_factory=dict, description="Word → months from this one (다음 달 1 …)")
    relative_years: dict[str, int] = Field(default_factory=dict, description="Word → years from this one (작년 -1 …)")
    weekend: list[str] = Field(default_factory=list, description="Words for Saturday and Sunday together")
    times_of_day: dict[str, int] = Field(default_factory=dict, description="Word → the hour it stands for (아침 9 …)")
    afternoon: list[str] = Field(default_factory=list, description="Words after which an hour below 12 is p.m. (오후, 저녁)")
    now: list[str] = Field(default_factory=list, description="Words for the present moment (지금, now)")
    fixed_holidays: list[FixedHoliday] = Field(default_factory=list)
    lunar_holidays: list[LunarHoliday] = Field(default_factory=list)


class VocabFile(_Strict):
    """One ``registry/_vocab/<name>.yaml``."""

    vocabulary: str = Field(pattern=VOCAB_NAME, description="The vocabulary's name (= the file name)")
    description: str = Field(min_length=1)
    source: Provenance
    terms: list[Term] | None = None
    words: dict[str, list[str]] | None = Field(default=None, description="Word class → its words")
    places: list[Landmark] | None = None
    regions: Regions | None = None
    calendar: Calendar | None = None

    @model_validator(mode="after")
    def _something(self) -> VocabFile:
        if not any(x is not None for x in (self.terms, self.words, self.places, self.regions, self.calendar)):
            raise ValueError("a vocabulary needs at least one of terms, words, places, regions, calendar")
        return self

    @field_validator("words")
    @classmethod
    def _word_classes(cls, v: dict[str, list[str]] | None) -> dict[str, list[str]] | None:
        if v is not None:
            for name, words in v.items():
                if not name.replace("_", "").isalnum() or not name.islower():
                    raise ValueError(f"word class '{name}' is not a snake_case name")
                if any(not isinstance(w, str) or not w.strip() for w in words):
                    raise ValueError(f"word class '{name}' has an empty word")
        return v


__all__ = ["Calendar", "FixedHoliday", "Landmark", "LunarHoliday", "Provenance", "RegionChange", "Regions",
           "SidoMeta", "Term", "VocabFile"]
