"""Every key in an adapter's input and output JSON Schema is a JSON Schema keyword or an ``x-`` key.

JSON Schema ignores keywords it does not know, so a typo (``requried``) or a YAML slip silently
weakens a schema: an unquoted flow scalar with a comma (``{description: Date you moved in,
to state the deadline}``) becomes a second key, ``to state the deadline: null``, and the
description loses half its text. Both pass jsonschema's own meta-schema check; this rule makes
them a ``path:line`` error naming the key.
"""

from __future__ import annotations

from typing import Any

from .loader import LoadedManifest, Problem

# Draft 2020-12 (with the draft-07 spellings still common in the wild) — core, applicator,
# validation, meta-data, format and content vocabularies.
KEYWORDS = frozenset(
    """
    $schema $id $ref $anchor $dynamicRef $dynamicAnchor $defs $comment $vocabulary definitions
    allOf anyOf oneOf not if then else dependentSchemas prefixItems items contains properties
    patternProperties additionalProperties propertyNames unevaluatedItems unevaluatedProperties
    additionalItems dependencies
    type enum const multipleOf maximum exclusiveMaximum minimum exclusiveMinimum maxLength
    minLength pattern maxItems minItems uniqueItems maxContains minContains maxProperties
    minProperties required dependentRequired
    title description default deprecated readOnly writeOnly examples format
    contentEncoding contentMediaType contentSchema
    """.split()
)
# Keywords whose value is a schema, a list of schemas, or a name → schema map.
_ONE = ("not", "if", "then", "else", "items", "contains", "additionalProperties", "propertyNames",
        "unevaluatedItems", "unevaluatedProperties", "additionalItems", "contentSchema")
_MANY = ("allOf", "anyOf", "oneOf", "prefixItems")
_MAP = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")


def unknown_keywords(schema: Any, loc: tuple[Any, ...] = ()) -> list[tuple[tuple[Any, ...], str]]:
    """(location, key) of every key that is neither a JSON Schema keyword nor an ``x-`` key."""
    if not isinstance(schema, dict):
        return []  # true/false schemas, or a wrong type the meta-schema check reports
    found = [(loc + (k,), k) for k in schema if not (k in KEYWORDS or str(k).startswith("x-"))]
    for k in _ONE:
        if k in schema:
            found += unknown_keywords(schema[k], loc + (k,))
    for k in _MANY:
        if isinstance(schema.get(k), list):
            for i, sub in enumerate(schema[k]):
                found += unknown_keywords(sub, loc + (k, i))
    for k in _MAP:
        if isinstance(schema.get(k), dict):
            for name, sub in schema[k].items():
                found += unknown_keywords(sub, loc + (k, name))
    return found


def _display_problems(schema: Any, loc: tuple[Any, ...]) -> list[tuple[tuple[Any, ...], str]]:
    """``x-display`` values that are not {shape: name|line|text, max: 1..5000}."""
    if not isinstance(schema, dict):
        return []
    out: list[tuple[tuple[Any, ...], str]] = []
    rule = schema.get("x-display")
    if rule is not None:
        ok = isinstance(rule, dict) and set(rule) <= {"shape", "max"} and rule.get("shape", "line") in ("name", "line", "text")
        ok = ok and (("max" not in rule) or (isinstance(rule["max"], int) and not isinstance(rule["max"], bool) and 1 <= rule["max"] <= 5000))
        if not ok:
            out.append((loc + ("x-display",), "x-display must be {shape: name|line|text, max: 1..5000}"))
    if "x-trace" in schema and schema["x-trace"] not in ("masked", "none"):
        out.append((loc + ("x-trace",), "x-trace must be masked or none"))
    for k in _ONE:
        out += _display_problems(schema.get(k), loc + (k,))
    for k in _MAP:
        if isinstance(schema.get(k), dict):
            for name, sub in schema[k].items():
                out += _display_problems(sub, loc + (k, name))
    return out


def check_schema_keywords(lm: LoadedManifest) -> list[Problem]:
    m, src = lm.manifest, lm.source
    problems: list[Problem] = []
    for loc, why in [*_display_problems(m.output_schema, ("output_schema",)),
                     *_display_problems(m.input_schema, ("input_schema",))]:
        problems.append(Problem(src.rel, src.line_of(loc), f"{'.'.join(map(str, loc))}: {why}"))
    for field in ("input_schema", "output_schema"):
        for loc, key in unknown_keywords(getattr(m, field), (field,)):
            where = ".".join(str(p) for p in loc[:-1])
            hint = (" — an unquoted value with a comma in a {flow: mapping} splits into a new key;"
                    " quote the value") if getattr(m, field) is not None and _value_at(getattr(m, field), loc[1:]) is None else ""
            problems.append(Problem(src.rel, src.line_of(loc), f"{where}: '{key}' is not a JSON Schema keyword (x- for extensions){hint}"))
    return problems


def _value_at(schema: dict[str, Any], path: tuple[Any, ...]) -> Any:
    node: Any = schema
    for p in path:
        node = node[p]
    return node
