"""Issue 17 stage 2: the slot types adapter authors asked for (route_number, origin/destination,
flight_number, day_code, quantity, country, school/apartment/facility names), each read by its
shared reader from the compiled slot table — and the exact after-call match route numbers need."""

from __future__ import annotations

import datetime as dt

import pytest

from ummaya.model.manifest import MatchRule
from ummaya.wire.after import matches
from ummaya.runtime.understand.readers import READERS, ReadRequest
from ummaya.runtime.understand.table import slot_table

KST = dt.timezone(dt.timedelta(hours=9))
NOW = dt.datetime(2026, 12, 1, 10, 0, tzinfo=KST)  # a Tuesday
DAY_LABELS = {"1": "월요일", "2": "화요일", "3": "수요일", "4": "목요일", "5": "금요일", "6": "토요일", "7": "일요일", "8": "공휴일"}


def read(slot: str, text: str, prop: dict | None = None, *, required: bool = False):
    s = slot_table().get(slot)
    assert s is not None and s.reader, slot
    req = ReadRequest(text=text, now=NOW, prop=prop or {"type": "string"}, name=slot, slot=s, required=required)
    return READERS.get(s.reader)(req)


@pytest.mark.parametrize(("text", "route"), [
    ("1003번 버스 언제 와?", "1003"), ("5번 버스 어디쯤이야", "5"), ("광주 첨단09 도착 시간", "첨단09"),
    ("급행1 버스", "급행1"), ("대전 1003번", "1003"), ("대전급행1 노선", "급행1"), ("5-1번 버스", "5-1"),
    ("bus 1003 arrival", "1003"), ("버스1003 언제 와", "1003"),
    ("하단역 3번 출구 앞 버스", None), ("오후 3시에 부산 버스", None), ("2호선 막차", None), ("약국 3곳만", None),
])
def test_a_route_number_is_the_number_on_the_bus_never_the_city_or_an_exit(text, route):
    assert read("route_number", text) == route


def test_a_lone_number_is_a_route_only_when_the_field_is_required():
    assert read("route_number", "1003 언제 와?", required=True) == "1003"
    assert read("route_number", "1003 언제 와?") is None


@pytest.mark.parametrize(("text", "flight"), [
    ("KE082 도착 시간", "KE082"), ("OZ 8915 편 지연돼?", "OZ8915"), ("7C1101 언제 출발", "7C1101"),
    ("대한항공 082편 도착했어?", "KE082"), ("in 5 minutes", None), ("to 1234 people", None),
])
def test_a_flight_number_is_a_designator_of_the_airlines_vocabulary_and_its_number(text, flight):
    assert read("flight_number", text) == flight


@pytest.mark.parametrize(("text", "origin", "destination"), [
    ("대전에서 부산 가는 KTX", "대전", "부산"), ("서울→광주 고속버스", "서울", "광주"), ("김포에서 제주 비행기", "김포", "제주"),
    ("from Seoul to Busan", "Seoul", "Busan"), ("서울역에서 부산역까지 기차 시간", "서울역", "부산역"),
    ("동대구에서 서울행 SRT", "동대구", "서울"), ("부산에서 약국 찾아줘", None, None),
    # the trip's verb where the destination would be is no destination (the field asks for it instead)
    ("서울에서 출발하는 고속버스 시간표", None, None), ("김해에서 떠나는 비행기", None, None),
])
def test_origin_and_destination_are_read_as_a_pair(text, origin, destination):
    assert read("origin", text) == origin
    assert read("destination", text) == destination


def test_an_airport_pair_takes_the_fields_codes():
    prop = {"type": "string", "enum": ["NAARKSS", "NAARKPC"], "x-enum-labels": {"NAARKSS": "김포", "NAARKPC": "제주"}}
    assert read("origin", "김포에서 제주 비행기", prop) == "NAARKSS"
    assert read("destination", "김포에서 제주 비행기", prop) == "NAARKPC"


