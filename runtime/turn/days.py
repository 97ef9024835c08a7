"""The day the citizen asked about, and a day-indexed result scoped to it.

A forecast answers "what about 모레?" only if the answer shows 모레. Adapters whose output rows are
about a day mark that field in their ``output_schema`` with ``x-day: true`` (``yyyymmdd``), and the
hour field, when there is one, with ``x-hour: true`` (``hhmm``). When the citizen named a day in this
message — or in the conversation, for a follow-up that changes something else (「서울은?」 after
「모레 부산 날씨」) — the project stage keeps only that day's rows, for the model's evidence and the
citizen's answer alike. When the data does not reach that day, the answer says so plainly, first,
and shows what the data does cover instead of presenting it as the asked day.

The rule lives in the engine, so it holds for every planner and every such adapter.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from ummaya.model.manifest import Manifest

from ..understand.dates import month_in, year_in
from ..understand.days_asked import asked_days, day_fields, day_format
from ..understand.days_asked import row_props as _row_props

_DOW = {"ko": "월화수목금토일", "en": ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")}


def turn_days(ctx: Any) -> list[dt.date]:
    """The days this turn is about: named in the message, else carried by the conversation when
    the message continues it (an answer to the engine's question, a follow-up, a topic switch)."""
    days = asked_days(ctx.request, ctx.clock)
    if days:
        return days
    frame, state = ctx.frame, ctx.dialogue
    if frame is None or state is None or frame.kind == "new" or not getattr(state, "days", None):
        return []
    out = []
    for s in state.days:
        try:
            out.append(dt.date.fromisoformat(s))
        except ValueError:
            continue
    return out


def name_field(m: Manifest) -> str | None:
    """The output row field marked ``x-name``: the row's own name (a holiday's 「추석」)."""
    return next((k for k, p in _row_props(m).items() if isinstance(p, dict) and p.get("x-name") is True), None)


def _row_day(row: dict[str, Any], day: str, fmt: str) -> dt.date | None:
    try:
        return dt.datetime.strptime(str(row.get(day)), fmt).date()
    except ValueError:
        return None


def _day_label(d: dt.date, language: str) -> str:
    if language == "ko":
        return f"{d.month}월 {d.day}일({_DOW['ko'][d.weekday()]})"
    return f"{_DOW['en'][d.weekday()]} {d.strftime('%b')} {d.day}"


def _row_label(row: dict[str, Any], day: str, hour: str | None, language: str, fmt: str = "%Y%m%d") -> str:
    d = _row_day(row, day, fmt)
    if d is None:
        return str(row.get(day))
    h = str(row.get(hour) or "")[:2] if hour else ""
    if language == "ko":
        return f"{d.month}월 {d.day}일" + (f" {h}시" if h else "")
    return f"{d.strftime('%b')} {d.day}" + (f" {h}:00" if h else "")


def scope(m: Manifest, output: Any, days: list[dt.date], language: str) -> tuple[Any, str | None]:
    """``output`` kept to the asked days, and the one plain line the answer opens with (None when
    nothing needs saying). Output of an adapter without an ``x-day`` field is returned unchanged."""
    day, hour = day_fields(m)
    if not days or day is None or not isinstance(output, dict) or not isinstance(output.get("items"), list):
        return output, None
    rows = [r for r in output["items"] if isinstance(r, dict)]
    if not rows:
        return output, None
    fmt = day_format(m, day)
    wanted = set(days)
    kept = [r for r in rows if _row_day(r, day, fmt) in wanted]
    asked = ", ".join(_day_label(d, language) for d in days)
    first, last = _row_label(rows[0], day, hour, language, fmt), _row_label(rows[-1], day, hour, language, fmt)
    if not kept:
        if language == "ko":
            note = (f"요청하신 {asked}의 자료는 이 조회 결과에 없습니다. 이 자료는 {first}부터 {last}까지만 "
                    f"다룹니다. 아래는 그 기간의 자료입니다.")
        else:
            note = (f"The data does not cover {asked}, the day you asked about: it runs from {first} to {last} "
                    f"only. Below is what it does cover.")
        return output, note
    scoped = dict(output, items=kept)
    if "total_count" in scoped:
        scoped["total_count"] = len(kept)
    covered = {_row_day(r, day, fmt) for r in kept}
    missing = [d for d in days if d not in covered]
    span = f"{_row_label(kept[0], day, hour, language, fmt)}–{_row_label(kept[-1], day, hour, language, fmt)}"
    if language == "ko":
        note = f"요청하신 {asked}의 자료입니다 (자료에 있는 {span})."
        if missing:
            note += " " + ", ".join(_day_label(d, language) for d in missing) + "의 자료는 없습니다."
    else:
        note = f"For {asked}, as you asked (the data has {span})."
        if missing:
            note += " There is no data for " + ", ".join(_day_label(d, language) for d in missing) + "."
    return scoped, note


def narrow(m: Manifest, output: Any, request: str, now: dt.datetime, language: str) -> tuple[Any, str | None]:
    """A day-indexed list kept to what the request names besides a day: the rows of the month it
    names (「5월에 공휴일 며칠」), or the rows it names by their ``x-name`` (「추석 연휴 언제야」).
    A list that covers the month but has none of its rows becomes empty (no holiday in July); one
    that does not reach the month is shown whole, said plainly first. Applied only when no day was
    asked (``scope`` does that)."""
    if not isinstance(output, dict) or not isinstance(output.get("items"), list):
        return output, None
    rows = [r for r in output["items"] if isinstance(r, dict)]
    if not rows:
        return output, None
    named_out, note = by_name(m, output, request, language)
    if note is not None:
        return named_out, note
    day, _hour = day_fields(m)
    month = month_in(request, now) if day is not None else None
    if day is None or month is None:
        return output, None
    fmt = day_format(m, day)
    dated = [(r, _row_day(r, day, fmt)) for r in rows]
    days = [d for _, d in dated if d is not None]
    if not days:
        return output, None
    year = year_in(request, now) or min(days).year
    start = dt.date(year, month, 1)
    end = (dt.date(year + (month == 12), month % 12 + 1, 1) - dt.timedelta(days=1))
    kept = [r for r, d in dated if d is not None and start <= d <= end]
    label = f"{month}월" if language == "ko" else start.strftime("%B")
    if not kept and not (min(days) <= end and max(days) >= start):
        note = (f"요청하신 {label}의 자료는 이 조회 결과에 없습니다. 아래는 이 자료가 다루는 기간의 자료입니다." if language == "ko"
                else f"The data does not cover {label}, which you asked about. Below is what it does cover.")
        return output, note
    note = f"요청하신 {label}의 자료만 보여 드립니다." if language == "ko" else f"Only {label}, as you asked."
    return _with(output, kept), note


def by_name(m: Manifest, output: Any, request: str, language: str) -> tuple[Any, str | None]:
    """The rows the request names by their own ``x-name`` (「추석 연휴 언제야」), with the note that
    says so; the output unchanged and no note when it names none. It goes before a day: the day a
    reader derives from the same name (the next 추석) is no day the citizen asked about."""
    if not isinstance(output, dict) or not isinstance(output.get("items"), list):
        return output, None
    named = _named_rows(m, [r for r in output["items"] if isinstance(r, dict)], request)
    if not named:
        return output, None
    label = ", ".join(dict.fromkeys(str(r.get(name_field(m) or "")) for r in named))
    note = f"요청하신 '{label}'의 날만 보여 드립니다." if language == "ko" else f"Only the days of '{label}', as you asked."
    return _with(output, named), note


def _named_rows(m: Manifest, rows: list[dict[str, Any]], request: str) -> list[dict[str, Any]] | None:
    """The rows whose own name (x-name) the request says, or None when it says none of them."""
    field = name_field(m)
    if field is None:
        return None
    text = re.sub(r"\s+", "", request)
    names = {str(r.get(field)) for r in rows if r.get(field)}
    said = [n for n in names if len(n) >= 2 and re.sub(r"\s+", "", n) in text]
    if not said:
        return None
    return [r for r in rows if any(n in str(r.get(field) or "") for n in said)]


def _with(output: dict[str, Any], rows: list[dict[str, Any]]) -> dict[str, Any]:
    out = dict(output, items=rows)
    if "total_count" in out:
        out["total_count"] = len(rows)
    return out


__all__ = ["asked_days", "day_fields", "narrow", "scope", "turn_days"]
