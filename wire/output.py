"""Records → the adapter's output object, validated against its ``output_schema``.

Output = ``{"items": [...], "total_count": N}`` plus any other top-level property the output schema
declares and the envelope carries (data.go.kr ``body`` page info, Kakao ``meta``, juso ``common``,
…), looked up by its own name and then by its camelCase spelling (``page_no`` → ``pageNo``).
``total_count`` is the envelope's total when it has one (before a post-processor reshapes rows),
else the number of items. Without ``fields`` a record is passed through whole.

A schema mismatch is ``adapter_error`` code SCHEMA naming the JSON path of the first bad field, so
a drifted upstream shows up as "items/0/distance_km: 'far' is not of type 'number'".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ummaya.model.manifest import Upstream
from .schemas import errors as schema_errors

from .after import add_positions, apply_after, needs_whole_list
from .envelopes import Parsed, default_record_path, records_of
from .errors import ADAPTER_ERROR, UpstreamError
from .transforms import (
    POSTPROCESSORS,
    TransformError,
    apply_transform,
    coerce,
    coerce_object,
    columns_to_rows,
    get_path,
)


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


INPUT_PREFIX = "$input."


def _project_record(rec: Any, upstream: Upstream, index: int, inputs: Mapping[str, Any] | None = None) -> Any:
    if not upstream.fields:
        return rec
    out: dict[str, Any] = {}
    for name, spec in upstream.fields.items():
        source, transform = (spec, None) if isinstance(spec, str) else (spec.source, spec.transform)
        # ``$input.<field>``: the call's own argument — what a step resolved (a library's or a
        # statute's name) — because some operations answer about a code without naming it.
        value = (inputs or {}).get(source[len(INPUT_PREFIX):]) if source.startswith(INPUT_PREFIX) else get_path(rec, source)
        if transform:
            try:
                value = apply_transform(transform, value)
            except TransformError as exc:
                raise UpstreamError(
                    ADAPTER_ERROR, "TRANSFORM", f"items/{index}/{name} (from '{source}'): {exc}"
                ) from exc
        out[name] = value
    return out


def _item_schema(output_schema: dict[str, Any]) -> dict[str, Any]:
    return (output_schema.get("properties", {}).get("items") or {}).get("items") or {}


def records_from(parsed: Parsed, upstream: Upstream, sent: Mapping[str, str] | None = None) -> list[Any]:
    """The records of one page: at the record path, post-processed, numbered columns turned into
    rows. ``sent``: the request parameters as sent (``columns_to_rows.base.param`` reads one)."""
    path = (
        upstream.record_path
        if upstream.record_path is not None
        else default_record_path(upstream.envelope)
    )
    records = records_of(parsed, path)
    if upstream.postprocess:
        fn = POSTPROCESSORS.get(upstream.postprocess)
        if fn is None:
            raise UpstreamError(
                ADAPTER_ERROR,
                "POSTPROCESS",
                f"upstream.postprocess: unknown post-processor '{upstream.postprocess}' "
                f"(known: {', '.join(POSTPROCESSORS)})",
            )
        records = fn([r for r in records if isinstance(r, dict)])
    if upstream.columns_to_rows is not None:
        records = columns_to_rows([r for r in records if isinstance(r, dict)], upstream.columns_to_rows, sent or {})
    return records


def build_output(
    parsed: Parsed,
    upstream: Upstream,
    output_schema: dict[str, Any],
    args: dict[str, Any] | None = None,
    more: list[Parsed] | None = None,
    sent: Mapping[str, str] | None = None,
    inputs: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """``more``: later pages (``upstream.paging``); ``args`` feed ``upstream.after``; ``sent``: the
    main request's parameters (``upstream.columns_to_rows.base``); ``inputs``: the arguments the
    ``$input.<field>`` sources read (default ``args``; the dispatcher adds what its steps filled)."""
    records = records_from(parsed, upstream, sent)
    for page in more or []:
        records += records_from(page, upstream, sent)
    records = add_positions(records, upstream.coordinates)
    kept = apply_after(records, upstream.after, args or {}) if upstream.after is not None else records
    if upstream.after is not None and needs_whole_list(upstream.after):
        # The upstream's total counted records the engine then filtered: count what is kept,
        # before the top-N cut.
        filtered = apply_after(records, upstream.after.model_copy(update={"limit": None}), args or {})
        after_total: int | None = len(filtered)
    else:
        after_total = None
    records = kept
    item_schema = _item_schema(output_schema)
    items = []
    for i, rec in enumerate(records):
        item = _project_record(rec, upstream, i, inputs if inputs is not None else args)
        items.append(
            coerce_object(item, item_schema)
            if isinstance(item, dict)
            else coerce(item, item_schema)
        )

    props: dict[str, Any] = output_schema.get("properties", {})
    total = None if upstream.postprocess or upstream.columns_to_rows else parsed.total
    if after_total is not None:
        total = after_total
    if not isinstance(total, int):
        total = len(items)
    out: dict[str, Any] = {"items": items}
    if "total_count" in props or output_schema.get("additionalProperties", True) is not False:
        out["total_count"] = total
    for name, schema in props.items():
        if name in out:
            continue
        for key in (name, _camel(name)):
            if key in parsed.extras:
                out[name] = coerce(parsed.extras[key], schema)
                break
    validate_output(out, output_schema)
    return out


def validate_output(out: dict[str, Any], output_schema: dict[str, Any]) -> None:
    errors = schema_errors(output_schema, out)
    if errors:
        err = errors[0]
        where = "/".join(str(p) for p in err.absolute_path) or "(output)"
        more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
        raise UpstreamError(ADAPTER_ERROR, "SCHEMA", f"{where}: {err.message}{more}")
