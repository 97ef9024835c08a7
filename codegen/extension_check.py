"""The build's side of the extension points (wire/extensions.py): every name a manifest uses
— an ``x-slot`` type, a ``derived_params`` expression, a field ``transform``, a ``postprocess`` — must
be registered, or it is a ``path:line`` error listing what is; and the published manifest schema
documents every ``x-`` key with the registered names."""

from __future__ import annotations

from typing import Any

from .loader import LoadedManifest, Problem


def registries() -> dict[str, Any]:
    from ummaya.wire.extensions import discover

    return discover()


def resolver_names() -> list[str]:
    """The registered resolver expressions (what check_extensions accepts in derived_params)."""
    from ummaya.wire.resolvers import resolver_expressions

    return list(resolver_expressions())


def check_extensions(lm: LoadedManifest, regs: dict[str, Any] | None = None, slots: Any = None) -> list[Problem]:
    """Every name the manifest uses is declared: x-slot types (input and output fields, requires,
    provides) in the registry's slot table (registry/_slots/), resolvers, transforms and
    post-processors in the runtime's registries."""
    from ummaya.wire.resolvers import resolver_expressions

    from ummaya.model.manifest import FieldMap

    regs = regs or registries()
    m, src = lm.manifest, lm.source
    problems: list[Problem] = []
    if slots is not None:
        problems += check_slot_names(lm, slots)
    up = m.upstream
    if up is None:
        return problems
    expressions = resolver_expressions()
    for param, expr in up.derived_params.items():
        if expr not in expressions:
            problems.append(Problem(src.rel, src.line_of(("upstream", "derived_params", param)), f"upstream.derived_params.{param}: unknown resolver expression '{expr}' (registered: {', '.join(expressions)}; a new one is a @resolver in wire/resolvers.py)"))
    for step in up.chain():
        for param, expr in step.derived_params.items():
            if expr not in expressions:
                problems.append(Problem(src.rel, src.line_of(("upstream", "steps")), f"upstream.steps.{step.id}.derived_params.{param}: unknown resolver expression '{expr}' (registered: {', '.join(expressions)})"))
    transforms = regs["transform"]
    for out_field, spec in up.fields.items():
        if isinstance(spec, FieldMap) and spec.transform:
            for t in (x.strip() for x in spec.transform.split("|")):
                if t not in transforms:
                    problems.append(Problem(src.rel, src.line_of(("upstream", "fields", out_field, "transform")), f"upstream.fields.{out_field}.transform: unknown transform '{t}' (registered: {', '.join(transforms)}; a new one is a @transform in wire/transforms.py)"))
    if up.postprocess and up.postprocess not in regs["post-processor"]:
        problems.append(Problem(src.rel, src.line_of(("upstream", "postprocess")), f"upstream.postprocess: unknown post-processor '{up.postprocess}' (registered: {', '.join(regs['post-processor'])}; a new one is a @postprocessor in wire/transforms.py)"))
    return problems


