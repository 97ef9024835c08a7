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

from ummaya.codegen.manifest import Manifest

from ..plan.extractors import date_in

_WEEKEND = re.compile(r"주말|weekend", re.I)
_DOW = {"ko": "월화수목금토일", "en": ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")}


def asked_days(text: str, now: dt.datetime) -> list[dt.date]:
    """The day(s) a message names: 「주말」/"weekend" is Saturday and Sunday, else one day
    (오늘, 내일, 모레, 글피, a weekday, 「다음 주 월요일」, 「5월 5일」), else none."""
    if _WEEKEND.search(text):
        today = now.date()
        sat = today + dt.timedelta(days=(5 - today.weekday()) % 7)
        if today.weekday() == 6:  # on a Sunday, "this weekend" is today
            return [today]
        return [sat, sat + dt.timedelta(days=1)]
    d = date_in(text, now)
    return [d] if d is not None else []


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


def day_fields(m: Manifest) -> tuple[str | None, str | None]:
    """The output row fields marked ``x-day`` and ``x-hour`` (None when the adapter has none)."""
    items = (m.output_schema.get("properties") or {}).get("items") or {}
    props = (items.get("items") or {}).get("properties") or {} if isinstance(items, dict) else {}
    day = next((k for k, p in props.items() if isinstance(p, dict) and p.get("x-day") is True), None)
    hour = next((k for k, p in props.items() if isinstance(p, dict) and p.get("x-hour") is True), None)
    return day, hour


def _day_label(d: dt.date, language: str) -> str:
    if language == "ko":
        return f"{d.month}월 {d.day}일({_DOW['ko'][d.weekday()]})"
    return f"{_DOW['en'][d.weekday()]} {d.strftime('%b')} {d.day}"


def _row_label(row: dict[str, Any], day: str, hour: str | None, language: str) -> str:
    try:
        d = dt.datetime.strptime(str(row.get(day)), "%Y%m%d").date()
    except ValueError:
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
    wanted = {d.strftime("%Y%m%d") for d in days}
    kept = [r for r in rows if str(r.get(day)) in wanted]
    asked = ", ".join(_day_label(d, language) for d in days)
    first, last = _row_label(rows[0], day, hour, language), _row_label(rows[-1], day, hour, language)
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
    covered = {str(r.get(day)) for r in kept}
    missing = [d for d in days if d.strftime("%Y%m%d") not in covered]
    span = f"{_row_label(kept[0], day, hour, language)}–{_row_label(kept[-1], day, hour, language)}"
    if language == "ko":
        note = f"요청하신 {asked}의 자료입니다 (자료에 있는 {span})."
        if missing:
            note += " " + ", ".join(_day_label(d, language) for d in missing) + "의 자료는 없습니다."
    else:
        note = f"For {asked}, as you asked (the data has {span})."
        if missing:
            note += " There is no data for " + ", ".join(_day_label(d, language) for d in missing) + "."
    return scoped, note


__all__ = ["asked_days", "day_fields", "scope", "turn_days"]
