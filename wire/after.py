"""What the engine does with the records after the call, declared in the manifest.

Many services have no filter or order a citizen's question needs: the standard-data v2 sets are
filtered by address text only, TAGO's nearby stops and MOIS's bells come unordered, MPM's job
notices oldest first. ``upstream.coordinates`` and ``upstream.after`` declare, per manifest:

- ``positions``: each record's WGS84 position from its declared fields and coordinate system
  (``geo.to_wgs84``), kept as the computed values ``$latitude`` / ``$longitude`` that
  ``fields`` may map;
- ``match``: keep records whose fields contain the input's words (``all`` / ``any``) or are the
  input whole (``exact``), case and spacing ignored;
- ``nearest``: nearest first from the citizen's coordinates (haversine), ``$distance_km`` on
  each record, records past ``max_km`` or without a position dropped;
- ``sort``: by record fields (numbers as numbers, blanks last);
- ``limit``: top N (an input field, or a number).

A step's ``match`` (choosing which looked-up record to use) uses the same ``matches``; with
``prefer: closest`` (``choose``) the record that is the input whole, then one starting with it,
wins over the first listed — station and terminal lists where names contain one another.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ummaya.model.manifest import After, Coordinates, MatchRule

from .geo import haversine_km, number, to_wgs84
from .transforms import get_path

COMPUTED = ("$latitude", "$longitude", "$distance_km")
_SPACE = re.compile(r"\s+")


def _norm(text: Any) -> str:
    return _SPACE.sub("", str(text)).lower()


def _words(value: Any) -> list[str]:
    if isinstance(value, (list, tuple)):
        return [w for v in value for w in _words(v)]
    return [_norm(w) for w in str(value).split() if w.strip()]


def matches(record: Any, rule: MatchRule, args: Mapping[str, Any]) -> bool:
    """Whether ``record`` names the citizen's words in one of ``rule.fields`` (no input: True)."""
    value = args.get(rule.input)
    if value in (None, "", []):
        return True
    words = _words(value)
    if not words:
        return True
    if rule.words == "exact":
        whole = {"".join(words)} if not isinstance(value, (list, tuple)) else set(words)
        return any(_norm(t) in whole for f in rule.fields if (t := get_path(record, f)) is not None)
    for f in rule.fields:
        text = get_path(record, f)
        if text is None:
            continue
        hay = _norm(text)
        found = [w in hay for w in words]
        if (all(found) if rule.words == "all" else any(found)):
            return True
    return False


def closeness(record: Any, rule: MatchRule, args: Mapping[str, Any]) -> int:
    """How closely a matching record names the input: 0 a field is the input whole, 1 a field
    starts with it, 2 it is only contained (spacing and case ignored)."""
    whole = "".join(_words(args.get(rule.input) or ""))
    best = 2
    for f in rule.fields:
        text = get_path(record, f)
        if text is None or not whole:
            continue
        hay = _norm(text)
        if hay == whole:
            return 0
        if hay.startswith(whole):
            best = 1
    return best


def choose(records: list[Any], rule: MatchRule | None, args: Mapping[str, Any]) -> Any | None:
    """A step's record: the first that matches ``rule`` (no rule: the first), or with
    ``prefer: closest`` the closest match, ties in the upstream's order."""
    found = [r for r in records if rule is None or matches(r, rule, args)]
    if not found:
        return None
    if rule is None or rule.prefer == "first":
        return found[0]
    return min(found, key=lambda r: closeness(r, rule, args))  # min is stable: ties keep the order


def add_positions(records: list[Any], coords: Coordinates | None) -> list[Any]:
    """Each record with ``$latitude``/``$longitude`` (None when it has no usable position)."""
    if coords is None:
        return records
    out = []
    for rec in records:
        if not isinstance(rec, dict):
            out.append(rec)
            continue
        x, y = number(get_path(rec, coords.x)), number(get_path(rec, coords.y))
        lat = lon = None
        if x is not None and y is not None and not (x == 0 and y == 0):
            lat, lon = to_wgs84(coords.crs, x, y)
            lat, lon = round(lat, 7), round(lon, 7)
        out.append({**rec, "$latitude": lat, "$longitude": lon})
    return out


def _sort_value(v: Any) -> tuple[int, Any]:
    n = number(v)
    if n is not None:
        return (0, n)
    if v is None or (isinstance(v, str) and not v.strip()):
        return (2, "")
    return (1, str(v))


def limit_of(after: After, args: Mapping[str, Any]) -> int | None:
    if after.limit is None:
        return None
    if isinstance(after.limit, int):
        return after.limit
    value = args.get(after.limit)
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 else None


def apply_after(records: list[Any], after: After | None, args: Mapping[str, Any]) -> list[Any]:
    if after is None:
        return records
    rows = [r for r in records if all(matches(r, rule, args) for rule in after.match)]
    if after.nearest is not None:
        here = (number(args.get(after.nearest.latitude)), number(args.get(after.nearest.longitude)))
        if here[0] is not None and here[1] is not None:
            placed = []
            for r in rows:
                if not isinstance(r, dict) or r.get("$latitude") is None or r.get("$longitude") is None:
                    continue
                d = round(haversine_km(here, (r["$latitude"], r["$longitude"])), 3)  # type: ignore[arg-type]
                if after.nearest.max_km is None or d <= after.nearest.max_km:
                    placed.append({**r, "$distance_km": d})
            rows = sorted(placed, key=lambda r: r["$distance_km"])
    for key in reversed(after.sort):
        present = [r for r in rows if _sort_value(get_path(r, key.field))[0] < 2]
        blank = [r for r in rows if _sort_value(get_path(r, key.field))[0] == 2]
        present.sort(key=lambda r: _sort_value(get_path(r, key.field)), reverse=key.descending)
        rows = present + blank
    n = limit_of(after, args)
    return rows[:n] if n is not None else rows


def needs_whole_list(after: After | None) -> bool:
    """Whether the engine must see more than the upstream's first page to answer right."""
    return after is not None and bool(after.match or after.nearest or after.sort)