# x- keys an input field may carry, for the published schema: what each does, with an example.
X_KEYS: dict[str, dict[str, Any]] = {
    "x-slot": {
        "description": "The slot type of this field (declared in registry/_slots/*.yaml): on an input field, how the planner fills it (the slot's shared reader and vocabulary); on an output field, the slot this field provides to later calls and to the session. A derived slot type comes from an earlier adapter's output (a locate adapter's provides), the session or an official code table, never from a guess.",
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
        "description": "On an output row field: the day the row is about (yyyymmdd, or yyyy-mm-dd with x-format beside it). The answer keeps only the rows of the day the citizen asked for (내일, 모레, a weekday, 주말) and says so plainly when the data does not cover it; with no day asked, a month the request names (「5월에」) keeps that month's rows (runtime/turn/days.py).",
        "type": "boolean",
        "examples": [True],
    },
    "x-name": {
        "description": "On an output row field: the row's own name (a holiday's 「추석」). When the request says one of the rows' names, the answer keeps those rows (「추석 연휴 언제야」 → 추석 only).",
        "type": "boolean",
        "examples": [True],
    },
    "x-datetime": {
        "description": "On an output field: a moment of the data itself — when it was measured or issued, or the day a forecast row is for — written in this format. Mock moves every such field by whole days from the fixture's as_of (else recorded_on) to today, keeping everything else as recorded, and says so once in its label (wire/calendar.py). Never on a calendar fact such as a holiday's date. The fixtures of an adapter that declares one must say their as_of.",
        "enum": ["yyyymmdd", "yyyy-mm-dd", "yyyymmddhhmm", "yyyymmddhhmmss", "yyyy-mm-dd hh:mm", "iso8601"],
        "examples": ["yyyymmdd", "iso8601"],
    },
    "x-hour": {
        "description": "On an output row field (hhmm) beside an x-day field: the hour the row is about, used to name the span the data covers.",
        "type": "boolean",
        "examples": [True],
    },
    "x-display": {
        "description": "On an output string field: how the engine shows upstream text (runtime/turn/display.py) — shape name (one line, no phone number, link or second sentence), line (one line) or text (line breaks kept), clipped to max characters (defaults: name 80, line 200, text 1000). A field without it is a line. Text that claims a completion or consent, or asks for personal data, is never shown.",
        "type": "object",
        "properties": {"shape": {"enum": ["name", "line", "text"]}, "max": {"type": "integer", "minimum": 1, "maximum": 5000}},
        "additionalProperties": False,
        "examples": [{"shape": "name", "max": 80}],
    },
    "x-personal": {
        "description": "A personal value (input or output field) besides those whose x-slot already is one (person_name, birth_date, phone …): argument provenance applies to it as an input, and stored traces mask it wherever it occurs (runtime/store/retention.py).",
        "type": "boolean",
        "examples": [True],
    },
    "x-trace": {
        "description": "What stored traces keep of this personal field's value, as the consent notice promises: masked (the default for a personal field) or none — a turn that handled it keeps no raw text at all.",
        "enum": ["masked", "none"],
        "examples": ["none"],
    },
    "x-enum-labels": {
        "description": "Code → the label citizens say, for an enum field the planner matches by label (e.g. a specialty code).",
        "type": "object",
        "additionalProperties": {"type": "string"},
        "examples": [{"D001": "내과", "D002": "소아청소년과"}],
    },
}


def _slot_help(slots: Any) -> str:
    return ", ".join(sorted(slots.slots)) if slots is not None and slots.slots else "none declared"


def _x_slots(schema: Any, path: tuple) -> list[tuple[tuple, str]]:
    """(location, slot) of every ``x-slot`` in a JSON Schema (nested properties and items too)."""
    out: list[tuple[tuple, str]] = []
    if isinstance(schema, dict):
        if isinstance(schema.get("x-slot"), str):
            out.append(((*path, "x-slot"), schema["x-slot"]))
        for key in ("properties", "items", "anyOf", "oneOf", "allOf", "$defs"):
            sub = schema.get(key)
            if isinstance(sub, dict):
                if key in ("properties", "$defs"):
                    for name, prop in sub.items():
                        out += _x_slots(prop, (*path, key, name))
                else:
                    out += _x_slots(sub, (*path, key))
            elif isinstance(sub, list):
                for i, prop in enumerate(sub):
                    out += _x_slots(prop, (*path, key, i))
    return out


def output_slots(m: Any) -> set[str]:
    """The slot types the adapter's output fields declare (what its ``provides`` can rest on)."""
    return {slot for _loc, slot in _x_slots(m.output_schema, ("output_schema",))}


