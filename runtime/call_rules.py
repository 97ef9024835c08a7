"""Validate a proposed call before anything is dispatched.

The call must name one of the narrowed candidates, and its arguments must satisfy the adapter's
input schema (jsonschema, draft 2020-12). Invalid arguments never reach an adapter.
"""

from __future__ import annotations

from ummaya.model.manifest import Manifest

from .plan.protocol import ToolCall
from ummaya.wire.schemas import errors as schema_errors


def validate_call(call: ToolCall, candidates: dict[str, Manifest]) -> list[str]:
    """Every problem with the call, each naming the field; [] when it may be dispatched."""
    m = candidates.get(call.adapter_id)
    if m is None:
        allowed = ", ".join(sorted(candidates)) or "(none)"
        return [f"adapter '{call.adapter_id}' is not one of the candidates offered ({allowed})"]
    if call.arguments is None:
        raw = call.raw_arguments[:200]
        return [f"arguments are not valid JSON: {raw!r}"]
    errors = []
    for err in schema_errors(m.input_schema, call.arguments):
        where = "/".join(str(p) for p in err.absolute_path) or "(arguments)"
        errors.append(f"{m.id}.{where}: {err.message}")
    return errors
