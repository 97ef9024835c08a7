"""Issue 17: a bus stop in Gwangju is answered by Gwangju's own BIS (gwangju_bus_arrivals, the
operator's real-time source) whether asked in Korean or English; TAGO keeps the other cities.
tago_bus_arrivals says so with negative examples (registry data)."""

from __future__ import annotations

import pytest

from tests.support.offline_turns import ask


@pytest.mark.parametrize(("request_", "stop"), [
    ("광주 충장로 정류장 버스 도착 정보 알려줘", "충장로"),
    ("광주 송정역 정류장 버스 도착 정보 알려줘", "송정역"),
])
def test_a_gwangju_stop_goes_to_gwangju_bis(engine, request_, stop):
    r = ask(engine, request_)
    assert [(c["adapter_id"], c["arguments"].get("stop_name")) for c in r.calls][:1] == [
        ("gwangju_bus_arrivals", stop)], r.calls


def test_another_city_stays_with_tago(engine):
    r = ask(engine, "부산 하단역 정류장 버스 도착 정보 알려줘")
    assert [c["adapter_id"] for c in r.calls][:1] == ["tago_bus_arrivals"], r.calls
