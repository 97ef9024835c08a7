"""Registered slot extractors: one function per ``x-slot`` type, discovered by the build.

An input field that declares ``x-slot: <type>`` is filled by the extractor registered under that
type, for every adapter; a new slot type is one function here with ``@slot_extractor("type")`` and
no edit anywhere else (the build reads this registry to accept ``x-slot: type`` in manifests and
lists it in the published manifest schema). The planner's built-in slots (places, regions,
coordinates, names found in the text) live in ``offline.SlotFiller``; a registered extractor wins.

An extractor gets a ``SlotRequest`` (the citizen's text, the clock in KST, the field's schema and
name, the language) and returns the value in the field's form, or ``None`` when the text does not
say — the planner then carries, asks or leaves an optional field out; it never guesses.

Field forms follow the schema: ``type: integer`` gets a number, a string gets text shaped by
``x-format`` — ``yyyy`` (2026), ``mm`` (05), ``m`` (5), ``yyyymm`` (202605), ``yyyymmdd``
(20260505), ``yyyy-mm-dd`` (the default for dates, also ``format: date``).

No Kiwi here: cold ``ummaya ask`` must stay fast.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ummaya.runtime.extensions import Registry

from . import slots as sx


@dataclass(frozen=True)
class SlotRequest:
    text: str  # the citizen's request
    now: dt.datetime  # the planner's clock (KST)
    prop: dict[str, Any]  # the input field's JSON Schema (with its x- keys)
    name: str = ""  # the input field's name
    language: str = "ko"
    carried: dict[str, Any] = field(default_factory=dict)  # session slots

    @property
    def low(self) -> str:
        return self.text.lower()


Extractor = Callable[[SlotRequest], Any]
SLOT_EXTRACTORS: Registry[Extractor] = Registry("slot extractor")
slot_extractor = SLOT_EXTRACTORS.register


# -- shaping a value the way the field wants it --------------------------------------------------


def shape_number(req: SlotRequest, value: int, width: int) -> Any:
    """``value`` as the field's type: a number for integers, else zero-padded text (``x-format``
    ``m`` keeps it unpadded)."""
    if req.prop.get("type") == "integer":
        return value
    if req.prop.get("x-format") == "m":
        return str(value)
    return f"{value:0{width}d}"


def shape_date(req: SlotRequest, d: dt.date) -> str:
    fmt = req.prop.get("x-format")
    if req.prop.get("format") == "date" or fmt == "yyyy-mm-dd":
        return d.isoformat()
    if fmt == "yyyymmdd" or "8" in req.prop.get("pattern", ""):
        return d.strftime("%Y%m%d")
    if fmt == "yyyymm":
        return d.strftime("%Y%m")
    return d.isoformat()


# -- year ------------------------------------------------------------------------------------------

# Longest first: 재작년 contains 작년, 내후년 contains 내년.
_RELATIVE_YEARS = (
    (("재작년", "year before last"), -2),
    (("내후년", "year after next"), 2),
    (("작년", "지난해", "지난 해", "전년", "last year"), -1),
    (("내년", "다음 해", "다음해", "명년", "next year"), 1),
    (("올해", "금년", "이번 해", "this year"), 0),
)
_YEAR = re.compile(r"(?<!\d)(20\d\d)(?!\d)\s*년?")


def year_in(text: str, now: dt.datetime) -> int | None:
    """The year a request names: 「2025년」, 「올해」, 「내년」, 「작년」 (and in English)."""
    m = _YEAR.search(text)
    if m:
        return int(m.group(1))
    low = text.lower()
    for words, offset in _RELATIVE_YEARS:
        if any(w in low for w in words):
            return now.year + offset
    month_offset = _relative_month(low)
    if month_offset is not None:  # 「다음 달」 in December is next year's January
        return _shift_month(now, month_offset)[0]
    return None


@slot_extractor("year", doc="A year: 「2025년」, 「올해」/「내년」/「작년」/「재작년」, this/next/last year.")
def extract_year(req: SlotRequest) -> Any:
    year = year_in(req.text, req.now)
    if year is None:
        return None
    return year if req.prop.get("type") == "integer" else str(year)


# -- month -----------------------------------------------------------------------------------------

_RELATIVE_MONTHS = (
    (("다음 달", "다음달", "내달", "next month"), 1),
    (("지난 달", "지난달", "저번 달", "저번달", "전달", "last month"), -1),
    (("이번 달", "이번달", "이달", "this month"), 0),
)
_MONTH = re.compile(r"(?<!\d)(1[0-2]|0?[1-9])\s*월")
_MONTH_NAMES = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december")
_MONTH_EN = re.compile(r"\b(" + "|".join(n[:3] + f"(?:{n[3:]})?" for n in _MONTH_NAMES) + r")\b")


def _relative_month(low: str) -> int | None:
    for words, offset in _RELATIVE_MONTHS:
        if any(w in low for w in words):
            return offset
    return None


def _shift_month(now: dt.datetime, offset: int) -> tuple[int, int]:
    index = now.year * 12 + (now.month - 1) + offset
    return index // 12, index % 12 + 1


def month_in(text: str, now: dt.datetime) -> int | None:
    """The month a request names: 「5월」, 「이번 달」/「다음 달」/「지난달」, "in May"."""
    low = text.lower()
    offset = _relative_month(low)
    if offset is not None:
        return _shift_month(now, offset)[1]
    m = _MONTH.search(text)
    if m:
        return int(m.group(1))
    m = _MONTH_EN.search(low)
    if m and not (m.group(1) == "may" and re.search(r"\bmay\s+(i|we|you|be)\b", low)):
        return next(i for i, n in enumerate(_MONTH_NAMES, 1) if n.startswith(m.group(1)[:3]))
    return None


@slot_extractor("month", doc="A month: 「5월」, 「이번 달」/「다음 달」/「지난달」, \"in May\" (x-format: mm | m | yyyymm).")
def extract_month(req: SlotRequest) -> Any:
    month = month_in(req.text, req.now)
    if month is None:
        return None
    if req.prop.get("x-format") == "yyyymm":
        year = year_in(req.text, req.now) or req.now.year
        return f"{year:04d}{month:02d}"
    return shape_number(req, month, 2)


# -- date ------------------------------------------------------------------------------------------

_WEEKDAYS = {"월": 0, "화": 1, "수": 2, "목": 3, "금": 4, "토": 5, "일": 6}
_WEEK_DAY = re.compile(r"(이번|다음|담|다다음|지난)\s*주\s*([월화수목금토일])요일")
_WEEK_DAY_EN = re.compile(r"\b(this|next|last)\s+(monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b")
_IN_DAYS = re.compile(r"(\d{1,3})\s*일\s*(뒤|후|전)")


def date_in(text: str, now: dt.datetime) -> dt.date | None:
    """A calendar day: 「다음 주 월요일」, 「이번 주 금요일」, 「3일 뒤」, then 오늘/내일/모레/글피, a
    weekday, 「5월 5일」 (runtime/plan/slots.py ``find_date``)."""
    today = now.date()
    monday = today - dt.timedelta(days=today.weekday())
    m = _WEEK_DAY.search(text)
    if m:
        weeks = {"이번": 0, "다음": 1, "담": 1, "다다음": 2, "지난": -1}[m.group(1)]
        return monday + dt.timedelta(weeks=weeks, days=_WEEKDAYS[m.group(2)])
    m = _WEEK_DAY_EN.search(text.lower())
    if m:
        weeks = {"this": 0, "next": 1, "last": -1}[m.group(1)]
        day = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday").index(m.group(2))
        return monday + dt.timedelta(weeks=weeks, days=day)
    m = _IN_DAYS.search(text)
    if m:
        days = int(m.group(1))
        return today + dt.timedelta(days=-days if m.group(2) == "전" else days)
    return sx.find_date(text, now)


@slot_extractor("date", doc="A day: 오늘/내일/모레/글피, 「다음 주 월요일」, 「3일 뒤」, 「5월 5일」, a weekday (x-format: yyyymmdd | yyyy-mm-dd).")
def extract_date(req: SlotRequest) -> Any:
    d = date_in(req.text, req.now)
    return shape_date(req, d) if d else None
