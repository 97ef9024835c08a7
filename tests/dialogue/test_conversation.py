"""Issue 9 items 2 and 3: answers to the engine's own question, follow-ups, deixis, carried topic."""

from __future__ import annotations

from .conftest import Talk, args_of, calls


def test_the_answer_to_the_engines_question_resumes_it(talk: Talk) -> None:
    r = talk("근처 응급실 알려줘")
    assert r.stop_reason == "needs_input" and calls(r) == []
    r = talk("하단동")  # was: traffic-accident hotspots
    assert calls(r) == ["kakao_keyword_search", "nmc_emergency_rooms"]
    assert args_of(r, "kakao_keyword_search") == {"query": "하단동"}


def test_a_dong_answering_a_pharmacy_question_is_no_consent_notice(talk: Talk) -> None:
    talk("근처 약국 알려줘")
    r = talk("하단동")  # was: the welfare-application consent notice
    assert r.stop_reason == "completed" and calls(r) == ["kakao_keyword_search", "nmc_pharmacies"]


def test_a_clearly_new_request_is_not_taken_as_the_answer(talk: Talk) -> None:
    talk("근처 약국")
    r = talk("부산 기상특보 있어?")
    assert calls(r) == ["kma_weather_warnings"]


def test_an_answer_with_another_services_word_still_answers(engine) -> None:
    talk = Talk(engine, consents=("welfare_eligibility_check",))
    assert talk("주거급여 받을 수 있는지 확인해줘").stop_reason == "needs_input"
    r = talk("이름은 최현우, 1990-05-14")  # 「이름」 is a place-search word; the answer fills the question
    assert calls(r) == ["welfare_eligibility_check"]


def test_new_place_same_topic(talk: Talk) -> None:
    assert calls(talk("서울 미세먼지 어때?")) == ["airkorea_air_quality"]
    r = talk("광주는?")  # was: ER bed availability
    assert calls(r) == ["airkorea_air_quality"] and args_of(r, "airkorea_air_quality")["sido"] == "광주"


def test_new_time_same_topic_and_place(talk: Talk) -> None:
    first = talk("서울시청 근처 날씨")
    r = talk("모레는?")  # was: no_adapter
    assert calls(r) == ["kma_short_term_forecast"]
    assert args_of(r, "kma_short_term_forecast") == args_of(first, "kma_short_term_forecast")


def test_new_topic_same_place(talk: Talk) -> None:
    first = talk("하단동 근처 날씨")
    r = talk("그럼 병원은?")
    assert calls(r) == ["hira_hospitals"]
    where = args_of(first, "kma_short_term_forecast")
    assert {k: args_of(r, "hira_hospitals")[k] for k in ("latitude", "longitude")} == where


def test_a_new_place_replaces_carried_coordinates(talk: Talk) -> None:
    talk("하단동 근처 약국")
    r = talk("서울시청 근처 응급실")  # was: Busan coordinates reused for a Seoul request
    assert calls(r) == ["kakao_keyword_search", "nmc_emergency_rooms"]
    assert args_of(r, "nmc_emergency_rooms")["latitude"] > 37


def test_deixis_resolves_to_the_carried_place(talk: Talk) -> None:
    talk("서울시청 근처 응급실")
    for text, adapter in (("거기 약국은?", "nmc_pharmacies"), ("그 근처 자동심장충격기도 있어?", "nmc_aed_locations"),
                          ("거기 미세먼지는 어때?", "airkorea_air_quality"), ("What's the weather like there?", None)):
        r = talk(text)
        assert r.stop_reason == "completed", text
        if adapter:
            assert calls(r) == [adapter], text
    assert args_of(talk("거기 미세먼지는?"), "airkorea_air_quality")["sido"] == "서울"


def test_a_bare_name_replaces_what_it_fits(talk: Talk) -> None:
    talk("타이레놀 먹어도 돼?")
    assert args_of(talk("게보린은?"), "mfds_easy_drug_info")["drug_name"] == "게보린"
    assert args_of(talk("부작용은?"), "mfds_easy_drug_info")["drug_name"] == "게보린"


