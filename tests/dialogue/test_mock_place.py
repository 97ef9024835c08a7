"""Issue 9 item 6: Mock replays the recording nearest to the requested place, and says so when it
replays another place's data."""

from __future__ import annotations

from ummaya.runtime.dispatch import pick_fixture
from ummaya.runtime.dispatch.fixture_place import other_place_note, place_of

from .conftest import Talk, calls

LOCATION_FINDS = ("nmc_emergency_rooms", "nmc_pharmacies", "nmc_aed_locations", "nmc_emergency_beds",
                  "hira_hospitals", "airkorea_air_quality", "kma_short_term_forecast",
                  "kma_ultra_short_nowcast", "kma_weather_warnings", "koroad_accident_hotspots")


def test_every_location_based_find_has_seoul_and_busan(catalog) -> None:
    for aid in LOCATION_FINDS:
        m = catalog.get(aid)
        regions = {place_of(m, f.request).sido for f in m.fixtures if f.expected and f.expected.get("items")}
        assert {"서울", "부산"} <= regions, (aid, regions)


def test_region_match_then_distance(catalog) -> None:
    er = catalog.get("nmc_emergency_rooms")
    assert pick_fixture(er, {"latitude": 37.57, "longitude": 126.99}, None).name.startswith("seoul")
    assert pick_fixture(er, {"latitude": 35.10, "longitude": 129.03}, None).name.startswith("busan")
    # Incheon: no recording there; Seoul's is nearer than Busan's.
    assert pick_fixture(er, {"latitude": 37.45, "longitude": 126.70}, None).name.startswith("seoul")
    air = catalog.get("airkorea_air_quality")
    assert pick_fixture(air, {"sido": "서울"}, None).name.startswith("seoul")
    assert pick_fixture(air, {"sido": "부산"}, None).name.startswith("busan")
    kakao = catalog.get("kakao_keyword_search")
    assert pick_fixture(kakao, {"query": "서울시청"}, None).name.startswith("seoul")


def test_a_recording_of_nothing_answers_only_its_own_region(catalog) -> None:
    kma = catalog.get("kma_short_term_forecast")
    assert pick_fixture(kma, {"latitude": 35.16, "longitude": 126.85}, None).expected["items"]  # Gwangju


def test_the_note_names_the_place_replayed(catalog) -> None:
    air = catalog.get("airkorea_air_quality")
    busan = pick_fixture(air, {"sido": "부산"}, None)
    assert other_place_note(air, busan, {"sido": "광주"}, "ko") == "모의 데이터는 부산 기준입니다 (요청하신 곳의 데이터가 아닙니다)."
    assert other_place_note(air, busan, {"sido": "부산"}, "ko") is None
    assert "Busan" in other_place_note(air, busan, {"sido": "광주"}, "en")


def test_seoul_is_answered_with_seoul(talk: Talk) -> None:
    r = talk("서울시청 근처 응급실")
    assert calls(r) == ["kakao_keyword_search", "nmc_emergency_rooms"]
    assert "강북삼성병원" in r.answer and "동아대학교병원" not in r.answer and "모의 데이터는" not in r.answer


def test_another_place_is_said_in_one_line(talk: Talk) -> None:
    r = talk("광주 미세먼지 어때?")
    first = r.answer.splitlines()[0]
    assert first == "모의 데이터는 부산 기준입니다 (요청하신 곳의 데이터가 아닙니다)."
    assert r.answer.count("모의 데이터는") == 1
