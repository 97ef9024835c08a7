"""Which day, month, year or time a request names — one reader of "when" for every part of the engine.

The planner's date fields, the answer's day scope (turn/days.py) and the dialogue's "does this
message name a new time?" all ask this module, so they never disagree. The words (오늘, 모레, 오월,
시월, 어린이날, 추석, next month …) and what they stand for are the calendar vocabulary
(registry/_vocab/calendar.yaml, lunar holidays by year from KASI); this module holds the forms
numbers take (「2026년 12월 24일」, 2026-12-24, 2026.12.24, 12/24, 「3일 뒤」, 「오후 3시 반」).
"""

from __future__ import annotations

import datetime as dt
import re
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from . import grammar, table, vocab

_YEAR_BARE = re.compile(r"(?<![\d.\-/])(20\d\d)(?![\d.\-/])")
_YMD_COMPACT = re.compile(r"(?<!\d)((?:19|20)\d{2})(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])(?!\d)")
_RRN_FRONT = re.compile(r"(?<!\d)(\d{2})(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])\s*-\s*[1-8]")
_YYMMDD = re.compile(r"(?<!\d)(\d{2})(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])(?!\d)")
_MD_SLASH = re.compile(r"(?<![\d./-])(1[0-2]|0?[1-9])/(3[01]|[12]\d|0?[1-9])(?![\d/])")
_EN_NUM = r"(\d{1,3}|one|two|three|four|five|six|seven|eight|nine|ten|a couple of|a few|a)"
_EN_AGO = re.compile(rf"\b{_EN_NUM}\s+(days?|weeks?)\s+(ago|later|from now)\b")
_EN_IN = re.compile(rf"\bin\s+{_EN_NUM}\s+(days?|weeks?)\b")
_HHMM = re.compile(r"(?<![\d:])([01]?\d|2[0-3]):([0-5]\d)(?![\d:])")
_AMPM = re.compile(r"\b(\d{1,2})(?::(\d{2}))?\s*(am|pm|a\.m\.|p\.m\.)(?![a-z])")


@lru_cache(maxsize=4)
def _cal(generated: Path) -> dict[str, Any]:
    cal = vocab.calendar()
    out = dict(cal)
    # Longest first, so 재작년 wins over 작년 and 다다음 달 over 다음 달.
    for key in ("days", "weekdays", "weeks", "months", "relative_months", "relative_years", "times_of_day"):
        out[key] = dict(sorted(cal.get(key, {}).items(), key=lambda kv: -len(kv[0])))
    holidays: dict[str, tuple[str, Any]] = {}
    for h in cal.get("fixed_holidays", []):
        for name in (h["name"], *h.get("aliases", []), *h.get("en", [])):
            holidays[name.lower()] = ("fixed", h)
    for h in cal.get("lunar_holidays", []):
        for name in (h["name"], *h.get("aliases", []), *h.get("en", [])):
            holidays[name.lower()] = ("lunar", h)
    out["holidays"] = dict(sorted(holidays.items(), key=lambda kv: -len(kv[0])))
    return out


def _c() -> dict[str, Any]:
    return _cal(table.folder())


_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyz")
_KO_BEFORE = frozenset(" \t\n,.!?~(")


def _has_word(low: str, word: str) -> bool:
    """``word`` in ``low`` as a word of its own: English at word boundaries, Korean at a word start
    (a particle may follow). String search, no regex: this runs per calendar word."""
    at = low.find(word)
    while at >= 0:
        before = low[at - 1] if at else " "
        if word.isascii():
            after = low[at + len(word)] if at + len(word) < len(low) else " "
            if before not in _LETTERS and after not in _LETTERS:
                return True
        elif before in _KO_BEFORE:
            return True
        at = low.find(word, at + 1)
    return False


def _first(low: str, table_: dict[str, int]) -> int | None:
    for word, value in table_.items():
        if _has_word(low, word):
            return value
    return None


# -- holidays ---------------------------------------------------------------------------------------


