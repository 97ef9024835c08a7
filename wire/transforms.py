"""Shared field transforms, schema-driven coercion and record post-processors.

Transforms (``FieldMap.transform``) may be chained with ``|`` and run left to right, e.g.
``none_if_dash|float``: ``int``, ``float``, ``str``, ``none_if_dash``, ``strip_html`` (MFDS texts are
plain with non-breaking spaces — older guides showed ``<p>``/``<br>``; tags dropped, entities
unescaped, whitespace and NBSP collapsed to one space) and
``yyyymmddhhmmss`` (``20261130171500`` → ``2026-11-30T17:15:00+09:00``; 12 digits without
seconds and 8-digit dates are accepted too, since upstreams trim them).

Coercion then follows the output schema's item property types: ``"-"``/``""`` → null where null is
allowed, numeric strings → numbers, numbers → strings for string fields, ``Y``/``N`` → booleans. A
value that cannot be coerced is left alone so the schema check names the field instead of the
engine silently inventing a value.

Post-processors (``Upstream.postprocess``) reshape the record list before projection:
``kma_pivot_forecast`` turns KMA category rows into one record per ``fcstDate``+``fcstTime`` whose
keys are the categories (TMP, POP, PTY, SKY, REH, WSD, PCP, SNO, TMN, TMX, …) plus ``fcstDate``,
``fcstTime``, ``baseDate``, ``baseTime``, ``nx``, ``ny``; ``kma_pivot_nowcast`` turns the nowcast
rows (T1H, RN1, REH, PTY, WSD, VEC, …) into a single record keyed the same way.

``columns_to_rows`` (declared as ``Upstream.columns_to_rows``, not named) turns one record with
numbered columns into one row per number — KMA 중기예보 rnSt4Am…wf10 and taMin4…taMax10, 생활기상지수
h0…h75, 꽃가루 today/tomorrow, an election's jd01…jd50 — each row with the number and, when a base
moment is declared, its own date (and hour), so a day-scoped answer keeps the day asked.
"""

from __future__ import annotations

import datetime as dt
import html
import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from .extensions import Registry

from .errors import ADAPTER_ERROR, UpstreamError

if TYPE_CHECKING:
    from ummaya.model.manifest import ColumnsToRows

# The extension points of this module (wire/extensions.py): a new transform or post-processor is
# one function below with its decorator; the build checks manifests' names against these.
TRANSFORMS: Registry[Callable[[Any], Any]] = Registry("transform")
POSTPROCESSORS: Registry[Callable[[list[dict[str, Any]]], list[dict[str, Any]]]] = Registry("post-processor")
transform = TRANSFORMS.register
postprocessor = POSTPROCESSORS.register


class TransformError(ValueError):
    pass


def _blank(v: Any) -> bool:
    return v is None or (isinstance(v, str) and v.strip() in ("", "-"))


@transform("int", doc='Integer from a number or numeric string (commas allowed); null when blank.')
def _to_int(v: Any) -> int | None:
    if _blank(v):
        return None
    if isinstance(v, bool):
        raise TransformError(f"cannot make an integer of {v!r}")
    if isinstance(v, int):
        return v
    try:
        f = float(str(v).strip().replace(",", ""))
    except ValueError as exc:
        raise TransformError(f"cannot make an integer of {v!r}") from exc
    if not f.is_integer():
        raise TransformError(f"{v!r} is not a whole number")
    return int(f)


@transform("float", doc='Float from a number or numeric string; null when blank.')
def _to_float(v: Any) -> float | None:
    if _blank(v):
        return None
    if isinstance(v, bool):
        raise TransformError(f"cannot make a number of {v!r}")
    try:
        return float(str(v).strip().replace(",", "")) if isinstance(v, str) else float(v)
    except (TypeError, ValueError) as exc:
        raise TransformError(f"cannot make a number of {v!r}") from exc


@transform("str", doc='The value as text; null when blank.')
def _to_str(v: Any) -> str | None:
    if v is None:
        return None
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return v if isinstance(v, str) else str(v)


@transform("none_if_dash", doc='null for the placeholders upstreams send for \'no value\' ("-", "").')
def _none_if_dash(v: Any) -> Any:
    return None if _blank(v) else v


