"""Validate a proposed call before anything is dispatched.

The call must name one of the narrowed candidates, and its arguments must satisfy the adapter's
input schema (jsonschema, draft 2020-12). Invalid arguments never reach an adapter.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from jsonschema import Draft202012Validator

from ummaya.codegen.manifest import Manifest

from .plan.base import ToolCall


@lru_cache(maxsize=4096)
def _validator(adapter_id: str, schema_key: str) -> Draft202012Validator:
    import json

    return Draft202012Validator(json.loads(schema_key))



def validate_call(call: ToolCall, candidates: dict[str, Manifest]) -> list[str]:
    """Every problem with the call, each naming the field; [] when it may be dispatched."""
    m = candidates.get(call.adapter_id)
    if m is None:
        allowed = ", ".join(sorted(candidates)) or "(none)"
        return [f"adapter '{call.adapter_id}' is not one of the candidates offered ({allowed})"]
    if call.arguments is None:
        raw = call.raw_arguments[:200]
        return [f"arguments are not valid JSON: {raw!r}"]
    import json

    validator = _validator(m.id, json.dumps(m.input_schema, sort_keys=True))
    errors = []
    for err in sorted(validator.iter_errors(call.arguments), key=lambda e: list(e.absolute_path)):
        where = "/".join(str(p) for p in err.absolute_path) or "(arguments)"
        errors.append(f"{m.id}.{where}: {err.message}")
    return errors
