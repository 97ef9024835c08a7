"""Issue 17, items 2–4: the shared readers take what the citizen meant, whole — one test per failure
class the issue lists, each through the real planner on the committed catalog (offline, Mock)."""

from __future__ import annotations

import datetime as dt

import pytest

from ummaya.runtime.understand import grammar
from ummaya.runtime.understand.dates import birth_date_in, date_in, month_in
from ummaya.runtime.understand.numbers import coordinates_in, count_in
from ummaya.runtime.understand.places import bare_place, find_place
from ummaya.runtime.understand.regions import find_region

from tests.support.offline_turns import NOW, ask


def args_of(result, adapter: str) -> dict | None:
    return next((c["arguments"] for c in result.calls if c["adapter_id"] == adapter), None)


# -- the grammar -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("word", "stem"), [
    ("판콜에이", "판콜에이"),  # 에 has no 받침: 이 cannot be a particle after it
    ("게보린이", "게보린"), ("베아제가", "베아제"), ("타이레놀을", "타이레놀"), ("부산역으로", "부산역"),
    ("효원로", "효원로"),  # 원 ends in ㄴ, which takes 으로: 로 is the road's
    ("서울로", "서울"),
])
def test_a_particle_comes_off_only_where_the_grammar_allows(word, stem):
    assert grammar.strip_particle(word) == stem


def test_a_known_whole_word_is_never_cut_and_a_road_keeps_its_ending():
    assert grammar.strip_particle("횡단보도", known={"횡단보도"}) == "횡단보도"
    assert grammar.strip_particle("한누리대로", roads=True) == "한누리대로"
    assert grammar.strip_particle("해운대로", known={"해운대"}, roads=True) == "해운대"
    assert grammar.hearsay("온대") and not grammar.hearsay("첨성대")


# -- products (drug names) --------------------------------------------------------------------------


@pytest.mark.parametrize(("request_", "drug"), [
    ("판콜에이 먹어도 돼?", "판콜에이"), ("게보린이 생리통에도 들어?", "게보린"), ("베아제가 소화제야?", "베아제"),
    ("부루펜 시럽 먹어도 돼?", "부루펜"), ("후시딘 연고 발라도 돼?", "후시딘"), ("Can I take Tylenol with alcohol?", "타이레놀"),
])
def test_a_product_name_is_taken_whole_and_only_the_name(engine, request_, drug):
    assert args_of(ask(engine, request_), "mfds_easy_drug_info")["drug_name"] == drug


@pytest.mark.parametrize("word", ["내복액", "식후에", "쪼개서", "생리통에", "얼마나"])
def test_words_around_a_product_never_become_it(engine, word):
    result = ask(engine, "타이레놀 부작용 알려줘", f"{word} 먹어도 돼?")
    assert args_of(result, "mfds_easy_drug_info")["drug_name"] == "타이레놀"


def test_a_follow_up_about_who_keeps_the_carried_product(engine):
    result = ask(engine, "게보린 부작용 알려줘", "어린이가 먹어도 돼?")
    assert args_of(result, "mfds_easy_drug_info")["drug_name"] == "게보린"


# -- roads and addresses ---------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "place"), [
    ("효원로 25 근처 약국", "효원로 25"), ("한누리대로 2130 근처 약국", "한누리대로 2130"),
    ("중앙동 123-4 근처 응급실", "중앙동 123-4"), ("횡단보도 근처 불법주차", "횡단보도"),
])
def test_a_road_keeps_its_ending_and_its_building_number(text, place):
    assert find_place(text, "ko") == place


def test_a_move_in_address_is_the_address_never_a_verb_or_a_day(engine):
    result = ask(engine, "화요일에 효원로 25로 이사했는데 전입신고 해줄 수 있어?")
    assert args_of(result, "gov24_move_in_report")["new_address"] == "효원로 25"


# -- places and regions ----------------------------------------------------------------------------


def test_a_landmark_stays_a_landmark(engine):
    assert args_of(ask(engine, "충장로 근처 약국"), "kakao_keyword_search") == {"query": "충장로"}
    assert bare_place("자갈치시장 계신데요", "ko") == "자갈치시장"
    assert find_place("어머니가 지금 광장시장에 계신데요 가까운 약국 알려주세요", "ko") == "광장시장"


