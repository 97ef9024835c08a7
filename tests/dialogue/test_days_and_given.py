"""The day asked about (runtime/turn/days.py) and earlier personal values kept as keyed digests
(runtime/dialogue/given.py), with personal data never read as a place or a language."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
from typing import Any

import pytest

from ummaya.runtime.guard.personal import contains_personal
from ummaya.runtime.plan.protocol import Action, PlanContext, ToolCall

from .conftest import Talk, args_of, calls

KST = dt.timezone(dt.timedelta(hours=9))


@pytest.fixture
def on_fixture_day(monkeypatch):
    """The Mock forecast is issued 2026-12-01 02시 and runs to 12-03 23시; the turn's clock is that day
    (the engine fixture pins it for the dispatcher too: Mock then moves nothing)."""
    monkeypatch.setattr("ummaya.runtime.turn.context.now_kst", lambda: dt.datetime(2026, 12, 1, 9, 0, tzinfo=KST))


def forecast_lines(r: Any) -> list[str]:
    return [ln for ln in r.answer.splitlines() if ln.startswith("- ") and "시:" in ln]


def test_a_follow_up_day_shows_that_day(talk: Talk, on_fixture_day) -> None:
    first = talk("부산 날씨 알려줘")
    assert forecast_lines(first)[0].startswith("- 1일")
    r = talk("내일은?")
    assert calls(r) == ["kma_short_term_forecast"]
    lines = forecast_lines(r)
    assert lines and all(ln.startswith("- 2일") for ln in lines), r.answer
    assert "12월 2일(수)" in r.answer.splitlines()[0]
    # The model's evidence is scoped too: no row of another day backs a claim.
    assert {i["forecast_date"] for i in r.evidence[-1]["summary"]["items"]} == {"20261202"}


def test_a_day_the_data_does_not_cover_is_said_plainly(talk: Talk, on_fixture_day) -> None:
    talk("부산 날씨 알려줘")
    r = talk("글피는?")  # a 02시 base covers today, 내일 and 모레 (834 rows), not 글피
    assert calls(r) == ["kma_short_term_forecast"]
    first = r.answer.splitlines()[0]
    assert "12월 4일(금)" in first and "없습니다" in first, r.answer
    assert "12월 1일 03시부터 12월 3일 23시까지" in first


def test_the_day_carries_to_a_new_place(talk: Talk, on_fixture_day) -> None:
    talk("내일 부산 날씨")
    r = talk("서울은?")
    assert calls(r)[-1] == "kma_short_term_forecast"
    assert all(ln.startswith("- 2일") for ln in forecast_lines(r)), r.answer


def test_english_weekday_and_weekend(engine, on_fixture_day) -> None:
    r = Talk(engine, "en-day")("weather near Busan Station tomorrow")
    assert r.answer.startswith("For Wed Dec 2"), r.answer
    r = Talk(engine, "en-day")("what about the weekend?")
    assert "Sat Dec 5, Sun Dec 6" in r.answer.splitlines()[0] and "does not cover" in r.answer


def test_a_new_request_without_a_day_is_not_scoped(talk: Talk, on_fixture_day) -> None:
    talk("모레 부산 날씨")
    r = talk("서울시청 근처 응급실")
    assert "요청하신" not in r.answer
    r = talk("부산 날씨 알려줘")  # a new request names no day: the whole forecast
    assert forecast_lines(r)[0].startswith("- 1일") and "요청하신" not in r.answer


# -- personal data in a reply to the engine's own question ---------------------------------------

@pytest.mark.parametrize("reply, place", [
    ("010-1234-5678 하단동이요", "하단동"),
    ("제 주민번호는 900101-1234567 인데요 사하구 하단동", "사하구 하단동"),
    ("hong@example.com 하단동", "하단동"),
    ("제 이메일은 hong@example.com 이고 하단동이에요", "하단동"),
    ("이름은 홍길동이고 하단동", "하단동"),
    ("연락처 010-1111-2222, 부산역 쪽이에요", "부산역"),
])
def test_personal_data_in_the_answer_is_never_the_place(engine, reply: str, place: str) -> None:
    talk = Talk(engine, f"er-{abs(hash(reply))}")
    assert talk("근처 응급실 알려줘").stop_reason == "needs_input"
    r = talk(reply)
    assert calls(r) == ["kakao_keyword_search", "nmc_emergency_rooms"], r.calls
    assert args_of(r, "kakao_keyword_search") == {"query": place}
    assert r.language == "ko"
    for c in r.calls:
        assert not contains_personal(c["arguments"]) and not contains_personal(c["upstream_url"] or "")
    assert "홍길동" not in json.dumps(r.calls, ensure_ascii=False)


@pytest.mark.parametrize("reply", ["전화 01012345678", "연락처 010-1111-2222", "제 이메일은 a@b.com 이에요",
                                   "my phone is 010-1234-5678", "이름은 홍길동이에요"])
def test_only_personal_data_keeps_the_question_open(engine, reply: str) -> None:
    talk = Talk(engine, f"only-{abs(hash(reply))}")
    talk("근처 응급실 알려줘")
    r = talk(reply)
    assert r.stop_reason == "needs_input" and calls(r) == [], r.calls
    r = talk("하단동")
    assert calls(r) == ["kakao_keyword_search", "nmc_emergency_rooms"]


def test_a_personal_value_glued_to_a_locate_query_is_redacted_with_an_event(engine) -> None:
    talk = Talk(engine, "er-red")
    talk("근처 응급실 알려줘")
    r = talk("010-1234-5678 하단동이요")
    assert args_of(r, "kakao_keyword_search") == {"query": "하단동"}
    assert "010-1234-5678" not in json.dumps([e.model_dump() for e in r.events], ensure_ascii=False)


# -- argument provenance across turns ---------------------------------------------------------------

class RememberingPlanner:
    """A planner (a model whose client keeps the history, say) that fills the eligibility check with
    the name and birth date the citizen gave in an earlier turn."""

    name = "remembering"

    def __init__(self, name: str = "최현우", birth: str = "1990-05-14"):
        self.person, self.birth = name, birth

    async def plan(self, ctx: PlanContext, on_delta: Any = None) -> Action:
        if ctx.evidence:
            return Action(kind="answer", text="")
        if "확인" not in ctx.request:
            return Action(kind="ask", text="어떤 급여를 확인할까요?", missing=["keyword"])
        return Action(kind="call", calls=[ToolCall("c1", "welfare_eligibility_check", {
            "person_name": self.person, "birth_date": self.birth, "service_name": "주거급여"})])


def _engine(catalog, retriever, store, planner):
    from ummaya.runtime.assemble import build_engine
    from ummaya.runtime.dispatch import Dispatcher

    return build_engine(catalog.root, catalog=catalog, retriever=retriever, store=store,
                        dispatcher=Dispatcher(catalog, env={}), planner=planner)


def test_a_value_given_in_an_earlier_turn_is_accepted_without_being_stored(catalog, retriever, store) -> None:
    eng = _engine(catalog, retriever, store, RememberingPlanner())
    talk = Talk(eng, "prov-1")
    talk("제 이름은 최현우이고 1990년 5월 14일생이에요")
    r = talk("주거급여 받을 수 있는지 확인해줘", consents=("welfare_eligibility_check",))
    assert r.stop_reason == "completed", (r.stop_reason, r.answer)
    assert calls(r) == ["welfare_eligibility_check"]
    # The session holds digests, never the values (nor their normal forms).
    stored = json.dumps(store.get_session("prov-1").__dict__, ensure_ascii=False, default=str)
    for raw in ("최현우", "1990-05-14", "19900514", "1990년"):
        assert raw not in stored
    dialogue = store.get_session("prov-1").dialogue
    assert dialogue["given"] and all(len(d) == 20 for d in dialogue["given"])


def test_a_value_never_given_is_still_refused(catalog, retriever, store) -> None:
    eng = _engine(catalog, retriever, store, RememberingPlanner())
    talk = Talk(eng, "prov-2")
    talk("제 이름은 김철수예요")  # another name, and no birth date
    r = talk("주거급여 받을 수 있는지 확인해줘", consents=("welfare_eligibility_check",))
    assert r.stop_reason == "needs_input"
    assert r.calls[0]["status"] == "refused"


def test_digests_do_not_cross_sessions(catalog, retriever, store) -> None:
    eng = _engine(catalog, retriever, store, RememberingPlanner())
    Talk(eng, "prov-3a")("제 이름은 최현우이고 1990년 5월 14일생이에요")
    r = Talk(eng, "prov-3b")("주거급여 받을 수 있는지 확인해줘", consents=("welfare_eligibility_check",))
    assert r.stop_reason == "needs_input"


def test_digests_are_keyed_per_session() -> None:
    from ummaya.runtime.dialogue.given import digests, forms_of_text, given_earlier, session_key

    a, b = session_key("a"), session_key("b")
    known = set(digests(a, forms_of_text("010 1234 5678, 홍 길동, 88년 3월 2일")))
    assert given_earlier("phone", "010-1234-5678", a, known)
    assert given_earlier("person_name", "홍길동", a, known)
    assert given_earlier("birth_date", "1988-03-02", a, known)
    assert not given_earlier("phone", "010-1234-5678", b, known)
    assert not given_earlier("person_name", "김길동", a, known)


def test_another_day_moves_from_a_current_observation_to_the_forecast(talk: Talk, on_fixture_day) -> None:
    first = talk("부산역 근처 지금 기온")
    assert calls(first)[-1] == "kma_ultra_short_nowcast"
    r = talk("내일은?")
    assert calls(r) == ["kma_short_term_forecast"]  # same place, no new locate
    assert args_of(r, "kma_short_term_forecast") == args_of(first, "kma_ultra_short_nowcast")
    assert all(ln.startswith("- 2일") for ln in forecast_lines(r)), r.answer


# -- corrections, bare yes / no, replies after a consent notice -----------------------------------

def test_a_correction_drops_what_it_rejects(talk: Talk) -> None:
    first = talk("서울 미세먼지 어때?")
    assert args_of(first, "airkorea_air_quality")["sido"] == "서울"
    r = talk("아니 서울 말고 부산")
    assert calls(r) == ["airkorea_air_quality"] and args_of(r, "airkorea_air_quality")["sido"] == "부산"


def test_no_to_the_engines_question_runs_nothing(talk: Talk) -> None:
    assert talk("근처 응급실 알려줘").stop_reason == "needs_input"
    r = talk("아니")
    assert r.stop_reason == "needs_input" and calls(r) == [] and "진행하지 않았" in r.answer
    r = Talk(talk.engine, "no-en")("find a pharmacy near me")
    r = Talk(talk.engine, "no-en")("no thanks")
    assert calls(r) == [] and "did not go ahead" in r.answer


@pytest.mark.parametrize("yes", ["네", "응 해줘", "yes", "동의합니다"])
def test_yes_after_a_consent_notice_resumes_that_intent(engine, yes: str) -> None:
    talk = Talk(engine, f"yes-{abs(hash(yes))}")
    assert talk("주거급여 받을 수 있는지 확인해줘").stop_reason == "consent_required"
    r = talk(yes)  # without the consent flag: the notice again, never no_adapter
    assert r.stop_reason == "consent_required" and calls(r) == ["welfare_eligibility_check"]
    r = talk(yes, consents=("welfare_eligibility_check",))  # agreed: now it asks for the data
    assert r.stop_reason == "needs_input" and ("생년월일" in r.answer or "date of birth" in r.answer)
    r = talk("최현우 1990-05-14")
    assert r.stop_reason == "completed" and calls(r) == ["welfare_eligibility_check"]


def test_personal_data_after_a_consent_notice_resumes_it(engine) -> None:
    talk = Talk(engine, "consent-then-name")
    talk("주거급여 받을 수 있는지 확인해줘")
    r = talk("이름은 최현우, 1990-05-14", consents=("welfare_eligibility_check",))
    assert r.stop_reason == "completed" and calls(r) == ["welfare_eligibility_check"]


def test_mock_says_when_it_replays_another_thing_than_asked(talk: Talk) -> None:
    first = talk("타이레놀 부작용 알려줘")
    assert "모의 데이터는" not in first.answer
    r = talk("게보린은?")
    assert args_of(r, "mfds_easy_drug_info")["drug_name"] == "게보린"
    assert r.answer.startswith("모의 데이터는 '타이레놀' 기준입니다 (요청하신 '게보린'의 데이터가 아닙니다).")


@pytest.mark.parametrize("ack", ["고마워", "감사합니다!", "네", "thanks", "아니"])
def test_an_acknowledgement_runs_nothing_again(engine, ack: str) -> None:
    talk = Talk(engine, f"ack-{abs(hash(ack))}")
    assert talk("부산역 근처 응급실").stop_reason == "completed"
    r = talk(ack)
    assert r.stop_reason == "needs_input" and calls(r) == [], r.calls
    # … and the conversation still carries: a new place keeps the topic.
    assert calls(talk("하단동은?")) == ["kakao_keyword_search", "nmc_emergency_rooms"]


def test_a_one_syllable_topic_is_a_topic(talk: Talk, on_fixture_day) -> None:
    talk("부산역 근처 응급실")
    r = talk("주말에 비 와?")  # was: the emergency rooms again (「비」 was no topic word)
    assert calls(r)[-1] == "kma_short_term_forecast"
    assert "12월 5일(토), 12월 6일(일)" in r.answer.splitlines()[0]


def test_a_pointer_fills_from_the_conversation_not_from_its_own_words(talk: Talk) -> None:
    talk("타이레놀 부작용 알려줘")
    r = talk("그거 어린이도 먹어도 돼?")  # was: drug_name 「어린이도」
    assert args_of(r, "mfds_easy_drug_info")["drug_name"] == "타이레놀"
    bus = Talk(talk.engine, "pointer-bus")
    bus("부산역 근처 응급실")
    r = bus("거기 버스 정류장")  # was: stop_name 「거기」
    # The stops near the carried place (tago_bus_stops_nearby) or arrivals at a named stop: either
    # way 「거기」 points at the place and is never an argument itself.
    bus_calls = [c for c in r.calls if c["adapter_id"] in ("tago_bus_arrivals", "tago_bus_stops_nearby")]
    assert bus_calls, r.calls
    assert all("거기" not in map(str, c["arguments"].values()) for c in bus_calls), r.calls
    assert "'거기'" not in r.answer
