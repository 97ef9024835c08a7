"""Mock on today's calendar: a replayed recording's own times are moved to the present.

A fixture is recorded on one day (``as_of``, default ``recorded_on``); replayed later, its forecast
for "tomorrow" would be for a day long past. After the fixture is parsed — the same reader and
projection as Live — this step moves every output field the manifest marks ``x-datetime: <format>``
(an observation hour, an issue time, the day a forecast row is for) by the same whole number of
days, so the recording's tomorrow is today's tomorrow. Nothing else in a record changes, the hour
of day stays, and the answer's Mock label says the recording was moved, once
(``CallOutcome.moved_from``). Live is never moved; a fixture without a day, or replayed on its own
day, is returned as it is. Which fields move is declared, never guessed from what a value looks like.

The shift keeps the recording's moment in the past: replayed at 01:00, a body taken at 02:10 moves
to yesterday, so an observation never claims an hour that has not come yet.
"""

from __future__ import annotations

import copy
import datetime as dt
from functools import lru_cache
from typing import Any

from ummaya.model.manifest import DATETIME_FORMATS, Fixture, Manifest

from .outcome import CallOutcome

KST = dt.timezone(dt.timedelta(hours=9), "KST")
# x-datetime formats: how the value is written (strftime), and whether it carries an hour.
FORMATS = {
    "yyyymmdd": "%Y%m%d",
    "yyyy-mm-dd": "%Y-%m-%d",
    "yyyymmddhhmm": "%Y%m%d%H%M",
    "yyyymmddhhmmss": "%Y%m%d%H%M%S",
    "yyyy-mm-dd hh:mm": "%Y-%m-%d %H:%M",
    "iso8601": None,  # datetime.fromisoformat / isoformat, offset kept
}
assert set(FORMATS) == set(DATETIME_FORMATS)


def anchor_of(fixture: Fixture) -> dt.datetime | None:
    """The moment the fixture's body speaks of as now, in KST (a plain date: its midnight)."""
    value = fixture.as_of if fixture.as_of is not None else fixture.recorded_on
    if value is None:
        return None
    if isinstance(value, dt.datetime):
        return (value if value.tzinfo else value.replace(tzinfo=KST)).astimezone(KST)
    return dt.datetime(value.year, value.month, value.day, tzinfo=KST)


def days_to_today(anchor: dt.datetime, now: dt.datetime) -> int:
    """Whole days that bring the recording's day to today, its moment kept in the past."""
    now = (now if now.tzinfo else now.replace(tzinfo=dt.timezone.utc)).astimezone(KST)
    days = (now.date() - anchor.date()).days
    if anchor + dt.timedelta(days=days) > now:
        days -= 1
    return days


def moving_fields(manifest: Manifest) -> tuple[dict[str, str], dict[str, str]]:
    """``x-datetime`` fields of the output: (top-level name → format, row name → format)."""
    props = manifest.output_schema.get("properties") or {}
    top = {k: p["x-datetime"] for k, p in props.items() if isinstance(p, dict) and p.get("x-datetime") in FORMATS}
    items = props.get("items")
    rows_schema = items.get("items") if isinstance(items, dict) else None
    rows = (rows_schema.get("properties") or {}) if isinstance(rows_schema, dict) else {}
    row = {k: p["x-datetime"] for k, p in rows.items() if isinstance(p, dict) and p.get("x-datetime") in FORMATS}
    return top, row


def move(value: Any, fmt: str, days: int) -> Any:
    """``value`` written in ``fmt``, ``days`` later; a value that is not in that form is left as is."""
    if not isinstance(value, str) or not value:
        return value
    return _moved(value, fmt, days)


@lru_cache(maxsize=4096)
def _moved(value: str, fmt: str, days: int) -> str:
    # A forecast body repeats a handful of dates over hundreds of rows (KMA: 3 days × 12 categories
    # × 24 hours), and strptime is slow: each distinct date is parsed once.
    pattern = FORMATS[fmt]
    try:
        if pattern is None:
            return (dt.datetime.fromisoformat(value) + dt.timedelta(days=days)).isoformat()
        return (dt.datetime.strptime(value, pattern) + dt.timedelta(days=days)).strftime(pattern)
    except ValueError:
        return value


def to_today(manifest: Manifest, fixture: Fixture, outcome: CallOutcome, now: dt.datetime) -> CallOutcome:
    """The Mock outcome with its declared times moved to today's calendar (module docstring)."""
    if outcome.tier != "mock" or outcome.status not in ("ok", "no_data") or not isinstance(outcome.output, dict):
        return outcome
    anchor = anchor_of(fixture)
    top, row = moving_fields(manifest)
    if anchor is None or not (top or row):
        return outcome
    days = days_to_today(anchor, now)
    if days == 0:
        return outcome
    output = copy.deepcopy(outcome.output)
    for name, fmt in top.items():
        if name in output:
            output[name] = move(output[name], fmt, days)
    items = output.get("items")
    if isinstance(items, list):
        for r in items:
            if isinstance(r, dict):
                for name, fmt in row.items():
                    if name in r:
                        r[name] = move(r[name], fmt, days)
    return outcome.model_copy(update={"output": output, "moved_from": anchor.date().isoformat()})


__all__ = ["FORMATS", "anchor_of", "days_to_today", "move", "moving_fields", "to_today"]
