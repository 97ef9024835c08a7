"""The shared slot readers: one function per concept, named by slot types in registry/_slots/.

A slot type says ``reader: date``; every input field of that slot type, in every adapter, is read
from the request by the function registered here under that name — with the slot type's vocabulary
and the field's own schema (``enum``, ``x-enum-labels``, ``x-format``, ``type``) deciding the form.
A new slot type whose values a declared vocabulary or pattern describes needs no Python (readers
``vocabulary`` and ``pattern``); a new *kind* of value is one function here with
``@reader("name")``, and the build accepts the name (``ummaya check`` rejects an unknown one).

A reader gets a ``ReadRequest`` and returns the value in the field's form, or ``None`` when the
request does not say — the planner then carries, asks, or leaves an optional field out; it never
guesses. No Kiwi here: cold ``ummaya ask`` must stay fast.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ummaya.model.slots import SlotType
from ummaya.wire.extensions import Registry


@dataclass
class ReadRequest:
    text: str  # the citizen's request
    now: dt.datetime  # the turn's clock (KST)
    prop: dict[str, Any]  # the input field's JSON Schema (with its x- keys)
    name: str = ""  # the input field's name
    language: str = "ko"
    carried: dict[str, Any] = field(default_factory=dict)  # session slots
    slot: SlotType | None = None  # the field's slot type (registry/_slots/)
    context: Any = None  # the planner's per-turn reading (place span, region, services …), when there is one
    required: bool = False  # the adapter cannot run without this field

    @property
    def low(self) -> str:
        return self.text.lower()

    @property
    def vocabulary(self) -> str | None:
        return self.slot.vocabulary if self.slot is not None else None


Reader = Callable[[ReadRequest], Any]
READERS: Registry[Reader] = Registry("slot reader")
reader = READERS.register


# -- shaping a value the way the field wants it --------------------------------------------------


def shape_number(req: ReadRequest, value: int, width: int) -> Any:
    """``value`` as the field's type: a number for integers, else zero-padded text (``x-format``
    ``m`` keeps it unpadded)."""
    if req.prop.get("type") == "integer":
        return value
    if req.prop.get("x-format") == "m":
        return str(value)
    return f"{value:0{width}d}"


def shape_date(req: ReadRequest, d: dt.date) -> str:
    fmt = req.prop.get("x-format")
    if req.prop.get("format") == "date" or fmt == "yyyy-mm-dd":
        return d.isoformat()
    if fmt == "yyyymmdd" or "8" in req.prop.get("pattern", ""):
        return d.strftime("%Y%m%d")
    if fmt == "yyyymm":
        return d.strftime("%Y%m")
    return d.isoformat()


def shape_time(req: ReadRequest, t: dt.time) -> str:
    if req.prop.get("x-format") == "hhmm" or "{4}" in req.prop.get("pattern", ""):
        return t.strftime("%H%M")
    return t.strftime("%H:%M")


def normalise(req: ReadRequest, value: Any) -> Any:
    """The slot type's declared normalisations, in order."""
    if not isinstance(value, str) or req.slot is None:
        return value
    for step in req.slot.normalise:
        if step == "strip_spaces":
            value = "".join(value.split())
        elif step == "digits":
            value = "".join(ch for ch in value if ch.isdigit())
        elif step == "upper":
            value = value.upper()
        elif step == "lower":
            value = value.lower()
    return value


# -- the readers ----------------------------------------------------------------------------------


@reader("year", doc="A year: 「2025년」, 올해/내년/작년/재작년, this/next/last year (the calendar vocabulary).")
def read_year(req: ReadRequest) -> Any:
    from .dates import year_in

    year = year_in(req.text, req.now)
    if year is None:
        # A field that asks for a year reads a bare one too (「2025 소득세」, "my 2025 tax return").
        m = re.search(r"(?<![\d.\-/:])((?:19|20)\d{2})(?![\d.\-/:])", req.text)
        year = int(m.group(1)) if m else None
    if year is None:
        return None
    return year if req.prop.get("type") == "integer" else str(year)


@reader("month", doc="A month: 「5월」, 오월/시월, 이번 달/다음 달, a holiday's month (어린이날 → 5), \"in May\" (x-format mm | m | yyyymm).")
def read_month(req: ReadRequest) -> Any:
    from .dates import month_in, year_in

    month = month_in(req.text, req.now)
    if month is None:
        return None
    if req.prop.get("x-format") == "yyyymm":
        year = year_in(req.text, req.now) or req.now.year
        return f"{year:04d}{month:02d}"
    return shape_number(req, month, 2)


