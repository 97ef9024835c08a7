"""Compiled JSON Schema validators, built once per schema object.

Building a ``jsonschema`` validator costs far more than running it on a small object, and every
turn validates arguments and outputs against the same few schemas. Schemas live as long as the
catalog that holds them, so they are keyed by identity (and the object kept, so an id is never
reused for another schema while cached).
"""

from __future__ import annotations

from typing import Any

from jsonschema import Draft202012Validator

_cache: dict[int, tuple[Any, Draft202012Validator]] = {}


def validator(schema: dict[str, Any]) -> Draft202012Validator:
    hit = _cache.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    v = Draft202012Validator(schema)
    if len(_cache) > 50_000:  # a runaway caller, not the runtime: start over rather than grow
        _cache.clear()
    _cache[id(schema)] = (schema, v)
    return v


def errors(schema: dict[str, Any], instance: Any) -> list[Any]:
    """Every error, sorted by where it is; [] when valid (the common, fast path)."""
    v = validator(schema)
    if v.is_valid(instance):
        return []
    return sorted(v.iter_errors(instance), key=lambda e: list(e.absolute_path))
