"""Issue 17: a province, a city or the whole country named without a station asks for the
region's air (airkorea_air_quality, every station of the 시·도), not one station's hourly trend,
the nearest station, the dust alerts or the air inside subway stations — even when it asks for a
concentration (농도), a number of stations or PM2.5. The neighbours say so with negative examples
in their manifests (registry data, no Python). Through the real planner on the committed catalog."""

from __future__ import annotations

import pytest

from tests.support.offline_turns import ask


@pytest.mark.parametrize(("request_", "sido"), [
    ("광명 초미세먼지 농도 알려줘", "경기"),
    ("전라북도 미세먼지 농도", "전북"),
    ("전국 초미세먼지 현황 보여줘", "전국"),
    ("PM2.5 in Chungcheongnam-do, 3 stations", "충남"),
])
def test_a_region_named_without_a_station_is_the_region_list(engine, request_, sido):
    r = ask(engine, request_)
    calls = [c["adapter_id"] for c in r.calls]
    assert calls[:1] == ["airkorea_air_quality"], calls
    assert r.calls[0]["arguments"]["sido"] == sido


def test_some_stations_of_a_province_are_its_list_with_a_limit(engine):
    r = ask(engine, "울산 미세먼지 측정소 4곳만 보여줘")
    assert [c["adapter_id"] for c in r.calls][:1] == ["airkorea_air_quality"], r.calls
    assert r.calls[0]["arguments"] == {"sido": "울산", "limit": 4}


def test_a_named_station_keeps_its_hourly_trend(engine):
    r = ask(engine, "종로구 측정소 초미세먼지 농도 알려줘")
    assert [c["adapter_id"] for c in r.calls][:1] == ["airkorea_station_realtime"], r.calls