@reader("date", doc="A day: 오늘/내일/모레, a weekday, 「다음 주 월요일」, 「3일 뒤」, 「5월 5일」, 2026-12-24, a holiday (x-format yyyymmdd | yyyy-mm-dd).")
def read_date(req: ReadRequest) -> Any:
    from .dates import date_in

    d = date_in(req.text, req.now)
    return shape_date(req, d) if d else None


@reader("time", doc="A time of day: 「오후 3시」, 「3시 반」, 15:30, 3pm, 아침/저녁, 지금 (x-format hhmm).")
def read_time(req: ReadRequest) -> Any:
    from .dates import time_in

    t = time_in(req.text, req.now)
    return shape_time(req, t) if t else None


@reader("birth_date", doc="A date of birth in any common form (1992년 3월 4일, 1995.11.30, 92-03-04, 920304-1…), as YYYY-MM-DD.")
def read_birth_date(req: ReadRequest) -> Any:
    from .dates import birth_date_in

    d = birth_date_in(req.text, req.now)
    if d is None:
        return None
    return d.strftime("%Y%m%d") if req.prop.get("x-format") == "yyyymmdd" else d.isoformat()


@reader("count", doc="How many results: 「3곳만」, 「다섯 군데」, 「5개」, \"top 3\" (the counters vocabulary).")
def read_count(req: ReadRequest) -> Any:
    from .numbers import count_in

    n = count_in(req.text)
    return n if n is not None else None


@reader("amount", doc="An amount of money in won: 「3만 원」, 「40,000원」.")
def read_amount(req: ReadRequest) -> Any:
    from .numbers import amount_in

    return amount_in(req.text)


@reader("coordinates", doc="WGS84 coordinates the citizen types: a bare pair (35.1, 129.0) or labelled (위도 35.17 경도 129.07, lat/lon).")
def read_coordinates(req: ReadRequest) -> Any:
    from .numbers import coordinates_in

    point = coordinates_in(req.text)
    if point is None:
        return req.carried.get(req.slot.name) if req.slot is not None else None
    slot = req.slot.name if req.slot is not None else req.name
    if slot == "latitude":
        return point[0]
    if slot == "longitude":
        return point[1]
    return None


@reader("pattern", doc="The slot type's own regular expression (pattern): its first group, or the whole match, normalised.")
def read_pattern(req: ReadRequest) -> Any:
    import re

    if req.slot is None or not req.slot.pattern:
        return None
    m = re.search(req.slot.pattern, req.text)
    if not m:
        return None
    return normalise(req, m.group(1) if m.groups() else m.group(0))


@reader("person_name", doc="A name only when stated as one (「이름은 홍길동」, 「홍길동 1990-01-01」), never a guess.")
def read_person_name(req: ReadRequest) -> Any:
    from .names import person_name_in

    return person_name_in(req.text)


@reader("vocabulary", doc="A closed vocabulary: the slot type's vocabulary maps citizens' words to a label, the field's enum / x-enum-labels to its code.")
def read_vocabulary(req: ReadRequest) -> Any:
    from .labels import read_label

    return read_label(req)


@reader("region", doc="A 시·도 / 시·군·구 / region name or code from every name of the official code table and the landmarks (수영구 → 부산).")
def read_region(req: ReadRequest) -> Any:
    from .places import read_region_value

    return read_region_value(req)


@reader("place", doc="A place span, whole: a landmark with its suffix, a 동, a road with its building number; never a predicate or politeness.")
def read_place(req: ReadRequest) -> Any:
    from .places import read_place_value

    return read_place_value(req)


@reader("product", doc="A product or medicine name, whole (판콜에이, 게보린이 → 게보린), without dosage forms or request words; English names mapped.")
def read_product(req: ReadRequest) -> Any:
    from .names import read_product_value

    return read_product_value(req)


@reader("keyword", doc="A search word in the citizen's words; with a vocabulary (welfare), a word of it named in the request.")
def read_keyword(req: ReadRequest) -> Any:
    from .names import read_keyword_value

    return read_keyword_value(req)


@reader("title", doc="A title, whole (소년이 온다, 작별하지 않는다): quoted or bracketed, else the words before 책/소설 … or 누가 쓴/출판사/대출 … (the slot's vocabulary), predicates and all.")
def read_title(req: ReadRequest) -> Any:
    from .names import read_title_value

    return read_title_value(req)


@reader("labelled", doc="A value the citizen introduces with one of the vocabulary's labels (「제출할 곳은 신한은행이야」 → 신한은행, \"purpose: a bank loan\"); nothing unlabelled is read.")
def read_labelled(req: ReadRequest) -> Any:
    from . import vocab
    from .names import labelled_value

    labels = vocab.words(req.vocabulary, "labels") if req.vocabulary else frozenset()
    return labelled_value(req.text, labels, int(req.prop.get("maxLength") or 100)) if labels else None


