"""The build's side of the extension points (runtime/extensions.py): every name a manifest uses
— an ``x-slot`` type, a ``derived_params`` expression, a field ``transform``, a ``postprocess`` — must
be registered, or it is a ``path:line`` error listing what is; and the published manifest schema
documents every ``x-`` key with the registered names."""

from __future__ import annotations

from typing import Any

from .loader import LoadedManifest, Problem


def registries() -> dict[str, Any]:
    from ummaya.runtime.extensions import discover

    return discover()


def check_extensions(lm: LoadedManifest, regs: dict[str, Any] | None = None) -> list[Problem]:
    from ummaya.runtime.dispatch.resolvers import resolver_expressions

    from .manifest import FieldMap, slot_types

    regs = regs or registries()
    m, src = lm.manifest, lm.source
    problems: list[Problem] = []
    known_slots = slot_types()
    for name, prop in (m.input_schema.get("properties") or {}).items():
        slot = prop.get("x-slot") if isinstance(prop, dict) else None
        if slot is not None and slot not in known_slots:
            problems.append(Problem(src.rel, src.line_of(("input_schema", "properties", name, "x-slot")), f"input_schema.properties.{name}: unknown x-slot '{slot}' (registered: {', '.join(sorted(known_slots))}; a new one is a @slot_extractor in runtime/plan/extractors.py)"))
    up = m.upstream
    if up is None:
        return problems
    expressions = resolver_expressions()
    for param, expr in up.derived_params.items():
        if expr not in expressions:
            problems.append(Problem(src.rel, src.line_of(("upstream", "derived_params", param)), f"upstream.derived_params.{param}: unknown resolver expression '{expr}' (registered: {', '.join(expressions)}; a new one is a @resolver in runtime/dispatch/resolvers.py)"))
    transforms = regs["transform"]
    for out_field, spec in up.fields.items():
        if isinstance(spec, FieldMap) and spec.transform:
            for t in (x.strip() for x in spec.transform.split("|")):
                if t not in transforms:
                    problems.append(Problem(src.rel, src.line_of(("upstream", "fields", out_field, "transform")), f"upstream.fields.{out_field}.transform: unknown transform '{t}' (registered: {', '.join(transforms)}; a new one is a @transform in runtime/dispatch/transforms.py)"))
    if up.postprocess and up.postprocess not in regs["post-processor"]:
        problems.append(Problem(src.rel, src.line_of(("upstream", "postprocess")), f"upstream.postprocess: unknown post-processor '{up.postprocess}' (registered: {', '.join(regs['post-processor'])}; a new one is a @postprocessor in runtime/dispatch/transforms.py)"))
    return problems


# x- keys an input field may carry, for the published schema: what each does, with an example.
X_KEYS: dict[str, dict[str, Any]] = {
    "x-slot": {
        "description": "The slot type the planner fills this field with (one registered extractor per type, shared by every adapter). coordinates, latitude, longitude, region_code, city_code and node_id come only from an earlier adapter's output (a locate adapter's provides, or a lookup).",
        "examples": ["place", "date", "year", "month"],
    },
    "x-format": {
        "description": "How a date, time, year or month is written for the upstream: yyyymmdd (20261201), yyyy-mm-dd (2026-12-01, also format: date), yyyymm (202612), yyyy (2026), mm (05), m (5), hhmm (1430).",
        "enum": ["yyyymmdd", "yyyy-mm-dd", "yyyymm", "yyyy", "mm", "m", "hhmm"],
        "examples": ["yyyymmdd", "mm"],
    },
    "x-code-slice": {
        "description": "Take [start, end) of a longer administrative code a locate adapter resolved (2-digit 시도, 5-digit 시군구 of a 10-digit 법정동 code).",
        "type": "array",
        "items": {"type": "integer", "minimum": 0},
        "minItems": 2,
        "maxItems": 2,
        "examples": [[0, 2], [0, 5]],
    },
    "x-day": {
        "description": "On an output row field (yyyymmdd): the day the row is about. The answer keeps only the rows of the day the citizen asked for (내일, 모레, a weekday, 주말) and says so plainly when the data does not cover it (runtime/turn/days.py).",
        "type": "boolean",
        "examples": [True],
    },
    "x-hour": {
        "description": "On an output row field (hhmm) beside an x-day field: the hour the row is about, used to name the span the data covers.",
        "type": "boolean",
        "examples": [True],
    },
    "x-enum-labels": {
        "description": "Code → the label citizens say, for an enum field the planner matches by label (e.g. a specialty code).",
        "type": "object",
        "additionalProperties": {"type": "string"},
        "examples": [{"D001": "내과", "D002": "소아청소년과"}],
    },
}


def document_x_keys(schema: dict[str, Any]) -> dict[str, Any]:
    """The manifest JSON Schema with every input-field ``x-`` key described (and the registered
    names listed), so an editor validating a manifest knows them."""
    from ummaya.runtime.dispatch.resolvers import RESOLVERS

    from .manifest import slot_types

    regs = registries()
    field_def: dict[str, Any] = {
        "type": "object",
        "description": "One input field: a JSON Schema property plus the planner's x- keys.",
        "properties": {k: dict(v) for k, v in X_KEYS.items()},
        "additionalProperties": True,
    }
    slot = field_def["properties"]["x-slot"]
    slot["enum"] = sorted(slot_types())
    slot["description"] += " Registered: " + " ".join(f"{n}: {regs['slot extractor'].meta(n)['doc']}" for n in regs["slot extractor"])
    defs = schema.setdefault("$defs", {})
    defs["InputField"] = field_def
    props = schema.get("properties", {})
    if "input_schema" in props:
        props["input_schema"] = {
            **props["input_schema"],
            "description": "JSON Schema (type: object) of the adapter's arguments; each property may carry x-slot, x-format, x-code-slice, x-enum-labels ($defs/InputField).",
            "properties": {"properties": {"type": "object", "additionalProperties": {"$ref": "#/$defs/InputField"}}},
        }
    up = defs.get("Upstream", {}).get("properties", {})
    if "derived_params" in up:
        up["derived_params"]["description"] = "Upstream parameter -> a registered resolver expression (runtime/dispatch/resolvers.py): " + "; ".join(
            f"{n}.{{{','.join(RESOLVERS.meta(n)['fields'])}}}: {RESOLVERS.meta(n)['doc']}" for n in RESOLVERS
        )
    if "postprocess" in up:
        up["postprocess"]["description"] = "A registered post-processor over the record list (runtime/dispatch/transforms.py): " + "; ".join(
            f"{n}: {regs['post-processor'].meta(n)['doc']}" for n in regs["post-processor"]
        )
    fm = defs.get("FieldMap", {}).get("properties", {})
    if "transform" in fm:
        fm["transform"]["description"] = "Registered transforms (runtime/dispatch/transforms.py), chained with |: " + "; ".join(
            f"{n}: {regs['transform'].meta(n)['doc']}" for n in regs["transform"]
        )
    return schema
