"""What a citizen sees (issue 21): the emergency number first, an honest way out of what UMMAYA
cannot do, and no near miss reaching another service's consent notice — for the offline planner
and for a model (a scripted OpenAI-compatible server), because the engine enforces it."""

from __future__ import annotations

import asyncio
import json

import pytest

from tests.support.fake_openai import FakeOpenAIServer, stream_text, stream_tool_calls
from ummaya.runtime.plan.openai_compat import OpenAICompatPlanner
from ummaya.runtime.turn import TurnEngine, TurnRequest


def ask(engine, query: str, **kw):
    return asyncio.run(engine.ask(TurnRequest(query, mode="mock", **kw)))


def with_model(engine, srv) -> TurnEngine:
    planner = OpenAICompatPlanner(srv.base_url, "test-key", "fake-model", timeout_s=5, max_retries=0)
    return TurnEngine(engine.catalog, engine.retriever, engine.dispatcher, planner, store=engine.store)


def first_line(r) -> str:
    return r.answer.strip().splitlines()[0]


def deltas(r) -> list:
    return [e for e in r.events if e.type == "delta"]


# -- emergencies first ---------------------------------------------------------------------------

EMERGENCIES = [
    ("아버지가 갑자기 쓰러졌어요 어떻게 해요", "119"),
    ("엄마가 숨을 안 쉬어요", "119"),
    ("가슴이 너무 아프고 식은땀이 나요", "119"),
    ("아이가 피가 안 멈춰요", "119"),
    ("집에 불이 났어요", "119"),
    ("주방에서 가스 냄새가 나요", "119"),
    ("누가 문을 부수고 들어오려고 해요", "112"),
    ("모르는 남자가 계속 따라와요", "112"),
    ("my friend is not breathing", "119"),
    ("There's a fire in my building", "119"),
    ("someone is following me home", "112"),
    # stroke, a fall, an overdose, water, smoke and a knife in the citizen's own words
    ("할머니가 갑자기 말을 못 하세요", "119"),
    ("할아버지가 넘어지셔서 못 일어나세요", "119"),
    ("동생이 약을 잔뜩 먹었어요", "119"),
    ("친구가 바다에 빠졌어요", "119"),
    ("집에 연기가 차요", "119"),
    ("밖에 누가 칼 들고 있어요", "112"),
    ("my grandmother's face is drooping", "119"),
    ("my kid swallowed pills", "119"),
]


@pytest.mark.parametrize("query,number", EMERGENCIES)
def test_offline_an_emergency_opens_with_its_number_whatever_the_stop(engine, query, number):
    r = ask(engine, query)
    assert number in first_line(r), r.answer
    first = deltas(r)[0]
    assert first.data["part"] == "emergency" and number in first.data["numbers"]
    # said before anything else happened: ahead of retrieval's candidates event
    types = [e.type for e in r.events]
    assert types.index("delta") < types.index("candidates")
    assert r.answer == "".join(e.data["text"] for e in deltas(r))


def test_the_turn_goes_on_after_the_emergency_line(engine):
    r = ask(engine, "동아대 승학캠퍼스 근처에서 친구가 쓰러졌어요 응급실 어디예요")
    assert first_line(r).startswith("🚨") and "119" in first_line(r)
    assert r.stop_reason == "completed"
    assert [c["adapter_id"] for c in r.calls][-1] == "nmc_emergency_rooms"
    assert "동아대학교병원" in r.answer


def test_an_emergency_with_nothing_to_look_up_says_plainly_what_to_do(engine):
    r = ask(engine, "집에 불이 났어요")
    assert r.stop_reason == "no_adapter"
    assert "119" in first_line(r) and "대신할 수 없습니다" in r.answer
    assert "정부24" not in r.answer  # no generic portal advice in a fire


@pytest.mark.parametrize("query", ["근처 응급실 알려줘", "화재 보험 어디서 들어", "심폐소생술 교육 어디서 받아", "운동 강도가 너무 센가요",
                                   "Where is the nearest emergency room?", "fire station near Busan station",
                                   "영어로 말을 못 하는데 통역 도와줄 곳 있어?", "약 먹고 운전해도 돼?",
                                   "My phone is not waking up from sleep mode", "I can't speak Korean, where can I get help?"])
def test_questions_about_a_topic_are_not_emergencies(engine, query):
    r = ask(engine, query)
    assert not [e for e in deltas(r) if e.data.get("part") == "emergency"], r.answer