@pytest.mark.parametrize(("text", "sido", "sigungu"), [
    ("수영구 응급실", "부산광역시", "수영구"), ("대구 수성구", "대구광역시", "수성구"), ("서울 중구는?", "서울특별시", "중구"),
    ("Free ER beds in Bupyeong-gu, Incheon?", "인천광역시", "부평구"), ("경기 광주시", "경기도", "광주시"),
    ("영종구", "인천광역시", "영종구"), ("화성시 동탄구", "경기도", "화성시 동탄구"),
])
def test_every_sigungu_of_the_official_table_resolves_its_sido(text, sido, sigungu):
    r = find_region(text)
    assert (r.sido_full, r.sigungu) == (sido, sigungu)


def test_a_name_in_several_sido_resolves_to_nothing_alone():
    assert find_region("중구 약국") is None


def test_the_named_region_wins_over_a_locate_step_recorded_elsewhere(engine):
    """「대구 수성구」 never gets another city's codes, even when Mock juso replays Busan."""
    result = ask(engine, "대구 수성구 교통사고 많은 곳")
    assert args_of(result, "koroad_accident_hotspots") == {"sido_code": "27", "gugun_code": "260", **{
        k: v for k, v in args_of(result, "koroad_accident_hotspots").items() if k not in ("sido_code", "gugun_code")}}


def test_a_day_and_a_portal_are_never_places():
    assert bare_place("3일 뒤는?", "ko") is None
    assert find_place("홈택스 근처 세무서", "ko") is None


# -- numbers and dates -----------------------------------------------------------------------------


def test_labelled_coordinates_and_counts(engine):
    assert coordinates_in("위도 35.17 경도 129.07") == (35.17, 129.07)
    assert coordinates_in("N35.5384 E129.3114") == (35.5384, 129.3114)
    assert coordinates_in("129.3435, 36.019") == (36.019, 129.3435)
    assert count_in("약국 3곳만") == 3 and count_in("세 군데만") == 3 and count_in("top 5") == 5
    result = ask(engine, "위도 35.17 경도 129.07 근처 약국 3곳만")
    assert args_of(result, "nmc_pharmacies") == {"latitude": 35.17, "longitude": 129.07, "limit": 3}


@pytest.mark.parametrize(("text", "month"), [("오월 공휴일", 5), ("시월 공휴일", 10), ("어린이날 쉬어?", 5), ("추석 연휴", 9)])
def test_months_in_words_and_holidays(text, month):
    assert month_in(text, NOW) == month


@pytest.mark.parametrize(("text", "day"), [
    ("3일 뒤", dt.date(2026, 12, 4)), ("2026년 12월 24일", dt.date(2026, 12, 24)), ("2026-12-24", dt.date(2026, 12, 24)),
    ("지난달 25일", dt.date(2026, 11, 25)), ("일주일 전", dt.date(2026, 11, 24)), ("어린이날", dt.date(2027, 5, 5)),
    ("추석", dt.date(2027, 9, 15)), ("November 20", dt.date(2026, 11, 20)),
])
def test_days_in_every_common_form(text, day):
    assert date_in(text, NOW) == day


@pytest.mark.parametrize("text", ["1992년 3월 4일생", "1992.03.04", "92-03-04", "920304-2", "March 4, 1992"])
def test_birth_dates_are_normalised(text):
    assert birth_date_in(text, NOW) == dt.date(1992, 3, 4)


# -- welfare keywords ------------------------------------------------------------------------------


@pytest.mark.parametrize(("request_", "keyword"), [("한부모 가정 지원 뭐 있어?", "한부모"), ("긴급복지 지원 제도 알려줘", "긴급복지"),
                                                  ("에너지바우처가 뭐야?", "에너지바우처")])
def test_welfare_keywords_are_sent_not_dropped(engine, request_, keyword):
    assert args_of(ask(engine, request_), "mohw_welfare_services")["keyword"] == keyword
