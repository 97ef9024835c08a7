"""Project an adapter result back into the conversation as compact evidence.

Upstream text is data, never instructions: evidence is structured JSON, trimmed, and the only
things the planner reads back from it are typed slots (coordinates, region names) that the
adapter's manifest says it provides — each output field that carries one declares it with x-slot.
"""

from __future__ import annotations

from typing import Any

from ummaya.model.manifest import Manifest

from .plan.protocol import Evidence

MAX_ITEMS = 5
MAX_STRING = 300

# Output fields that say how fresh an upstream's data is, by the names upstreams use.
FRESHNESS_FIELDS = (
    "updated_at", "hvidate", "data_time", "dataTime", "measured_at", "base_datetime",
    "announced_at", "observed_at", "base_date", "tmFc",
)


def _trim(value: Any) -> Any:
    if isinstance(value, str):
        return value if len(value) <= MAX_STRING else value[: MAX_STRING - 1] + "…"
    if isinstance(value, list):
        return [_trim(v) for v in value[:MAX_ITEMS]]
    if isinstance(value, dict):
        return {k: _trim(v) for k, v in value.items()}
    return value


def find_freshness(output: dict[str, Any] | None) -> str | None:
    if not output:
        return None
    for key in FRESHNESS_FIELDS:
        if output.get(key):
            return str(output[key])
    items = output.get("items")
    if isinstance(items, list) and items and isinstance(items[0], dict):
        for key in FRESHNESS_FIELDS:
            if items[0].get(key):
                return str(items[0][key])
    return None


def citation_of(m: Manifest) -> dict[str, Any]:
    return {
        "title": m.citation.title,
        "url": m.citation.url,
        "agency": m.agency.name_ko,
        "agency_en": m.agency.name_en,
        "verified": m.citation.verified.isoformat(),
        **({"basis": m.citation.basis} if m.citation.basis else {}),
    }


def project(
    evidence_id: str, call_id: str, m: Manifest, tier: str, status: str, output: dict[str, Any] | None
) -> Evidence:
    return Evidence(
        evidence_id=evidence_id,
        call_id=call_id,
        adapter_id=m.id,
        tier=tier,
        status=status,
        summary=_trim(output or {}),
        citation=citation_of(m),
        freshness=find_freshness(output),
        output=output,
    )


def slots_from(m: Manifest, output: dict[str, Any] | None) -> dict[str, Any]:
    """Typed slots a locate result provides: only from adapters that declare ``provides``, only
    from the output fields that declare ``x-slot`` (the first record's)."""
    if not output or not m.provides:
        return {}
    items = output.get("items")
    first = items[0] if isinstance(items, list) and items else output
    if not isinstance(first, dict):
        return {}
    item_props = (
        m.output_schema.get("properties", {}).get("items", {}).get("items", {}).get("properties", {})
    )
    slots: dict[str, Any] = {}
    for field, value in first.items():
        if value in (None, ""):
            continue
        slot = item_props.get(field, {}).get("x-slot")
        if slot and slot not in slots:
            slots[slot] = value
    from .understand import table

    for key in list(slots):
        st = table.slot(key)
        if st is not None and st.class_ == "coordinates":
            try:
                slots[key] = float(slots[key])
            except (TypeError, ValueError):
                slots.pop(key)
    return slots
