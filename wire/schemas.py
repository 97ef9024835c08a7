"""JSON Schema validation on the turn's hot path, compiled once per schema object.

Every turn checks arguments and outputs against the same few schemas. The valid majority is
accepted by ``jsonschema-rs`` (compiled, and ~3x cheaper to import than ``jsonschema``, which
matters for a cold ``ummaya ask``); only an invalid instance loads the pure-Python ``jsonschema`` to
word every problem with its path. Both implement draft 2020-12 and ignore unknown ``x-*`` keywords.

Schemas live as long as the catalog that holds them, so validators are keyed by identity (and the
schema object kept, so an id is never reused for another schema while cached).
"""

from __future__ import annotations

from typing import Any

import jsonschema_rs

_fast: dict[int, tuple[Any, Any]] = {}
_slow: dict[int, tuple[Any, Any]] = {}


def _cached(cache: dict[int, tuple[Any, Any]], schema: dict[str, Any], build: Any) -> Any:
    hit = cache.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    if len(cache) > 50_000:  # a runaway caller, not the runtime: start over rather than grow
        cache.clear()
    v = build(schema)
    cache[id(schema)] = (schema, v)
    return v


def validator(schema: dict[str, Any]) -> Any:
    """A compiled validator with ``is_valid(instance)``."""
    return _cached(_fast, schema, lambda s: jsonschema_rs.validator_for(s))


def errors(schema: dict[str, Any], instance: Any) -> list[Any]:
    """Every error (``jsonschema.ValidationError``), sorted by where it is; [] when valid."""
    if validator(schema).is_valid(instance):
        return []
    from jsonschema import Draft202012Validator

    slow = _cached(_slow, schema, Draft202012Validator)
    return sorted(slow.iter_errors(instance), key=lambda e: list(e.absolute_path))
