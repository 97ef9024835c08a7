"""Issue 18, end-to-end abstention: a name no vocabulary can know never makes the engine turn an
in-scope request away (runtime/turn/scope.py ``names_aside``), an English place must be a place
(runtime/understand/places.py ``english_place_shaped``), and the scope of a locate step is decided
before its upstream call, not after it."""

from __future__ import annotations

import asyncio

import pytest

from ummaya.runtime.turn import TurnRequest


def ask(engine, query: str):
    return asyncio.run(engine.ask(TurnRequest(query, mode="mock")))


def acted(r) -> list[str]:
    return [c["adapter_id"] for c in r.calls] + [e.data.get("adapter_id") for e in r.events if e.type == "permission"]


@pytest.mark.parametrize("query,want", [
    ("해운대 파라다이스호텔 몇 성급이야?", "해운대 호텔 몇 성급이야?"),  # the name stands as its kind
    ("사직튼튼정형외과 몇 시까지 해?", "정형외과 몇 시까지 해?"),  # a clinic named for its specialty
    ("래미안 원베일리 청약 경쟁률", "아파트 청약 경쟁률"),  # a complex by its brand
])
def test_a_facilitys_own_name_stands_as_its_kind(generated, query, want):
    from ummaya.runtime.turn.scope import names_aside

    assert names_aside(query) == want


@pytest.mark.parametrize("query", [
    "정형외과 찾아줘",  # a bare specialty is a kind, never a name
    "해운대 호텔 추천",  # a kind after a place word
    "어제 롯데 자이언츠 몇 대 몇이야",  # 자이 (a two-syllable brand) inside another word
    "삼성전자 주가 얼마야",
    "김치찌개 레시피 알려줘",
])
def test_a_request_without_a_facilitys_name_is_left_as_it_is(generated, query):
    from ummaya.runtime.turn.scope import names_aside

    assert names_aside(query) is None


@pytest.mark.parametrize("query,adapter_id", [
    ("서면그랜드호텔 등급이 몇 성급이야?", "mois_hotel_safety"),
    ("하단동 사직튼튼정형외과에 MRI 있어?", "hira_hospital_equipment"),
])
def test_an_unknown_facility_name_does_not_turn_an_in_scope_request_away(engine, query, adapter_id):
    r = ask(engine, query)
    assert r.stop_reason != "no_adapter", r.answer
    assert adapter_id in acted(r), acted(r)


def test_a_clinic_named_for_its_specialty_is_read_as_the_hospitals_name(engine):
    r = ask(engine, "하단동 사직튼튼정형외과에 MRI 있어?")
    args = next(c["arguments"] for c in r.calls if c["adapter_id"] == "hira_hospital_equipment")
    assert "사직튼튼정형외과" in args.get("hospital_name", ""), args


def test_when_nothing_fits_but_a_name_the_rest_is_read_again_and_said_so(engine):
    r = ask(engine, "사직튼튼정형외과 몇 시까지 해?")
    assert r.stop_reason != "no_adapter", r.answer
    again = [e.data for e in r.events if e.type == "check" and e.data.get("check") == "names_aside"]
    assert again and "정형외과 몇 시까지" in again[0]["message"]


@pytest.mark.parametrize("query", [
    "how many calories in a banana",  # a common noun
    "who won the world cup in 2022",  # a number
    "how do I center a div in css",
    "is it rude to eat at the table",
])
def test_an_english_anchor_before_no_place_reads_no_place(generated, query):
    from ummaya.runtime.understand.places import find_place

    assert find_place(query, "en") is None


@pytest.mark.parametrize("query,place", [
    ("is there an ER open near Seomyeon", "서면"),
    ("ENT clinic close to Busan station", "부산역"),
    ("pharmacy near haeundae-gu", "haeundae-gu"),
    ("defibrillator near the subway station", "subway station"),
    ("bus stops near 부산역", "부산역"),
])
def test_an_english_place_is_a_name_or_has_a_places_shape(generated, query, place):
    from ummaya.runtime.understand.places import find_place

    assert find_place(query, "en") == place


def test_no_upstream_call_is_spent_on_the_way_to_a_find_the_scope_decision_turns_away(engine):
    # the tour search would only be offered for a label of its code field (a restaurant): the
    # place search for Gangnam is never called before the way out
    r = ask(engine, "Book a table at a restaurant in Gangnam")
    assert r.stop_reason == "no_adapter", (r.stop_reason, acted(r))
    assert r.calls == [], r.calls


def test_a_protected_adapter_covering_the_whole_request_is_no_near_miss(engine):
    r = ask(engine, "I want to pay my speeding ticket")
    assert r.stop_reason == "consent_required", (r.stop_reason, r.answer)
    assert "traffic_fine_payment" in acted(r)


def test_eval_engine_counts_the_upstream_calls_spent_before_a_way_out(engine):
    from ummaya.runtime.eval_abstention import compare, format_comparison
    from ummaya.runtime.retrieve.eval_retrieval import EvalRequest

    reqs = [EvalRequest("Book a table at a restaurant in Gangnam", (), "out_of_scope", "tune"),
            EvalRequest("하단역 근처 응급실 좀", ("nmc_emergency_rooms",), "colloquial_ko", "tune")]
    c = compare(reqs, engine, lambda q: [])
    assert c.rows["Book a table at a restaurant in Gangnam"].stop_reason == "no_adapter"
    assert c.rows["하단역 근처 응급실 좀"].spent == 0  # calls of an answered turn are no waste
    assert c.as_dict()["calls_before_way_out"] == 0
    assert "upstream calls spent before a way out: 0" in format_comparison(c)


def test_a_way_out_after_a_dispatched_call_is_counted():
    from types import SimpleNamespace

    from ummaya.runtime.eval_abstention import spent_on_way_out

    r = SimpleNamespace(stop_reason="no_adapter", calls=[{"status": "ok"}, {"status": "consent_required"}])
    assert spent_on_way_out(r) == 1
    assert spent_on_way_out(SimpleNamespace(stop_reason="completed", calls=[{"status": "ok"}])) == 0


def test_a_kind_that_is_a_label_of_a_code_field_offers_its_adapter_when_retrieval_finds_nothing(engine):
    # 「신경외과」, the kind of 연산바른신경외과, is one of the hospital search's official labels: the
    # reading with the name set aside is what the label-only rule reads, not the glued name
    r = ask(engine, "연산바른신경외과 CT 있어?")
    assert r.stop_reason != "no_adapter", r.answer
    assert any(c["adapter_id"].startswith("hira_") for c in r.candidates), r.candidates


def test_a_channels_phrase_inside_the_place_asked_around_is_where_not_what(engine):
    # "subway" is the metro channel's phrase, but here it is part of the place near which the AED is
    r = ask(engine, "is there an AED near the subway station exit")
    assert r.stop_reason != "no_adapter", r.answer
    assert "nmc_aed_locations" in acted(r), acted(r)


def test_a_channels_phrase_outside_any_place_still_goes_to_the_channel(engine):
    r = ask(engine, "서울 지하철 강남역에서 홍대입구역 몇 분 걸려?")
    assert r.stop_reason == "no_adapter"