@reader("stop", doc="A stop's name as on the sign: 「하단역 정류장」 → 하단역.")
def read_stop(req: ReadRequest) -> Any:
    from .names import read_stop_value

    return read_stop_value(req)


@reader("text", doc="Free text in the citizen's own words: the request itself, when the field is required.")
def read_text(req: ReadRequest) -> Any:
    if req.prop.get("enum"):
        return None
    return req.text if req.prop.get("type", "string") == "string" and req.required else None


@reader("quantity", doc="A quantity the request is about (조문객 200명, 3일장), never a result limit; the field's x-unit picks the counter.")
def read_quantity(req: ReadRequest) -> Any:
    from .numbers import quantity_in

    n = quantity_in(req.text, req.prop.get("x-unit"))
    if n is None:
        return None
    return n if req.prop.get("type") in ("integer", "number") else str(n)


@reader("day_code", doc="A weekday or holiday as the field's code: x-enum-labels (월요일 … 공휴일) or x-format weekday-mon1 | weekday-sun1 (8 a holiday).")
def read_day_code(req: ReadRequest) -> Any:
    from .dates import day_kind_in
    from .labels import typed

    kind = day_kind_in(req.text, req.now)
    if kind is None:
        return None
    labels = req.prop.get("x-enum-labels")
    if labels:
        from . import vocab

        holiday = vocab.words(req.vocabulary or "day_kinds", "holiday")
        weekday_words = {w for w, n in vocab.calendar().get("weekdays", {}).items() if n == kind}
        for code, label in labels.items():
            label = str(label)
            if kind == "holiday" and any(w in label for w in holiday):
                return typed(code, req.prop.get("enum", [code]))
            if kind != "holiday" and label.lower() in weekday_words:
                return typed(code, req.prop.get("enum", [code]))
        return None
    fmt = req.prop.get("x-format", "weekday-mon1")
    if isinstance(kind, str):  # "holiday": the one day kind that is not a weekday number
        value = 8
    elif fmt == "weekday-sun1":
        value = (kind + 1) % 7 + 1
    else:
        value = kind + 1
    return value if req.prop.get("type") == "integer" else str(value)


@reader("route_number", doc="A bus route number as on the bus: 1003번, 5번 버스, 첨단09, 급행1, 5-1번, \"bus 1003\"; never the city word, never 「3번 출구」.")
def read_route_number(req: ReadRequest) -> Any:
    from .transit import route_number_in

    return route_number_in(req.text, bare=req.required)


@reader("flight_number", doc="A flight number: KE082, OZ 8915 → OZ8915, 7C1101, 「대한항공 082편」 → KE082 (the airlines vocabulary).")
def read_flight_number(req: ReadRequest) -> Any:
    from .transit import flight_number_in

    return flight_number_in(req.text)


def _trip_end(req: ReadRequest, which: int) -> Any:
    from .labels import match_labels, resolve_enum, typed
    from .transit import pair_in

    pair = pair_in(req.text)
    if pair is None:
        return None
    name = pair[which]
    labels = req.prop.get("x-enum-labels")
    if labels:
        code = match_labels(name, {str(k): str(v) for k, v in labels.items()}, None)
        if code is None:
            code = resolve_enum(req.prop, [name])
        return typed(code, req.prop.get("enum", [code])) if code is not None else None
    if req.prop.get("enum"):
        return resolve_enum(req.prop, [name])
    return name


@reader("origin", doc="Where a trip starts, read as a pair with its destination: 「대전에서 부산 가는 KTX」, 「서울→광주」, \"from Seoul to Busan\".")
def read_origin(req: ReadRequest) -> Any:
    return _trip_end(req, 0)


@reader("destination", doc="Where a trip goes, read as a pair with its origin: 「대전에서 부산 가는 KTX」 → 부산, 「제주까지」.")
def read_destination(req: ReadRequest) -> Any:
    return _trip_end(req, 1)


@reader("facility", doc="A school, apartment complex or facility name, whole: 해운대초 → 해운대초등학교, 래미안 원베일리, 사하구립도서관 (the slot's vocabulary).")
def read_facility(req: ReadRequest) -> Any:
    from .facilities import facility_in, kind_of

    if req.slot is None:
        return None
    return facility_in(req.text, kind_of(req.slot.name, req.vocabulary), req.vocabulary or "facility_names")


__all__ = ["READERS", "ReadRequest", "Reader", "normalise", "reader", "shape_date", "shape_number", "shape_time"]
