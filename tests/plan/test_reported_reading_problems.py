"""Issue 17 stage 2, item 2: problems adapter authors reported, each through the real planner on
the committed catalog (offline, Mock) — a keyword without the region word or grammar leftovers,
a reply filling a required keyword, a time carried by slot type to a new topic."""

from __future__ import annotations

import pytest

from tests.support.offline_turns import ask_all


def args_of(result, adapter: str) -> dict | None:
    return next((c["arguments"] for c in result.calls if c["adapter_id"] == adapter), None)


def test_a_keyword_leaves_the_region_to_its_own_field_and_what_is_asked_about_out(engine):
    [r] = ask_all(engine, "부산 하단온누리약국 영업시간")
    assert args_of(r, "hira_pharmacy_search") == {"name": "하단온누리약국", "sido": "210000"}


def test_a_keyword_takes_no_grammar_noun(engine):
    [r] = ask_all(engine, "청년 관련 지원")
    assert args_of(r, "gov24_benefit_search") == {"keyword": "청년"}


def test_a_reply_naming_only_a_place_fills_the_required_keyword(engine):
    first, reply = ask_all(engine, "부산 공영주차장 빈자리 있어?", "자갈치")
    assert first.stop_reason == "needs_input"
    assert args_of(reply, "busan_public_parking_live") == {"name": "자갈치"}


def test_the_year_carries_by_slot_type_to_a_new_topic(engine):
    first, then = ask_all(engine, "2024년 부산 해운대구 교통사고 다발지역", "그 해 공휴일은?")
    assert args_of(first, "koroad_accident_hotspots")["year"] == 2024
    assert args_of(then, "kasi_public_holidays") == {"year": 2024}


def test_a_new_topic_naming_its_own_time_does_not_take_the_old_one(engine):
    _first, then = ask_all(engine, "2024년 부산 해운대구 교통사고 다발지역", "2025년 공휴일은?")
    assert args_of(then, "kasi_public_holidays") == {"year": 2025}


@pytest.mark.parametrize("word", ["받을", "관련", "영업시간"])
def test_leftover_words_are_never_keywords(word):
    from ummaya.runtime.understand.names import _may_be_keyword

    assert not _may_be_keyword(word)
    assert _may_be_keyword("하단온누리약국")


def test_an_ambiguous_district_in_a_follow_up_is_read_inside_the_conversations_sido(engine):
    _first, then = ask_all(engine, "울산 남구 사고다발지역 어디야?", "동구 사고다발지역은?")
    assert args_of(then, "koroad_accident_hotspots") == {"sido_code": "31", "gugun_code": "170"}


def test_an_ambiguous_district_sent_to_a_locate_step_keeps_the_sido(engine):
    _first, then = ask_all(engine, "울산 남구 사고다발지역 어디야?", "동구는?")
    assert args_of(then, "juso_address_search") == {"keyword": "울산광역시 동구"}


def test_a_district_of_its_own_sido_replaces_the_carried_one(engine):
    _first, then = ask_all(engine, "부산 사하구 응급실", "서울 종로구는?")
    assert args_of(then, "nmc_emergency_beds") == {"sido": "서울특별시", "sigungu": "종로구"}


def test_a_target_group_the_adapter_also_knows_stays_the_keyword(engine):
    # 노인 is a life-stage term (and never a medicine's name): a benefit search word all the same.
    [r] = ask_all(engine, "노인 관련 혜택 뭐 있어?")
    assert args_of(r, "gov24_benefit_search") == {"keyword": "노인"}


@pytest.mark.parametrize("request_, name", [
    ("새로 입사할 회사 한빛정밀 국민연금 가입 사업장이야?", "한빛정밀"),
    ("이번에 옮긴 직장 대성산업 국민연금 가입돼 있어?", "대성산업"),
])
def test_a_company_name_is_sent_without_what_describes_it(engine, request_, name):
    [r] = ask_all(engine, request_)
    assert args_of(r, "nps_workplace_lookup") == {"workplace_name": name}