def test_model_planner_an_emergency_opens_with_its_number_even_when_the_model_only_talks(engine):
    # The model answers twice without evidence: the engine's ungrounded stop — still 119 first.
    script = [stream_text("침착하세요. 괜찮을 거예요."), stream_text("괜찮을 거예요.")]
    with FakeOpenAIServer(script=script) as srv:
        r = asyncio.run(with_model(engine, srv).ask(TurnRequest("아버지가 갑자기 쓰러졌어요", mode="mock")))
    assert r.stop_reason == "ungrounded"
    assert "119" in first_line(r), r.answer


def test_model_planner_an_emergency_then_its_answer(engine):
    # The citizen types the point: a model's coordinates must come from the conversation.
    script = [
        stream_tool_calls([("nmc_emergency_rooms", json.dumps({"latitude": 35.1167, "longitude": 128.968}))]),
        stream_text("가장 가까운 곳은 삼육부산병원입니다."),
    ]
    with FakeOpenAIServer(script=script) as srv:
        r = asyncio.run(with_model(engine, srv).ask(TurnRequest("my dad collapsed, nearest ER to 35.1167, 128.968", mode="mock")))
    assert r.stop_reason == "completed", r.answer
    assert first_line(r).startswith("🚨") and "119" in first_line(r)
    assert "삼육부산병원" in r.answer and r.grounded, r.removed_claims


def test_emergency_phrases_are_registry_data(engine):
    """A phrase added to the compiled data is recognised with no code change."""
    from ummaya.model.guidance import Emergency

    g = engine.catalog.guidance
    extra = Emergency.model_validate({
        "id": "test_only", "numbers": ["119"], "priority": 1,
        "says": {"ko": "🚨 시험용: 119에 전화하세요.", "en": "🚨 Test: call 119."},
        "cannot": {"ko": "시험용.", "en": "Test."},
        "phrases": {"ko": ["벌집을건드렸"], "en": []},
        "source": {"title": "test", "url": "https://www.119.go.kr", "verified": "2026-12-01"},
    })
    before = ask(engine, "벌집을 건드렸어요")
    g.emergencies.append(extra)
    try:
        after = ask(engine, "벌집을 건드렸어요")
    finally:
        g.emergencies.remove(extra)
    assert "시험용" not in before.answer and first_line(after).startswith("🚨 시험용")


# -- an honest way out ----------------------------------------------------------------------------

# Services no adapter serves: the channels registry answers them.
OUT_OF_SCOPE = [
    ("반려견 등록하고 싶어", "animal.go.kr"),
    ("지갑을 잃어버렸어 어디서 찾아", "lost112.go.kr"),
    ("건강보험 피부양자 등록하고 싶어", "nhis.or.kr"),
    ("대형폐기물 버리려면 어떻게 해", "120"),
    ("What's the price of Bitcoin right now?", "fss.or.kr"),
]
# Services whose channel an adapter now serves (handoffs): the adapter answers, with the same site,
# never the channel that names its service (codegen/emit_guidance.py check_hidden_services).
SERVED = [
    ("여권 재발급 신청해줘", "passport_reissue_handoff", "passport.go.kr"),
    ("실업급여 신청하려면 어떻게 해", "work24_unemployment_benefit_handoff", "work24.go.kr"),
    ("자동차세 납부하고 싶어", "wetax_local_tax_payment_handoff", "wetax.go.kr"),
    ("국민연금 예상 수령액 알고 싶어", "nps_pension_estimate_handoff", "nps.or.kr"),
    ("주민등록등본 떼고 싶어", "gov24_resident_registration_copy_handoff", "gov.kr"),
    ("국공립 어린이집 입소 대기 신청", "childcare_waitlist_handoff", ""),
]


@pytest.mark.parametrize("query,adapter_id,where", SERVED)
def test_a_channel_an_adapter_serves_is_answered_by_the_adapter(engine, query, adapter_id, where):
    r = ask(engine, query)
    assert r.stop_reason != "no_adapter", r.answer
    assert adapter_id in [c["adapter_id"] for c in r.calls], (r.stop_reason, r.answer)
    assert where in r.answer


@pytest.mark.parametrize("query,where", OUT_OF_SCOPE)
def test_out_of_scope_says_what_umma_cannot_do_and_where(engine, query, where):
    r = ask(engine, query)
    assert r.stop_reason == "no_adapter", (r.stop_reason, r.answer)
    assert where in r.answer
    assert ("수 없습니다" in r.answer) or ("cannot" in r.answer)
    assert not [e for e in r.events if e.type == "permission" and e.data["decision"] == "consent_required"]
    assert not [e for e in r.events if e.type == "call_started"]


