"""The declarations Mock's calendar step needs (wire/calendar.py), checked at build:
every ``x-datetime`` names a known format, and every fixture of an adapter that declares one says
the moment its body speaks of as now (``as_of``, or ``recorded_on``) — else Mock could not move
it to today and would show a forecast for a day long past."""

from __future__ import annotations

from typing import Any

from ummaya.model.manifest import DATETIME_FORMATS

from .loader import LoadedManifest, Problem


def _datetime_fields(schema: Any, loc: tuple[Any, ...]) -> list[tuple[tuple[Any, ...], Any]]:
    """(location, value) of every x-datetime in the output schema's properties and item properties."""
    out: list[tuple[tuple[Any, ...], Any]] = []
    props = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(props, dict):
        return out
    for name, p in props.items():
        if not isinstance(p, dict):
            continue
        if "x-datetime" in p:
            out.append((loc + ("properties", name, "x-datetime"), p["x-datetime"]))
        if isinstance(p.get("items"), dict):
            out += _datetime_fields(p["items"], loc + ("properties", name, "items"))
    return out


def check_datetime_fields(manifests: list[LoadedManifest]) -> list[Problem]:
    problems: list[Problem] = []
    for lm in manifests:
        # one adapter's verdict, kept in its state (it reads the adapter alone)
        problems += [Problem(*p) for p in lm.derived("datetime", _check_one, lm)]
    return problems


def _check_one(lm: LoadedManifest) -> list[tuple[str, int, str]]:
    problems: list[Problem] = []
    m, src = lm.manifest, lm.source
    fields = _datetime_fields(m.output_schema, ("output_schema",))
    for loc, value in fields:
        if value not in DATETIME_FORMATS:
            problems.append(Problem(src.rel, src.line_of(loc), f"{'.'.join(map(str, loc))}: unknown format {value!r} "
                                    f"(one of: {', '.join(DATETIME_FORMATS)})"))
    if not fields:
        return [(p.path, p.line, p.message) for p in problems]
    for i, fx in enumerate(m.fixtures):
        has_rows = bool(fx.expected) and (fx.expected.get("items") or any(k != "items" and k != "total_count" for k in fx.expected))
        if has_rows and fx.as_of is None and fx.recorded_on is None:
            problems.append(Problem(src.rel, src.line_of(("fixtures", i)), f"fixtures.{i} ({fx.name}): the output declares "
                                    "x-datetime fields, so the fixture must say the moment its body speaks of as now "
                                    "(as_of: 2026-12-01T02:10:00+09:00): Mock moves it to today from there"))
    return [(p.path, p.line, p.message) for p in problems]