@lru_cache(maxsize=4)
def _rel_month_day(generated: Path) -> re.Pattern[str]:
    """「지난달 25일」: a relative month word of the calendar and a day of that month."""
    words = sorted(_cal(generated).get("relative_months", {}), key=len, reverse=True)
    alt = "|".join(re.escape(w).replace("\\ ", r"\s*") for w in words if not w.isascii()) or "(?!)"
    return re.compile(rf"({alt})\s*(\d{{1,2}})\s*" + grammar.DAY_UNIT)


def holiday_in(text: str) -> tuple[str, Any] | None:
    low = text.lower()
    for name, entry in _c()["holidays"].items():
        if not _has_word(low, name):
            continue
        if len(name) == 1:  # 「설」 alone or with a particle, never inside 설명 or 설치
            if not re.search(rf"(?:^|\s){name}(?:$|[\s,.!?~]|{grammar.ONE_SYLLABLE_PARTICLE})", low):
                continue
        return entry
    return None


def holiday_date(entry: tuple[str, Any], today: dt.date) -> dt.date | None:
    """The holiday's next day on or after ``today`` (its main day: 설날 and 추석 are the middle one)."""
    kind, h = entry
    if kind == "fixed":
        for year in (today.year, today.year + 1):
            try:
                d = dt.date(year, h["month"], h["day"])
            except ValueError:
                return None
            if d >= today:
                return d
        return None
    for year in sorted(int(y) for y in h.get("dates", {})):
        days = [dt.date.fromisoformat(d) for d in h["dates"][str(year)]]
        main = days[len(days) // 2]
        if main >= today:
            return main
    return None


def holiday_month(entry: tuple[str, Any], today: dt.date) -> int | None:
    kind, h = entry
    if kind == "fixed":
        return int(h["month"])
    d = holiday_date(entry, today)
    if d is not None:
        return d.month
    years = sorted(int(y) for y in h.get("dates", {}))
    return dt.date.fromisoformat(h["dates"][str(years[-1])][len(h["dates"][str(years[-1])]) // 2]).month if years else None


def is_holiday(d: dt.date) -> bool:
    """A public holiday of the calendar vocabulary falls on ``d`` (fixed or lunar, as compiled)."""
    for kind, h in _c()["holidays"].values():
        if kind == "fixed":
            if (h.get("month"), h.get("day")) == (d.month, d.day):
                return True
        elif any(d.isoformat() in days for days in h.get("dates", {}).values()):
            return True
    return False


def day_kind_in(text: str, now: dt.datetime) -> int | Literal["holiday"] | None:
    """The day a request is about as a weekday (Monday 0) or ``"holiday"``: 일요일, 주말 (the coming
    Saturday, Sunday on a Sunday), 오늘/내일, 「다음 주 월요일」, a holiday by name, 공휴일/명절.
    Never from a time (「3시」) or a duration (「3일장」)."""
    from . import vocab

    low = text.lower()
    if any(_has_word(low, w) for w in vocab.words("day_kinds", "holiday")) or holiday_in(text) is not None:
        return "holiday"
    if names_weekend(text):
        return 6 if now.weekday() == 6 else 5
    if grammar.DATE_AMOUNT.search(text) and not (grammar.DATE_MD.search(text) or _first(low, _c()["weekdays"]) is not None):
        rest = grammar.DATE_AMOUNT.sub(" ", text)
    else:
        rest = text
    d = date_in(rest, now)
    if d is None:
        return None
    return "holiday" if is_holiday(d) else d.weekday()


# -- year --------------------------------------------------------------------------------------------


def year_in(text: str, now: dt.datetime) -> int | None:
    """The year a request names: 「2025년」, 「올해」, 「내년」, 「작년」 (and in English)."""
    m = grammar.DATE_YEAR.search(text) or grammar.DATE_YMD.search(text)
    if m:
        return int(m.group(1))
    low = text.lower()
    offset = _first(low, _c()["relative_years"])
    if offset is not None:
        return now.year + offset
    month_offset = _first(low, _c()["relative_months"])
    if month_offset is not None:  # 「다음 달」 in December is next year's January
        return _shift_month(now, month_offset)[0]
    m = _YEAR_BARE.search(text)
    if m and re.search(r"\b(?:in|for|of|year)\s+20\d\d\b", low):
        return int(m.group(1))
    return None


# -- month -------------------------------------------------------------------------------------------


def _shift_month(now: dt.datetime, offset: int) -> tuple[int, int]:
    index = now.year * 12 + (now.month - 1) + offset
    return index // 12, index % 12 + 1


_MAY_VERB = re.compile(r"\bmay\s+(?:i|we|you|he|she|they|it|be|have|take|need)\b")


def month_in(text: str, now: dt.datetime) -> int | None:
    """The month a request names: 「5월」, 오월/시월, 이번 달/다음 달/지난달, a holiday's month
    (어린이날 → 5, 추석 → 9), "in May"."""
    low = text.lower()
    offset = _first(low, _c()["relative_months"])
    if offset is not None:
        return _shift_month(now, offset)[1]
    m = grammar.DATE_YMD.search(text) or grammar.DATE_MD.search(text) or grammar.DATE_MONTH_ANY.search(text)
    if m:
        return int(m.group(2) if m.re in (grammar.DATE_YMD,) else m.group(1))
    for word, month in _c()["months"].items():
        if word.isascii():
            if _has_word(low, word) and not (word == "may" and _MAY_VERB.search(low)):
                return month
        elif _has_word(low, word):
            return month
    entry = holiday_in(text)
    if entry is not None:
        return holiday_month(entry, now.date())
    return None


# -- date --------------------------------------------------------------------------------------------


def _told_as_past(text: str, end: int) -> bool:
    """Whether the clause a day without a year ends is told in the past tense: the first predicate
    after it is past (「11월 20일에 이사했는데」). A day the verb takes as its target (「12월 20일로
    예약했는데」: booked in the past, for that day) is no past event."""
    rest = text[end:]
    if rest.lstrip().startswith(grammar.TARGET_PARTICLES):
        return False
    for word in grammar.eojeols(rest)[:3]:
        if grammar.past_tense(word):
            return True
        if grammar.is_predicate(word):
            return False
    return False


def _weekday_after(today: dt.date, wd: int) -> dt.date:
    return today + dt.timedelta(days=(wd - today.weekday()) % 7)


_WEEK_DAY = re.compile(r"(?P<week>\S+?)\s*주\s*(?P<day>[월화수목금토일])(?:요일)?")
_WEEK_DAY_EN = re.compile(r"\b(this|next|last)\s+(monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b")


def date_in(text: str, now: dt.datetime) -> dt.date | None:
    """A calendar day: a full date (2026년 12월 24일, 2026-12-24, 2026.12.24), 「5월 5일」, 12/24,
    「다음 주 월요일」, 「3일 뒤」, 오늘/내일/모레/글피, a weekday, 주말's Saturday, a holiday."""
    today = now.date()
    low = text.lower()
    cal = _c()
    m: re.Match[str] | None  # each reader below tries its own pattern
    for m in (*grammar.DATE_YMD.finditer(text), *_YMD_COMPACT.finditer(text)):
        try:
            d = dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
        except ValueError:
            continue
        # A day asked about is near today; a date decades away is a date of birth (personal data,
        # read by the birth_date reader) or history, never the day a request is about.
        if today - dt.timedelta(days=366) <= d <= today + dt.timedelta(days=3 * 366):
            return d
    m = grammar.DATE_MD.search(text) or _MD_SLASH.search(text)
    if m:
        try:
            d = dt.date(today.year, int(m.group(1)), int(m.group(2)))
        except ValueError:
            return None
        if _told_as_past(text, m.end()):
            # 「11월 20일에 이사했는데」: what happened on that day is past, so the last such day.
            return d if d <= today else d.replace(year=today.year - 1)
        return d if d >= today else d.replace(year=today.year + 1)
    monday = today - dt.timedelta(days=today.weekday())
    for m in _WEEK_DAY.finditer(text):
        weeks = cal["weeks"].get(m.group("week"))
        if weeks is not None:
            return monday + dt.timedelta(weeks=weeks, days=cal["weekdays"][m.group("day")])
    m = _WEEK_DAY_EN.search(low)
    if m:
        return monday + dt.timedelta(weeks=cal["weeks"][m.group(1)], days=cal["weekdays"][m.group(2)])
    m = grammar.DATE_IN_DAYS.search(text)
    if m:
        days = int(m.group(1))
        return today + dt.timedelta(days=-days if m.group(2) in grammar.BEFORE else days)
    m = grammar.DATE_IN_WEEKS.search(text)
    if m:
        weeks = int(m.group(1))
        return today + dt.timedelta(weeks=-weeks if m.group(2) in grammar.BEFORE else weeks)
    m = _rel_month_day(table.folder()).search(text)
    if m and (offset := _first(m.group(1).lower(), cal["relative_months"])) is not None:
        year, month = _shift_month(now, offset)
        try:
            return dt.date(year, month, int(m.group(2)))
        except ValueError:
            return None
    for month, day, en_year, _s, _e in english_dates(text):
        try:
            d = dt.date(en_year or today.year, month, day)
        except ValueError:
            continue
        if en_year is None and d < today - dt.timedelta(days=183):
            d = d.replace(year=today.year + 1)
        if en_year is None and d > today + dt.timedelta(days=183):
            d = d.replace(year=today.year - 1)
        return d
    m = _EN_AGO.search(low)
    if m:
        n = int(m.group(1)) if m.group(1).isdigit() else grammar.EN_NUMBERS.get(m.group(1), 1)
        unit = 7 if m.group(2).startswith("week") else 1
        sign = -1 if m.group(3) == "ago" else 1
        return today + dt.timedelta(days=sign * n * unit)
    m = _EN_IN.search(low)
    if m:
        n = int(m.group(1)) if m.group(1).isdigit() else grammar.EN_NUMBERS.get(m.group(1), 1)
        return today + dt.timedelta(days=n * (7 if m.group(2).startswith("week") else 1))
    offset = _first(low, cal["days"])
    if offset is not None:
        return today + dt.timedelta(days=offset)
    if any(_has_word(low, w) for w in cal.get("weekend", [])):
        return _weekday_after(today, 5)
    for word, wd in cal["weekdays"].items():
        if len(word) > 1 and _has_word(low, word):
            return _weekday_after(today, wd)
    entry = holiday_in(text)
    if entry is not None:
        return holiday_date(entry, today)
    return None


def names_weekend(text: str) -> bool:
    low = text.lower()
    return any(_has_word(low, w) for w in _c().get("weekend", []))


def names_day(text: str, now: dt.datetime) -> bool:
    """The message names a day or a time (a new "when" for a follow-up)."""
    return date_in(text, now) is not None or month_in(text, now) is not None or year_in(text, now) is not None or (
        time_in(text, now) is not None and not names_now(text))


def names_now(text: str) -> bool:
    low = text.lower()
    return any(_has_word(low, w) for w in _c().get("now", []))


# -- time of day -------------------------------------------------------------------------------------


def time_in(text: str, now: dt.datetime) -> dt.time | None:
    low = text.lower()
    cal = _c()
    afternoon = tuple(cal.get("afternoon", ()))
    m = grammar.DATE_HOUR.search(text)
    if m:
        hour = int(m.group(1)) % 24
        before = text[max(0, m.start() - 4): m.start()]
        if hour < 12 and any(w in before for w in afternoon):
            hour += 12
        minute = 30 if m.group(3) else int(m.group(2) or 0)
        return dt.time(hour, minute)
    m = _HHMM.search(text)
    if m:
        return dt.time(int(m.group(1)), int(m.group(2)))
    m = _AMPM.search(low)
    if m:
        hour = int(m.group(1)) % 12 + (12 if m.group(3).startswith("p") else 0)
        return dt.time(hour, int(m.group(2) or 0))
    named_hour = _first(low, cal["times_of_day"])
    if named_hour is not None:
        return dt.time(named_hour, 0)
    if names_now(text):
        return now.time().replace(second=0, microsecond=0)
    return None


# -- dates of birth ------------------------------------------------------------------------------------


def _century(yy: int, now: dt.datetime) -> int:
    return 2000 + yy if yy <= now.year % 100 else 1900 + yy


def birth_date_in(text: str, now: dt.datetime) -> dt.date | None:
    """A date of birth in any common form: 1992년 3월 4일, 1995.11.30, 1995-11-30, 19951130,
    92-03-04, 92년 3월 4일, 920304(-1…), "March 2, 1955"."""
    for month, day, year, _s, _e in english_dates(text):
        if year is not None:
            try:
                return dt.date(year, month, day)
            except ValueError:
                continue
    for rx, two_digit in ((grammar.DATE_YMD, False), (_YMD_COMPACT, False), (_RRN_FRONT, True), (grammar.DATE_YY_MD, True), (_YYMMDD, True)):
        for m in rx.finditer(text):
            y = int(m.group(1))
            if two_digit:
                y = _century(y, now)
            try:
                d = dt.date(y, int(m.group(2)), int(m.group(3)))
            except ValueError:
                continue
            if d <= now.date():
                return d
    return None


def dates_in(text: str, now: dt.datetime | None = None) -> set[tuple[int, int, int]]:
    """Every (year, month, day) a text may state as a date of birth (argument provenance compares
    personal dates in this normal form)."""
    now = now or dt.datetime.now(dt.timezone(dt.timedelta(hours=9)))
    out: set[tuple[int, int, int]] = set()
    for rx, two_digit in ((grammar.DATE_YMD, False), (_YMD_COMPACT, False), (_RRN_FRONT, True), (grammar.DATE_YY_MD, True), (_YYMMDD, True)):
        for m in rx.finditer(text):
            y = int(m.group(1))
            if two_digit:
                y = _century(y, now)
            out.add((y, int(m.group(2)), int(m.group(3))))
    for month, day, year, _s, _e in english_dates(text):
        if year is not None:
            out.add((year, month, day))
    return out


def spans(text: str) -> list[tuple[int, int]]:
    """Where the text states a time (dates, N일 뒤, hours): other readers never read these as
    places or names (「3일 뒤는?」 is a day, not a place)."""
    out = []
    for rx in (grammar.DATE_YMD, _YMD_COMPACT, grammar.DATE_MD, _MD_SLASH, grammar.DATE_IN_DAYS, grammar.DATE_IN_WEEKS, grammar.DATE_HOUR, _HHMM, grammar.DATE_MONTH_ANY, grammar.DATE_YEAR):
        out += [(m.start(), m.end()) for m in rx.finditer(text)]
    out += [(m.start(), m.end()) for m in grammar.DATE_AMOUNT.finditer(text)]
    return sorted(out)


def names_month(word: str) -> bool:
    """Whether one word names a month itself (구월, 9월): a value the month reader sends, never a
    topic. A holiday (광복절) is not: it is a day, and what a holiday adapter's text says."""
    return month_in(word, dt.datetime(2026, 1, 1)) is not None and holiday_in(word) is None


def names_time(word: str, now: dt.datetime | None = None) -> bool:
    """Whether one word, its particle taken off by the caller, says *when* (구월, 9월, 내일, 어린이날,
    주말, 오후): 「구월에 연휴 있어?」 carries 에 of time, not of place."""
    now = now or dt.datetime(2026, 1, 1)
    return any(f(word, now) is not None for f in (month_in, date_in, time_in)) or holiday_in(word) is not None


__all__ = ["birth_date_in", "date_in", "dates_in", "holiday_date", "holiday_in", "month_in", "names_day", "names_month", "names_now",
           "names_time", "names_weekend", "spans", "time_in", "year_in"]


@lru_cache(maxsize=4)
def _time_phrase_rx(generated: Path) -> re.Pattern[str]:
    cal = _cal(generated)
    words: set[str] = set()
    for key in ("days", "relative_months", "relative_years", "times_of_day"):
        words |= {w for w in cal.get(key, {}) if " " in w or len(w) >= 2}
    words |= {w for w in cal.get("weekend", [])} | set(cal.get("now", []))
    words |= {w for w in cal.get("weekdays", {}) if len(w) >= 2}
    alt = "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))
    return re.compile(rf"(?<![A-Za-z가-힣])(?:{alt})(?![A-Za-z])", re.I)


def without_time_words(text: str) -> str:
    """``text`` without the calendar's words and phrases (「다음 날」, "day after tomorrow"): what is
    left says *what*, not when."""
    return _time_phrase_rx(table.folder()).sub(" ", text)


@lru_cache(maxsize=4)
def _en_date_rx(generated: Path) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """("November 20[, 2026]", "2 March[ 1955]") from the calendar vocabulary's English month
    words (registry/_vocab/calendar.yaml ``months``, compiled by the build): the words are data,
    the two orders a date takes in English are grammar."""
    words = sorted((w for w in _cal(generated).get("months", {}) if w.isascii()), key=len, reverse=True)
    alt = "|".join(re.escape(w) for w in words) or "(?!)"
    return (re.compile(rf"\b({alt})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?(?:,?\s+((?:19|20)\d{{2}}))?\b", re.I),
            re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+({alt})\b\.?\s*,?\s*((?:19|20)\d{{2}})?\b", re.I))


def _en_month(word: str) -> int | None:
    return _c()["months"].get(word.lower().rstrip("."))


def english_dates(text: str) -> list[tuple[int, int, int | None, int, int]]:
    """(month, day, year or None, start, end) of every English date ("November 20", "2 March 1955")."""
    out = []
    md, dmy = _en_date_rx(table.folder())
    for m in md.finditer(text):
        month = _en_month(m.group(1))
        if month:
            out.append((month, int(m.group(2)), int(m.group(3)) if m.group(3) else None, m.start(), m.end()))
    for m in dmy.finditer(text):
        month = _en_month(m.group(2))
        if month:
            out.append((month, int(m.group(1)), int(m.group(3)) if m.group(3) else None, m.start(), m.end()))
    return out


def birth_spans(text: str) -> list[tuple[int, int]]:
    """Where a date of birth or a phone number is written (a name stated before one is a name)."""
    spans_ = []
    for rx in (grammar.DATE_YMD, _YMD_COMPACT, _RRN_FRONT, grammar.DATE_YY_MD, _YYMMDD):
        spans_ += [(m.start(), m.end()) for m in rx.finditer(text)]
    spans_ += [(m.start(), m.end()) for m in re.finditer(r"01[016789][- ]?\d{3,4}[- ]?\d{4}", text)]
    # An English date with its year ("born 14 May 1990"): a date of birth as much as 1990-05-14 is.
    spans_ += [(s, e) for _m, _d, year, s, e in english_dates(text) if year is not None]
    return sorted(_with_birth_label(text, s, e) for s, e in set(spans_))


def _with_birth_label(text: str, start: int, end: int) -> tuple[int, int]:
    """The span widened to the label that introduces it (「생년월일 1990-01-01」, "born 14 May 1990")
    and the suffix glued to it (「1965년 3월 15일생」): they name the citizen's own data, not a service
    (function_words.yaml birth_labels, birth_suffixes)."""
    from .vocab import fw

    for suffix in sorted(fw("birth_suffixes"), key=len, reverse=True):
        if text.startswith(suffix, end):
            end += len(suffix)  # 「15일생」: the 생 is the date's
            break
    before = text[:start].rstrip(" :,")
    low = before.lower()
    for label in sorted(fw("birth_labels"), key=len, reverse=True):
        if low.endswith(label) and (len(low) == len(label) or not low[-len(label) - 1].isalnum()):
            return (len(before) - len(label), end)
    return (start, end)