def test_carried_topic_never_overrides_a_clear_new_request(talk: Talk) -> None:
    talk("하단동 근처 약국")
    assert calls(talk("타이레놀 먹어도 돼?")) == ["mfds_easy_drug_info"]
    assert calls(talk("서울 미세먼지 어때?")) == ["airkorea_air_quality"]


def test_prior_results_are_reused(engine) -> None:
    talk = Talk(engine, consents=("welfare_eligibility_check", "welfare_application_submit"))
    assert calls(talk("주거급여 받을 수 있는지 확인해줘. 이름은 최현우, 1990-05-14")) == ["welfare_eligibility_check"]
    r = talk("그럼 신청해줘")  # the benefit carries; only what was never kept is asked again
    assert r.stop_reason == "needs_input"
    r = talk("최현우 1990-05-14")
    assert calls(r) == ["welfare_application_submit"]
    assert args_of(r, "welfare_application_submit")["service_name"] == "주거급여"


def test_english_follow_up(talk: Talk) -> None:
    talk("weather near Seoul City Hall today")
    assert calls(talk("what about tomorrow?")) == ["kma_short_term_forecast"]


def test_the_dialogue_is_in_the_trace(talk: Talk, store) -> None:
    talk("근처 응급실 알려줘")
    r = talk("하단동")
    events = [e for e in store.get_trace(r.trace_id).events if e["type"] == "dialogue"]
    loaded, saved = events[0]["data"], events[-1]["data"]
    assert loaded["loaded"]["pending"]["adapter_id"] == "nmc_emergency_rooms"
    assert loaded["frame"]["kind"] == "answer"
    assert saved["saved"]["last_intent"]["adapter_id"] == "nmc_emergency_rooms"
    assert "pending" not in saved["saved"] and saved["saved"]["place"]["latitude"]
    assert saved["saved"]["facts"]["now_kst"].endswith("+09:00")


def test_a_turn_without_a_session_carries_nothing(engine) -> None:
    import asyncio

    from ummaya.runtime.turn import TurnRequest

    r = asyncio.run(engine.ask(TurnRequest("근처 응급실 알려줘", mode="mock")))
    assert r.stop_reason == "needs_input"
    assert not [e for e in r.events if e.type == "dialogue"]


def test_near_a_point_prefers_a_find_by_distance(talk: Talk) -> None:
    # 「부산역」 starts like 「부산」: a per-city bed list scores a little higher, but 「근처」 asks
    # what is near a point. A clear lead for beds stays.
    assert calls(talk("부산역 근처 응급실")) == ["kakao_keyword_search", "nmc_emergency_rooms"]
    assert calls(Talk(talk.engine, "beds")("부산역 근처 응급실 자리 있어?")) == ["nmc_emergency_beds"]


def test_typed_coordinates_are_a_point_too(talk: Talk) -> None:
    # Without its coordinates (retrieval never sees them) 「24시간 하는 응급실」 looks most like one
    # hospital's details; the coordinates ask what is near that point.
    assert calls(Talk(talk.engine, "typed")("24시간 하는 응급실 위도 36.019 경도 129.3435")) == ["nmc_emergency_rooms"]


def test_a_place_named_as_the_argument_is_no_point_to_search_around(talk: Talk) -> None:
    # 「at 공업탑 stop」 names the stop the arrivals take; nothing asks what is near it, so the
    # stops-nearby search (within the proximity tie) does not take the lead.
    first = calls(Talk(talk.engine, "stop")("bus arrivals at 공업탑 stop in Ulsan, just two"))
    assert first[:1] == ["tago_bus_arrivals"], first


def test_what_the_citizen_turns_away_from_is_no_topic(talk: Talk) -> None:
    talk("부산역 근처 응급실")
    assert calls(talk("응급실 말고 약국")) == ["nmc_pharmacies"]


def test_contracted_particles_are_not_places(talk: Talk) -> None:
    talk("하단동 근처 날씨")
    assert calls(talk("그럼 오후엔?")) == ["kma_short_term_forecast"]