def test_when_an_adapter_exists_it_answers_not_the_channel(engine):
    # The school-meals adapter exists: a meals request goes to it (it asks which school), never
    # to a way out.
    r = ask(engine, "우리 애 학교 급식 메뉴 알려줘")
    assert r.stop_reason != "no_adapter", r.answer
    assert r.stop_reason == "needs_input" or "neis_school_meals" in [c["adapter_id"] for c in r.calls]


@pytest.mark.parametrize("query", ["KTX 예매해줘", "book me a KTX ticket"])
def test_a_booking_handoff_answers_with_its_own_channel(engine, query):
    # korail_ticket_booking_handoff exists: its handoff, not the channels registry, answers.
    r = ask(engine, query)
    assert r.stop_reason == "handoff_required", (r.stop_reason, r.answer)
    assert [c["adapter_id"] for c in r.calls] == ["korail_ticket_booking_handoff"]
    assert "letskorail.com" in r.answer


@pytest.mark.parametrize("query", ["이 문장 영어로 번역해줘: 내일 만나요", "파이썬으로 리스트 정렬하는 코드 짜줘"])
def test_a_near_miss_found_only_weakly_is_not_answered(engine, query):
    r = ask(engine, query)
    assert r.stop_reason == "no_adapter" and not r.calls, (r.calls, r.answer)
    assert "도와드릴 수 없습니다" in r.answer


def test_a_plain_cannot_names_what_was_asked_to_do(engine):
    r = ask(engine, "국립중앙박물관 특별전 관람 예약해줘")
    assert r.stop_reason == "no_adapter"
    assert r.answer.startswith("UMMAYA는 예약이나 예매를 대신할 수 없습니다"), r.answer
    assert "gov.kr" in r.answer


def test_a_request_for_no_public_service_gets_a_plain_cannot_and_the_general_channel(engine):
    r = ask(engine, "김치찌개 레시피 알려줘")
    assert r.stop_reason == "no_adapter"
    assert "도와드릴 수 없습니다" in r.answer and "110" in r.answer


def test_the_service_a_request_names_still_reaches_its_consent_notice(engine):
    r = ask(engine, "주거급여 신청해줘")
    assert r.stop_reason == "consent_required" and "수집 항목" in r.answer


def test_model_planner_a_near_miss_never_reaches_another_services_consent_notice(engine):
    # The model picks the welfare application for a passport request: the engine refuses it
    # before the gate, with the passport channel — no consent notice for welfare.
    script = [stream_tool_calls([("welfare_application_submit", json.dumps({"service_name": "여권"}, ensure_ascii=False))])]
    with FakeOpenAIServer(script=script) as srv:
        r = asyncio.run(with_model(engine, srv).ask(TurnRequest("여권 재발급 신청해줘", mode="mock")))
    assert r.stop_reason == "no_adapter" and r.layer == "gate", (r.stop_reason, r.answer)
    assert "passport.go.kr" in r.answer
    assert not [e for e in r.events if e.type == "permission"]
    checks = [e.data for e in r.events if e.type == "check"]
    assert checks and checks[0]["check"] == "scope" and checks[0]["adapter_id"] == "welfare_application_submit"


def test_model_planner_asking_for_personal_data_for_an_unnamed_service_gets_the_way_out(engine):
    # A question for a name and a birth date, with a welfare adapter among the candidates, for a
    # request that names a pension: the consent notice would be another service's.
    script = [stream_text("성함과 생년월일이 어떻게 되세요?")]
    with FakeOpenAIServer(script=script) as srv:
        r = asyncio.run(with_model(engine, srv).ask(TurnRequest("국민연금 예상 수령액 신청하고 싶어", mode="mock")))
    assert r.stop_reason == "no_adapter", (r.stop_reason, r.answer)
    assert "nps.or.kr" in r.answer
    assert not [e for e in r.events if e.type == "permission" and e.data["decision"] == "consent_required"]


def test_a_word_another_service_shares_never_earns_a_consent_notice(engine):
    r = ask(engine, "이 과자 회수 대상인지 확인해줘")
    assert r.stop_reason == "no_adapter" and "foodsafetykorea.go.kr" in r.answer, r.answer


def test_in_scope_paraphrases_still_reach_their_protected_adapter(engine):
    # the service named in the citizen's own words, not the manifest's: the notice is the right one
    for query, adapter in (("PASS 앱으로 인증할래", "simple_auth_verify"), ("주소 옮기는 신고 어디서 해", "gov24_move_in_report"),
                           ("부업으로 번 돈 세금 내야 되나", "hometax_income_tax_filing")):
        r = ask(engine, query)
        assert r.stop_reason != "no_adapter" and adapter in [c["adapter_id"] for c in r.calls], (query, r.answer)