_TAG = re.compile(r"<[^>]*>")
_BREAK = re.compile(r"<\s*(br|/p|/div|/li)\s*/?\s*>", re.IGNORECASE)
# MFDS texts carry non-breaking spaces (U+00A0, also what &nbsp; unescapes to): plain spaces.
_SPACES = re.compile(r"[ \t\r\f\v\u00a0\u2007\u202f]+")


@transform("strip_html", doc='Plain text: tags dropped, entities unescaped, whitespace and NBSP collapsed.')
def _strip_html(v: Any) -> Any:
    if not isinstance(v, str):
        return v
    text = _BREAK.sub("\n", v)
    text = html.unescape(_TAG.sub("", text))
    lines = [_SPACES.sub(" ", line).strip() for line in text.split("\n")]
    return "\n".join(line for line in lines if line) or None


@transform("yyyymmddhhmmss", doc='KST date and time 20261130171500 → 2026-11-30T17:15:00+09:00 (8/12/14 digits).')
def _yyyymmddhhmmss(v: Any) -> str | None:
    if _blank(v):
        return None
    s = str(v).strip()
    if not s.isdigit() or len(s) not in (8, 12, 14):
        raise TransformError(f"{v!r} is not YYYYMMDD[HHMM[SS]]")
    date = f"{s[0:4]}-{s[4:6]}-{s[6:8]}"
    if len(s) == 8:
        return date
    seconds = s[12:14] if len(s) == 14 else "00"
    return f"{date}T{s[8:10]}:{s[10:12]}:{seconds}+09:00"


def apply_transform(spec: str, value: Any) -> Any:
    for name in (n.strip() for n in spec.split("|")):
        fn = TRANSFORMS.get(name)
        if fn is None:
            raise TransformError(f"unknown transform '{name}' (known: {', '.join(TRANSFORMS)})")
        value = fn(value)
    return value


# -- coercion by JSON Schema type ---------------------------------------------------------------


def _types(schema: dict[str, Any] | None) -> list[str]:
    if not schema:
        return []
    t = schema.get("type")
    if isinstance(t, str):
        return [t]
    if isinstance(t, list):
        return list(t)
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return [x for sub in schema[key] for x in _types(sub)]
    return []


_TRUE = {"y", "yes", "true", "1"}
_FALSE = {"n", "no", "false", "0"}


def coerce(value: Any, schema: dict[str, Any] | None) -> Any:
    types = _types(schema)
    if not types:
        return value
    nullable = "null" in types
    if value is None:
        return None
    if isinstance(value, str) and value.strip() in ("", "-") and nullable:
        return None
    try:
        if "integer" in types and not isinstance(value, bool) and not isinstance(value, int):
            if isinstance(value, (str, float)):
                return _to_int(value)
        if "number" in types and isinstance(value, str):
            f = _to_float(value)
            return int(f) if f is not None and f.is_integer() and "." not in value else f
        if "string" in types and isinstance(value, (int, float)) and not isinstance(value, bool):
            return _to_str(value)
        if "boolean" in types and isinstance(value, str):
            low = value.strip().lower()
            if low in _TRUE:
                return True
            if low in _FALSE:
                return False
        if "array" in types and not isinstance(value, list):
            # XML gives one repeated element as a dict/str; the schema says there may be many.
            return [coerce(value, (schema or {}).get("items"))]
        if "array" in types and isinstance(value, list):
            return [coerce(v, (schema or {}).get("items")) for v in value]
        if "object" in types and isinstance(value, dict):
            return coerce_object(value, schema or {})
    except TransformError:
        return value  # left for the schema check, which names the field
    return value