@pytest.mark.parametrize(("text", "mon1", "label"), [
    ("일요일에 여는 병원", "7", "7"), ("주말에 여는 약국", "6", "6"), ("추석에 문 여는 약국", "8", "8"),
    ("공휴일 진료하는 곳", "8", "8"), ("오늘 여는 병원", "2", "2"), ("내일 진료", "3", "3"), ("다음 주 월요일", "1", "1"),
    ("3시에 여는 병원", None, None), ("3일장 치를 건데", None, None),
])
def test_a_day_code_is_a_weekday_or_a_holiday_never_a_time(text, mon1, label):
    assert read("day_code", text, {"type": "string", "x-format": "weekday-mon1"}) == mon1
    assert read("day_code", text, {"type": "string", "x-enum-labels": DAY_LABELS}) == label


def test_a_day_code_counted_from_sunday():
    assert read("day_code", "일요일", {"type": "integer", "x-format": "weekday-sun1"}) == 1
    assert read("day_code", "토요일", {"type": "integer", "x-format": "weekday-sun1"}) == 7


@pytest.mark.parametrize(("text", "unit", "value"), [
    ("조문객 200명 정도", None, 200), ("3일장 치를 건데", "일", 3), ("조문객 2천 명", "명", 2000),
    ("약국 3곳만", None, None), ("5월 3일 장례", None, None), ("오후 3시", None, None),
])
def test_a_quantity_is_what_the_request_counts_never_a_result_limit(text, unit, value):
    prop = {"type": "integer", **({"x-unit": unit} if unit else {})}
    assert read("quantity", text, prop) == value


@pytest.mark.parametrize(("text", "code"), [
    ("일본 여행경보", "JP"), ("Is it safe to travel to Thailand?", "TH"), ("베트남 가도 돼?", "VN"),
    ("인도네시아 발리 여행", "ID"), ("노르웨이 여행 경보", "NO"), ("터키 가도 되나", "TR"), ("부산 날씨", None),
])
def test_a_country_is_its_iso_code(text, code):
    assert read("country", text) == code


def test_a_country_enum_of_iso_codes_is_matched_by_the_code():
    assert read("country", "일본 여행경보", {"type": "string", "enum": ["JP", "VN"]}) == "JP"
    assert read("country", "태국 여행경보", {"type": "string", "enum": ["JP", "VN"]}) is None


@pytest.mark.parametrize(("slot", "text", "name"), [
    ("school_name", "해운대초 급식", "해운대초등학교"), ("school_name", "해운대초등학교 급식 메뉴", "해운대초등학교"),
    ("school_name", "부산과학고 위치", "부산과학고등학교"), ("school_name", "초등학교 방학 언제야", None),
    ("apartment_name", "래미안 원베일리 관리비", "래미안 원베일리"), ("apartment_name", "반포자이 관리비", "반포자이"),
    ("apartment_name", "대연롯데캐슬레전드 실거래가", "대연롯데캐슬레전드"),
    ("facility_name", "사하도서관 몇 시까지 해?", "사하도서관"), ("facility_name", "도서관 몇 시까지 해?", None),
    ("facility_name", "해운대 국민체육센터 수영장", "해운대 국민체육센터"),
])
def test_a_facility_name_is_taken_whole(slot, text, name):
    assert read(slot, text) == name


def test_an_exact_match_keeps_only_the_route_itself():
    rule = MatchRule(input="route", fields=["routeno"], words="exact")
    records = [{"routeno": r} for r in ("5", "50", "105", "5-1", "급행5")]
    assert [r["routeno"] for r in records if matches(r, rule, {"route": "5"})] == ["5"]
    assert [r["routeno"] for r in records if matches(r, rule, {"route": "5-1"})] == ["5-1"]
    partial = MatchRule(input="route", fields=["routeno"])
    assert len([r for r in records if matches(r, partial, {"route": "5"})]) == 5
