"""The day(s) a message names, and the output fields in which an adapter's rows carry a day.

Both are read before any turn stage: the dialogue asks them when a follow-up names another day
(「내일은?」: does this adapter serve days?), and the turn's project stage scopes a day-indexed
result to the day asked (runtime/turn/days.py). An adapter marks the row field of its day with
``x-day: true`` (``x-format`` yyyymmdd, the default, or yyyy-mm-dd) and of its hour with
``x-hour: true``.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from ummaya.model.manifest import Manifest

from .dates import date_in, names_weekend


def asked_days(text: str, now: dt.datetime) -> list[dt.date]:
    """The day(s) a message names: 「주말」/"weekend" is Saturday and Sunday, else one day
    (오늘, 내일, 모레, 글피, a weekday, 「다음 주 월요일」, 「5월 5일」), else none."""
    if names_weekend(text):
        today = now.date()
        sat = today + dt.timedelta(days=(5 - today.weekday()) % 7)
        if today.weekday() == 6:  # on a Sunday, "this weekend" is today
            return [today]
        return [sat, sat + dt.timedelta(days=1)]
    d = date_in(text, now)
    return [d] if d is not None else []


def row_props(m: Manifest) -> dict[str, Any]:
    items = (m.output_schema.get("properties") or {}).get("items") or {}
    return (items.get("items") or {}).get("properties") or {} if isinstance(items, dict) else {}


def day_fields(m: Manifest) -> tuple[str | None, str | None]:
    """The output row fields marked ``x-day`` and ``x-hour`` (None when the adapter has none)."""
    props = row_props(m)
    day = next((k for k, p in props.items() if isinstance(p, dict) and p.get("x-day") is True), None)
    hour = next((k for k, p in props.items() if isinstance(p, dict) and p.get("x-hour") is True), None)
    return day, hour


_DAY_FORMATS = {"yyyymmdd": "%Y%m%d", "yyyy-mm-dd": "%Y-%m-%d"}


def day_format(m: Manifest, day: str) -> str:
    """How the x-day field writes its day (its ``x-format``: yyyymmdd, the default, or yyyy-mm-dd)."""
    fmt = (row_props(m).get(day) or {}).get("x-format", "yyyymmdd")
    return _DAY_FORMATS.get(fmt, "%Y%m%d")


__all__ = ["asked_days", "day_fields", "day_format", "row_props"]
