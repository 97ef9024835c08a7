"""Link rule: manifests and fixtures agree with the operation's *documented* response.

A live adapter declares ``upstream.response_fields`` — the fields its operation's guide documents
for one record (``record``) and around the records (``envelope``, usually from the profile), with
the guide's name and version. Then:

1. every field a manifest maps (``upstream.fields`` sources; for post-processed adapters the
   documented category ``values`` too) must be documented — a mapping of a field the operation does
   not return is how ``nmc_emergency_rooms`` showed 권역응급의료센터 in Mock and nothing Live;
2. a fixture body may not contain fields the documented response lacks — a fixture that invents a
   field makes Mock look right while Live can never match it;
3. fields the live service masks (``masked``: NMC AED ``manager`` 김**, ``managerTel`` 010********)
   are masked in fixtures too — synthetic personal data looks the way the real service sends it.

Every problem is located (manifest file and line). Bodies are read with the dispatcher's own
envelope reader, so a fixture is judged in the shape the engine sees it.
"""

from __future__ import annotations

from collections.abc import Set
from typing import Any

from .loader import LoadedManifest, Problem
from ummaya.model.manifest import Manifest
from ummaya.wire.envelopes import default_record_path, read_response, records_of
from ummaya.wire.errors import UpstreamError

# Fields a pivot post-processor keeps from the rows besides the category values.
_PIVOT_KEEP = ("baseDate", "baseTime", "nx", "ny", "fcstDate", "fcstTime")


def _needs_fields(m: Manifest) -> bool:
    up = m.upstream
    return up is not None and up.callable and m.tier == "live"


def check_response_fields(lm: LoadedManifest, resolved: Manifest | None) -> list[Problem]:
    if resolved is None or not _needs_fields(resolved):
        return []
    src = lm.source
    up = resolved.upstream
    assert up is not None
    doc = up.response_fields
    if doc is None:
        return [
            Problem(
                src.rel,
                src.line_of(("upstream",)),
                "upstream.response_fields: a live adapter declares its operation's documented "
                "response fields (guide: {name, version}, record: [...])",
            )
        ]
    guide = f"{doc.guide.name} {doc.guide.version}"
    record = set(doc.record)
    allowed = record | (set(doc.values) | set(_PIVOT_KEEP) if up.postprocess else set())
    problems: list[Problem] = []
    rows = up.columns_to_rows
    if rows is not None:
        # The row keys are the engine's; every column they read is held to the guide.
        allowed = allowed | set(rows.columns) | {rows.number_field} | set(rows.keep)
        if rows.base is not None:
            allowed |= {rows.base.date_field} | ({rows.base.time_field} if rows.base.time_field else set())
        base_fields = [rows.base.field] if rows.base is not None and rows.base.field else []
        for key, template in rows.columns.items():
            names = template if isinstance(template, list) else [template.format(n=n) for n in rows.numbers]
            for column in [*names, *base_fields, *rows.keep]:
                if column not in record:
                    problems.append(Problem(src.rel, src.line_of(("upstream", "columns_to_rows", "columns", key)), f"upstream.columns_to_rows.columns.{key}: '{column}' is not in the documented response of this operation ({guide})"))
    computed = set()
    if up.coordinates is not None:
        computed |= {"$latitude", "$longitude"}
    if up.after is not None and up.after.nearest is not None:
        computed.add("$distance_km")
    for name, spec in up.fields.items():
        source = spec if isinstance(spec, str) else spec.source
        head = source.split(".", 1)[0]
        if source.startswith("$input."):
            # The call's own argument: an input field or a step's pick.
            known = set((resolved.input_schema or {}).get("properties", {})) | {k for st in up.chain() for k in st.pick}
            if source[len("$input."):] not in known:
                problems.append(Problem(src.rel, src.line_of(("upstream", "fields", name)), f"upstream.fields.{name}: '{source}' names no input field nor step pick ({', '.join(sorted(known)) or 'none'})"))
            continue
        if source.startswith("$"):
            if source not in computed:
                problems.append(Problem(src.rel, src.line_of(("upstream", "fields", name)), f"upstream.fields.{name}: '{source}' is computed only with {'upstream.after.nearest' if source == '$distance_km' else 'upstream.coordinates'} declared (computed values: $latitude, $longitude, $distance_km)"))
            continue
        if head not in allowed:
            problems.append(
                Problem(
                    src.rel,
                    src.line_of(("upstream", "fields", name)),
                    f"upstream.fields.{name}: '{source}' is not in the documented response of "
                    f"this operation ({guide})",
                )
            )
    problems += _fixture_problems(lm, resolved, record, set(doc.envelope), guide, set(doc.masked))
    return problems


def _fixture_problems(
    lm: LoadedManifest,
    m: Manifest,
    record: set[str],
    envelope: set[str],
    guide: str,
    masked: Set[str] = frozenset(),
) -> list[Problem]:
    up = m.upstream
    assert up is not None
    src = lm.source
    out: list[Problem] = []
    for i, fx in enumerate(m.fixtures):
        if fx.response is None or fx.expected is None:
            continue  # error bodies (gateway XML, HTTP errors) are the gateway's, not the operation's
        try:
            body = (lm.fixtures_dir / fx.response).read_bytes()
            parsed = read_response(up.envelope, fx.status, body)
            records = records_of(parsed, up.record_path if up.record_path is not None else default_record_path(up.envelope))
        except (OSError, UpstreamError):
            continue  # reported by the fixture check itself
        label = f"fixtures.{i} ({fx.name})"
        where = src.line_of(("fixtures", i, "response"))
        extra: dict[str, int] = {}
        bare: dict[str, int] = {}
        for n, rec in enumerate(records):
            if isinstance(rec, dict):
                for key, value in rec.items():
                    if key not in record:
                        extra.setdefault(key, n)
                    if key in masked and isinstance(value, str) and value.strip("- ") and "*" not in value:
                        bare.setdefault(key, n)
        if bare:
            names = ", ".join(f"'{k}' (record {n})" for k, n in sorted(bare.items()))
            out.append(
                Problem(src.rel, where, f"{label}: {names} unmasked — the live service masks it (e.g. 김**, 010********), so must the fixture")
            )
        if extra:
            names = ", ".join(f"'{k}' (record {n})" for k, n in sorted(extra.items()))
            out.append(
                Problem(src.rel, where, f"{label}: body has {names} which the documented response ({guide}) lacks")
            )
        if envelope:
            seen = _envelope_keys(parsed.document, {id(r) for r in records})
            unknown = sorted(seen - envelope - record)
            if unknown:
                out.append(
                    Problem(
                        src.rel,
                        where,
                        f"{label}: body envelope has {', '.join(map(repr, unknown))} which the "
                        f"documented response ({guide}) lacks",
                    )
                )
    return out


def _envelope_keys(node: Any, record_ids: set[int]) -> set[str]:
    keys: set[str] = set()
    stack = [node]
    while stack:
        cur = stack.pop()
        if id(cur) in record_ids:
            continue
        if isinstance(cur, dict):
            keys.update(str(k) for k in cur)
            stack.extend(cur.values())
        elif isinstance(cur, list):
            stack.extend(cur)
    return keys