def coerce_object(obj: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    props = schema.get("properties", {})
    return {k: coerce(v, props.get(k)) for k, v in obj.items()}


# -- record access --------------------------------------------------------------------------


def get_path(data: Any, path: str | None) -> Any:
    """Walk a dotted path; numeric parts index lists. Missing parts give None, never an error."""
    if not path:
        return data
    cur = data
    for part in path.split("."):
        if isinstance(cur, dict):
            cur = cur.get(part)
        elif isinstance(cur, list) and part.lstrip("-").isdigit():
            idx = int(part)
            cur = cur[idx] if -len(cur) <= idx < len(cur) else None
        else:
            return None
        if cur is None:
            return None
    return cur


def records_at(data: Any, path: str | None) -> list[Any]:
    """The record list at ``path``: a dict is one record; "" / absent / null is none."""
    found = get_path(data, path)
    if found is None or (isinstance(found, str) and not found.strip()):
        return []
    if isinstance(found, list):
        return found
    if isinstance(found, dict):
        return [found]
    raise UpstreamError(
        ADAPTER_ERROR, "PARSE", f"expected records at '{path}', found {type(found).__name__}"
    )


# -- post-processors --------------------------------------------------------------------------

_KEEP = ("baseDate", "baseTime", "nx", "ny")


@postprocessor("kma_pivot_forecast", doc="KMA forecast category rows → one record per fcstDate+fcstTime keyed by category (TMP, POP, SKY …).")
def _pivot_forecast(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    slots: dict[tuple[str, str], dict[str, Any]] = {}
    for row in records:
        key = (str(row.get("fcstDate", "")), str(row.get("fcstTime", "")))
        slot = slots.get(key)
        if slot is None:
            slot = {"fcstDate": key[0], "fcstTime": key[1]}
            slot.update({k: row[k] for k in _KEEP if k in row})
            slots[key] = slot
        if row.get("category"):
            slot[str(row["category"])] = row.get("fcstValue")
    return [slots[k] for k in sorted(slots)]


@postprocessor("kma_pivot_nowcast", doc="KMA nowcast category rows → one record keyed by category (T1H, RN1, REH …).")
def _pivot_nowcast(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    if not records:
        return []
    out: dict[str, Any] = {k: records[0][k] for k in _KEEP if k in records[0]}
    for row in records:
        if row.get("category"):
            out[str(row["category"])] = row.get("obsrValue")
    return [out]




# -- numbered columns → rows (Upstream.columns_to_rows) ----------------------------------------

_BASE_FORMATS = {"yyyymmdd": "%Y%m%d", "hhmm": "%H%M", "hh": "%H", "yyyymmddhh": "%Y%m%d%H", "yyyymmddhhmm": "%Y%m%d%H%M"}


def _base_moment(record: dict[str, Any], spec: ColumnsToRows, sent: Mapping[str, str]) -> dt.datetime | None:
    base = spec.base
    if base is None:
        return None
    raw = sent.get(base.param) if base.param is not None else record.get(base.field or "")
    if raw is None or str(raw).strip() == "":
        return None
    try:
        return dt.datetime.strptime(str(raw).strip(), _BASE_FORMATS[base.format])
    except ValueError as exc:
        where = f"parameter '{base.param}'" if base.param is not None else f"field '{base.field}'"
        raise UpstreamError(
            ADAPTER_ERROR, "PARSE", f"columns_to_rows.base: {where} {raw!r} is not {base.format}"
        ) from exc


def columns_to_rows(
    records: list[dict[str, Any]], spec: ColumnsToRows, sent: Mapping[str, str]
) -> list[dict[str, Any]]:
    """Each record → one row per ``spec.numbers`` entry whose columns are not all absent/blank."""
    out: list[dict[str, Any]] = []
    for record in records:
        moment = _base_moment(record, spec, sent)
        for index, n in enumerate(spec.numbers):
            row: dict[str, Any] = {}
            for key, template in spec.columns.items():
                column = template[index] if isinstance(template, list) else template.format(n=n)
                if column in record and not _blank(record[column]):
                    row[key] = record[column]
            if not row:
                continue
            row = {**{k: record[k] for k in spec.keep if k in record}, spec.number_field: n, **row}
            if moment is not None and spec.base is not None:
                step = dt.timedelta(days=n) if spec.base.unit == "day" else dt.timedelta(hours=n)
                at = moment + step
                row[spec.base.date_field] = at.strftime("%Y%m%d")
                if spec.base.time_field:
                    row[spec.base.time_field] = at.strftime("%H%M")
            out.append(row)
    return out