def check_slot_names(lm: LoadedManifest, slots: Any) -> list[Problem]:
    """x-slot (input and output), requires and provides name declared slot types, and what an
    adapter provides is what its own output fields declare (x-slot), never a table of field names."""
    m, src = lm.manifest, lm.source
    problems: list[Problem] = []
    declared = set(slots.slots)
    for schema_key in ("input_schema", "output_schema"):
        for loc, slot in _x_slots(getattr(m, schema_key), (schema_key,)):
            if slot not in declared:
                where = ".".join(str(p) for p in loc[:-1])
                problems.append(Problem(src.rel, src.line_of(loc), f"{where}: undeclared slot type '{slot}' in x-slot (declared in registry/_slots/: {_slot_help(slots)}; a new one is a YAML entry there, docs/CONTRIBUTING.md)"))
    for key in ("requires", "provides"):
        for i, slot in enumerate(getattr(m, key)):
            if slot not in declared:
                problems.append(Problem(src.rel, src.line_of((key, i)), f"{key}.{i}: undeclared slot type '{slot}' (declared in registry/_slots/: {_slot_help(slots)})"))
    problems += _check_questions(lm, slots)
    have = output_slots(m)
    for i, slot in enumerate(m.provides):
        parts = set(slots.slots[slot].parts) if slot in slots.slots else set()
        if slot in declared and slot not in have and not (parts and parts <= have):
            problems.append(Problem(src.rel, src.line_of(("provides", i)), f"provides.{i}: '{slot}' is not declared by any output field (add x-slot: {slot} to the output field that carries it)"))
    return problems


def _check_questions(lm: LoadedManifest, slots: Any) -> list[Problem]:
    """A field the adapter cannot run without (required, or one of its anyOf/oneOf alternatives)
    has a slot type the engine can ask for: its ``question`` (or that of the slot it is asked as)."""
    m, src = lm.manifest, lm.source
    schema = m.input_schema
    props = schema.get("properties", {}) if isinstance(schema, dict) else {}
    wanted = [*schema.get("required", []),
              *(f for key in ("anyOf", "oneOf") for alt in schema.get(key, []) for f in alt.get("required", []))]
    problems = []
    for name in dict.fromkeys(wanted):
        slot = (props.get(name) or {}).get("x-slot")
        if slot in slots.slots and slots.question_for(slot) is None:
            problems.append(Problem(src.rel, src.line_of(("input_schema", "properties", name, "x-slot")),
                                    f"input_schema.properties.{name}: slot type '{slot}' has no question, but the field is required "
                                    f"(add question: {{ko: …, en: …}} to '{slot}' in registry/_slots/ — the engine asks it when the value is missing)"))
    return problems


def document_x_keys(schema: dict[str, Any], slots: Any = None) -> dict[str, Any]:
    """The manifest JSON Schema with every input-field ``x-`` key described (the declared slot
    types and registered names listed), so an editor validating a manifest knows them."""
    from ummaya.wire.resolvers import RESOLVERS

    regs = registries()
    field_def: dict[str, Any] = {
        "type": "object",
        "description": "One input field: a JSON Schema property plus the planner's x- keys.",
        "properties": {k: dict(v) for k, v in X_KEYS.items()},
        "additionalProperties": True,
    }
    slot = field_def["properties"]["x-slot"]
    if slots is not None:
        slot["enum"] = sorted(slots.slots)
        slot["description"] += " Declared (registry/_slots/): " + " ".join(
            f"{n} ({s.class_}{', derived' if s.derived else ''}{', personal' if s.personal else ''}{', carried' if s.carried else ''}): {s.description}"
            for n, s in sorted(slots.slots.items()))
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
        up["derived_params"]["description"] = "Upstream parameter -> a registered resolver expression (wire/resolvers.py): " + "; ".join(
            f"{n}.{{{','.join(RESOLVERS.meta(n)['fields'])}}}: {RESOLVERS.meta(n)['doc']}" for n in RESOLVERS
        )
    if "postprocess" in up:
        up["postprocess"]["description"] = "A registered post-processor over the record list (wire/transforms.py): " + "; ".join(
            f"{n}: {regs['post-processor'].meta(n)['doc']}" for n in regs["post-processor"]
        )
    fm = defs.get("FieldMap", {}).get("properties", {})
    if "transform" in fm:
        fm["transform"]["description"] = "Registered transforms (wire/transforms.py), chained with |: " + "; ".join(
            f"{n}: {regs['transform'].meta(n)['doc']}" for n in regs["transform"]
        )
    return schema
