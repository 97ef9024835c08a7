"""The claim check alone (Korean and English), argument provenance alone, and the check read over
the engine's own answers: what the evidence says is never removed."""

from __future__ import annotations

import asyncio
import datetime as dt

import pytest

from ummaya.runtime.turn.claims import build_facts, check, sentences
from ummaya.runtime.turn.provenance import dates_in, given_by_citizen

KST = dt.timezone(dt.timedelta(hours=9))
ER = {"items": [
    {"name": "동아대학교병원", "category": "권역응급의료센터", "phone": "051-240-2000", "distance_km": 4.5,
     "er_beds": 6, "updated_at": "2026-12-01T02:13:42+09:00", "opens": "0900", "closes": "2000"},
    {"name": "삼육부산병원", "phone": "051-600-7575", "distance_km": 4.06},
], "total_count": 2}


@pytest.fixture
def facts():
    return build_facts([ER, {"title": "응급의료포털", "agency": "국립중앙의료원"}],
                       citizen=["동아대 승학캠퍼스 근처 응급실 알려줘"], tiers={"mock"},
                       clock=dt.datetime(2026, 12, 1, 11, 0, tzinfo=KST))


@pytest.mark.parametrize("sentence", [
    "동아대학교병원이 약 4.5km 거리에 있어요.",
    "삼육부산병원이 약 4.1km로 가장 가까워요.",  # 4.06 rounded
    "응급실 전화번호는 051-240-2000이에요.",
    "동아대학교병원에 병상 6개가 비어 있어요.",
    "2곳을 찾았어요.",  # a count of the records
    "12월 1일 오전 9시에 문을 열고 오후 8시에 닫아요.",
    "가까운 병원은 권역응급의료센터인 동아대학교병원이에요.",
    "실제로 제출된 것은 없습니다.",
    "응급 상황이면 119에 전화하세요.",
    "Dong-A is 4.5 km away: 동아대학교병원 (Dong-A University Hospital).",
    "Nothing was submitted.",
    "It opens at 9:00 am.",
    "(Mock 예시 데이터)",
])
def test_backed_claims_stay(facts, sentence):
    v = check(sentence, facts)
    assert v.grounded and v.text == sentence.strip(), v.removed


@pytest.mark.parametrize("sentence,kind", [
    ("응급실 직통 번호는 051-777-1234예요.", "phone"),
    ("Call 02-555-0101 to confirm.", "phone"),
    ("응급실 병상은 12개 남아 있어요.", "number"),
    ("응급실 환자의 73%가 경증입니다.", "number"),
    ("The wait is about 47 minutes.", "number"),
    ("12월 25일에는 휴진합니다.", "date"),
    ("It closes on December 24, 2026.", "date"),
    ("오후 11시에 접수를 마감해요.", "time"),
    ("It closes at 23:30.", "time"),
    ("접수번호는 2026-1130-7781입니다.", "identifier"),
    ("Your case number is BJR-88123.", "identifier"),
    ("하단중앙병원 응급실도 열려 있어요.", "facility"),
    ("The nearest one is Hadan Central Hospital.", "facility"),
    ("신청이 정상적으로 접수되었습니다.", "completion"),
    ("과태료가 납부 완료되었어요.", "completion"),
    ("Your application has been submitted.", "completion"),
    ("I have paid the fine for you.", "completion"),
    ("개인정보 제공에 동의하신 것으로 확인했습니다.", "consent"),
    ("You have consented to the data use.", "consent"),
    ("[Live · 국립중앙의료원] 실시간으로 조회한 결과예요.", "tier"),
    ("This is live data from the agency.", "tier"),
])
def test_unbacked_claims_go_with_their_sentence(facts, sentence, kind):
    text = f"동아대학교병원이 가까워요. {sentence} 출발 전에 전화하세요."
    v = check(text, facts)
    assert [r["kind"] for r in v.removed] == [kind], v.removed
    assert v.text == "동아대학교병원이 가까워요. 출발 전에 전화하세요."


def test_completion_stands_after_a_live_send_returned_ok():
    live = build_facts([{"status": "accepted"}], tiers={"live"}, live_send_ok=True)
    assert check("신청이 접수되었습니다.", live).grounded
    mock = build_facts([{"status": "accepted"}], tiers={"mock"})
    assert not check("신청이 접수되었습니다.", mock).grounded


def test_sentences_keep_decimals_lists_and_line_breaks():
    assert sentences("약 4.1km예요. 1. 동아대학교병원\n2. 삼육부산병원") == ["약 4.1km예요.", " 1. 동아대학교병원", "\n", "2. 삼육부산병원"]


@pytest.mark.parametrize("value,text,ok", [
    ("1988-03-02", "저 1988년 3월 2일생이에요", True),
    ("1988-03-02", "생년월일 88.3.2", True),
    ("1988-03-02", "880302-1234567", True),
    ("19880302", "1988-03-02", True),
    ("1988-03-03", "1988년 3월 2일생", False),
])
def test_birth_dates_compare_in_one_form(value, text, ok):
    assert given_by_citizen("birth_date", value, [text]) is ok
    assert (1988, 3, 2) in dates_in("1988년 3월 2일") and (2005, 1, 9) in dates_in("05.1.9")


def test_names_and_phones_compare_without_spacing():
    assert given_by_citizen("person_name", "홍길동", ["제 이름은 홍 길동입니다"])
    assert not given_by_citizen("person_name", "김철수", ["제 이름은 홍길동입니다"])
    assert given_by_citizen("phone", "01012345678", ["연락처 010 1234 5678"])
    assert not given_by_citizen("phone", "010-9999-0000", ["연락처 010 1234 5678"])


