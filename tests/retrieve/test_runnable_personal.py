"""Personal inputs are never in a request (the protected flow asks for them after the consent
notice), so their absence does not make an adapter yield to a sibling (runtime/retrieve/runnable.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def catalog():
    from ummaya.runtime.catalog import Catalog

    committed = REPO / "generated"
    if not (committed / "catalog.json").exists():
        pytest.skip("generated/ not built")
    return Catalog.load(committed)


def test_a_missing_personal_input_is_not_lacking(catalog):
    from ummaya.runtime.retrieve.runnable import lacks
    from ummaya.runtime.understand import table

    personal = table.personal()
    m = next(m for m in catalog.adapters.values()
             if (req := m.input_schema.get("required"))
             and all(table.slot_of((m.input_schema.get("properties") or {}).get(n) or {}, n) is not None
                     and table.slot_of((m.input_schema.get("properties") or {}).get(n) or {}, n).name in personal
                     for n in req))
    assert lacks(m, catalog, "신청하고 싶어", "ko", frozenset()) == []


def test_a_missing_non_personal_input_still_lacks(catalog):
    from ummaya.runtime.retrieve.runnable import lacks

    m = catalog.adapters["hira_hospital_hours_detail"]
    assert lacks(m, catalog, "토요일 진료 시간 알려줘", "ko", frozenset()) == ["hospital_name"]


def test_a_sibling_that_needs_the_same_unnamed_place_is_no_more_runnable(catalog):
    from ummaya.runtime.retrieve.runnable import as_placeless, lacks

    ask = "정류장에서 얼마나 더 기다려야 돼"
    arrivals, nearby = catalog.adapters["tago_bus_arrivals"], catalog.adapters["tago_bus_stops_nearby"]
    missing = lacks(arrivals, catalog, ask, "ko", frozenset())
    assert missing and lacks(nearby, catalog, ask, "ko", frozenset()) == []
    assert as_placeless(arrivals, missing, nearby, catalog, frozenset())
    # Known coordinates are no unnamed place: then the nearby search can run and the rule is off.
    assert not as_placeless(arrivals, missing, nearby, catalog, frozenset({"latitude", "longitude"}))


def test_lacking_a_day_still_yields_to_a_sibling_that_needs_none(catalog):
    from ummaya.runtime.retrieve.runnable import as_placeless, lacks

    on_day, now = catalog.adapters["nmc_pharmacies_open_on_day"], catalog.adapters["nmc_pharmacies"]
    missing = lacks(on_day, catalog, "약국", "ko", frozenset())
    assert missing and not as_placeless(on_day, missing, now, catalog, frozenset())