def test_consent_given_up_front_names_the_service(engine):
    # --consent ADAPTER is the citizen's own choice of that service: it goes ahead.
    r = ask(engine, "신청하고 싶어요", consents=("welfare_application_submit",))
    assert "UMMAYA는 이 요청을 도와드릴 수 없습니다" not in r.answer


# -- answer what was asked -------------------------------------------------------------------------

def holiday_rows(r) -> list[str]:
    return [ln[2:] for ln in r.answer.splitlines() if ln.startswith("- 20")]


def test_a_holiday_named_by_its_name_is_answered_alone(engine):
    r = ask(engine, "올해 추석 연휴 언제야?")
    assert holiday_rows(r) == ["2026-09-24 추석", "2026-09-25 추석", "2026-09-26 추석"], r.answer
    assert "공휴일 3일" in r.answer


def test_a_month_question_names_just_that_month(engine):
    r = ask(engine, "5월에 공휴일 며칠")
    assert [row[:7] for row in holiday_rows(r)] == ["2026-05"] * 3, r.answer
    assert "공휴일 3일" in r.answer and r.answer.splitlines()[0].startswith("요청하신 5월")


def test_a_month_without_holidays_says_so_in_the_adapters_words(engine):
    r = ask(engine, "7월에 공휴일 있어?")
    assert holiday_rows(r) == [] and "이 기간에는 공휴일이 없습니다" in r.answer


def test_the_whole_year_when_the_year_is_asked(engine):
    r = ask(engine, "올해 공휴일 알려줘")
    assert len(holiday_rows(r)) == 20


def test_a_partial_request_says_which_part_it_cannot_with_the_channel(engine):
    r = ask(engine, "서울대병원 진료 예약하고 싶어")
    assert r.answer.startswith("UMMAYA는 병원 진료를 예약할 수 없고"), r.answer
    assert "hira.or.kr" in r.answer and [c["adapter_id"] for c in r.calls][-1] == "hira_hospitals"
    parts = [e.data["part"] for e in deltas(r)]
    assert parts[0] == "limit"
    bus = ask(engine, "부산 1003번 버스 첫차")
    # Said by the adapter's limit or, when no bus adapter is named for it, by the timetable
    # channel: either way the answer opens with what it cannot do and names where to look.
    first_line = bus.answer.splitlines()[0]
    assert "첫차" in first_line and "없습니다" in first_line and "tago.go.kr" in bus.answer


def test_a_request_that_asks_nothing_the_adapter_lacks_gets_no_limit_line(engine):
    r = ask(engine, "동아대 승학캠퍼스 정류장 버스 언제 와")
    assert "시간표" not in r.answer and not [e for e in deltas(r) if e.data.get("part") == "limit"]


def test_english_answers_translate_the_engines_own_words(engine):
    import re as _re

    r = ask(engine, "Will it rain tomorrow near Dong-A University?")
    assert "under 1mm" in r.answer and "미만" not in r.answer
    own = {"note", "boundary", "next", "label", "source", "question", "way_out", "stop", "limit"}
    for e in deltas(r):
        if e.data.get("part") in own:
            # upstream names (a place, an address) stay Korean; the engine's own words do not
            text = _re.sub(r"Location used: .*|\(https?://[^)]*\)", "", e.data["text"])
            assert not _re.search(r"[가-힣]{2,}", text.replace("동아대학교", "")), e.data


def _dev_emergencies() -> list:
    from pathlib import Path

    from ummaya.runtime.eval_citizen import load

    f = load(Path(__file__).resolve().parents[2] / "evals" / "citizen.yaml")
    return [r for r in f.requests if r.scope == "emergency" and r.useful.emergency_first and r.split == "dev"]


@pytest.mark.parametrize("req", _dev_emergencies(), ids=lambda r: r.id)
def test_model_planner_every_dev_emergency_opens_with_its_number(engine, req):
    # The engine, not the planner, puts the number first: a model that only talks, over the
    # eval set's dev emergencies (never its held-out ones, which are scored, not tested on).
    from ummaya.runtime.eval_citizen import run_request

    with FakeOpenAIServer(script=[stream_text("침착하세요. 괜찮을 거예요.")] * 6) as srv:
        r = asyncio.run(run_request(with_model(engine, srv), req))
    assert req.useful.emergency_first in first_line(r), r.answer