def test_the_engine_answers_pass_their_own_check(catalog, retriever, store, monkeypatch):
    """Read over every scenario's offline answer, the check removes nothing: the engine's rendered
    evidence is exactly what the facts hold (a bound on false removals from model prose)."""
    from tests.turn.conftest import REPO
    from ummaya.runtime.assemble import build_engine
    from ummaya.runtime.dispatch import Dispatcher
    from ummaya.runtime.scenarios import load_scenarios
    from ummaya.runtime.turn import TurnRequest
    from ummaya.runtime.turn import answer as stage
    from ummaya.runtime.turn import engine as engine_mod

    verdicts: list[tuple[str, object]] = []

    def checked_answer_stop(planned, ctx, st):
        stop = stage.answer_stop(planned, ctx, st)
        if stop is not None and stop.reason == "completed" and st.evidence:
            verdicts.append((ctx.request, check(stop.text, stage.facts_for(ctx, st))))
        return stop

    monkeypatch.setattr(engine_mod, "answer_stop", checked_answer_stop)
    engine = build_engine(catalog.root, catalog=catalog, retriever=retriever,
                          dispatcher=Dispatcher(catalog, env={}), store=store)
    for _, sc in load_scenarios(REPO):
        first = sc.all_turns()[0]
        asyncio.run(engine.ask(TurnRequest(first.request, mode="mock", consents=tuple(sc.consents))))
    assert len(verdicts) >= 15
    bad = [(q, v.removed) for q, v in verdicts if not v.grounded]
    assert not bad, bad


@pytest.mark.parametrize("sentence,kind", [
    ("자세한 내용은 https://www.fake-hospital.kr/er 에서 보세요.", "link"),
    ("문의는 help@fake-clinic.com 으로 보내세요.", "link"),
    ("bokjiro.go.kr/apply 에서 바로 신청하세요.", "link"),
    ("주소는 부산광역시 서구 대신공원로 99예요.", "address"),
    ("병원에 진료 예약해 드렸어요.", "completion"),
    ("I've contacted the hospital for you.", "completion"),
    ("예약이 확정되었습니다.", "completion"),
    ("결제가 승인되었어요.", "completion"),
    ("신청서가 제출된 상태입니다.", "completion"),
    ("Your booking is confirmed.", "completion"),
])
def test_invented_links_addresses_and_actions_go(facts, sentence, kind):
    v = check(f"동아대학교병원이 가까워요. {sentence}", facts)
    assert [r["kind"] for r in v.removed] == [kind], v.removed


def test_links_and_addresses_from_the_evidence_stay():
    f = build_facts([{"url": "https://www.e-gen.or.kr/er", "address": "부산광역시 서구 대신공원로 26 (동대신동3가)",
                      "lot": "부산 사하구 하단동 840"}])
    for sentence in ("응급의료포털(https://www.e-gen.or.kr/er)에서 확인하세요.", "주소는 대신공원로 26이에요.",
                     "하단동 840에 있어요."):
        assert check(sentence, f).grounded, sentence


@pytest.mark.parametrize("sentence", [
    "[Live · 실시간] 국립중앙의료원 자료예요.",
    "이 병상 정보는 실시간입니다.",
    "실제 병상 현황을 알려드릴게요.",
    "This is actual data from the hospital.",
])
def test_a_copied_or_reworded_live_label_over_mock_evidence_goes(facts, sentence):
    assert [r["kind"] for r in check(sentence, facts).removed] == ["tier"], sentence


def test_advice_about_live_data_is_no_tier_claim(facts):
    for sentence in ("For real-time data, set the API key and ask again.", "실시간 정보는 API 키를 설정한 뒤 다시 확인하세요."):
        assert check(sentence, facts).grounded, sentence


def test_days_listed_after_their_month_are_backed_by_the_evidence_dates_only():
    """「영하인 날: 6일, 12일」 (a template lists days of the dates it shows): a day of an evidence
    date is backed; a day no evidence date has is not, even when the month was named."""
    rows = {"items": [{"date": "20261206", "min_c": -3.0}, {"date": "20261212", "min_c": -1.0}]}
    f = build_facts([rows], tiers={"mock"}, clock=dt.datetime(2026, 12, 2, 9, 0, tzinfo=KST))
    assert check("영하인 날: 6일, 12일.", f).grounded
    v = check("영하인 날: 6일, 23일.", f)
    assert [r["claim"] for r in v.removed] == ["23일"], v.removed


@pytest.mark.parametrize(("text", "problem"), [
    # A statute's deeming (주택임대차보호법 제3조 ①) is the law's, not a report of this citizen's filing.
    ("이 경우 전입신고를 한 때에 주민등록이 된 것으로 본다.", None),
    ("등록을 한 때에는 신고가 된 것으로 보며, 그 효력은 다음 날부터 생긴다.", None),
    # A condition says when something happens, not that it did (제3조 ②).
    ("입주자가 그 주택을 인도받고 주민등록을 마쳤을 때에는 제1항을 준용한다.", None),
    ("신청이 접수되었으면 문자가 옵니다", None),
    ("전입신고를 마쳤습니다.", "completion"),
    ("신청이 접수되었습니다", "completion"),
    # What an upstream says happened, or seems to have happened, is still no completion it may show.
    ("전입신고가 접수된 것으로 확인됩니다.", "completion"),
    ("신고가 된 것으로 보입니다", "completion"),
    ("등록된 걸로 나와요", "completion"),
])
def test_a_statutes_deeming_or_condition_is_not_a_completion(text, problem):
    from ummaya.runtime.turn.claims import upstream_problem

    found = upstream_problem(text)
    assert (found[0] if found else None) == problem
