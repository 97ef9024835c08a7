"""Issue 17: the arguments a citizen states in so many words reach the adapter whole — a quoted
description, a labelled recipient, an English date of birth, coordinates typed for a service that
takes them — and the words that are another field's value (a region, a specialty, the service's
own hint words) never become a search word or a place."""

from __future__ import annotations

import datetime as dt

from tests.support.offline_turns import ask, ask_all


def _first(r, adapter):
    return next((c for c in r.calls if c["adapter_id"] == adapter), None)


# -- the labelled reader ---------------------------------------------------------------------------


def test_a_labelled_value_runs_to_its_copula_or_clause_end():
    from ummaya.runtime.understand.names import labelled_value

    labels = ["제출할 곳", "용도", "purpose"]
    assert labelled_value("제출할 곳은 신한은행이야. 서류 보내줘", labels) == "신한은행"
    assert labelled_value("용도는 은행 대출이고 서류 보내고 싶어", labels) == "은행 대출"
    assert labelled_value("purpose: bank loan, please", labels) == "bank loan"


def test_no_label_no_value():
    from ummaya.runtime.understand.names import labelled_value

    assert labelled_value("신한은행에 서류 보내는 방법 알려줘", ["제출할 곳", "용도"]) is None
    # a label inside a longer word is no label
    assert labelled_value("다용도실은 어디야", ["용도"]) is None


def test_the_recipient_slot_reads_only_labelled_values(engine):
    r = ask(engine, "보낼 곳은 국민건강보험공단이에요. 공공 마이데이터로 서류 보내는 방법", consents=("mydata_consent",))
    assert (_first(r, "mydata_consent") or {}).get("arguments") == {"purpose": "국민건강보험공단"}, r.calls
    r = ask(engine, "공공 마이데이터로 은행에 서류 보내는 방법", consents=("mydata_consent",))
    assert "purpose" not in ((_first(r, "mydata_consent") or {}).get("arguments") or {}), r.calls


# -- quoted free text ------------------------------------------------------------------------------


def test_a_quoted_description_fills_an_optional_free_text_field(engine):
    r = ask(engine, "신고 내용은 \"인도에 싱크홀이 생겼어요\"야, 안전신문고에 신고할게", consents=("safety_report_submit",))
    assert (_first(r, "safety_report_submit") or {}).get("arguments", {}).get("description") == "인도에 싱크홀이 생겼어요", r.calls


def test_an_unquoted_report_sends_no_description(engine):
    r = ask(engine, "불법 주정차 신고 어떻게 해?", consents=("safety_report_submit",))
    assert "description" not in ((_first(r, "safety_report_submit") or {}).get("arguments") or {}), r.calls


# -- an English date of birth is personal data, with its label ---------------------------------------


def test_an_english_birth_date_and_its_label_are_no_words_of_retrieval():
    from ummaya.runtime.understand.dates import birth_spans

    text = "Verify my mobile ID: Park Jiwoo, born 3 April 1987"
    spans = birth_spans(text)
    assert spans and text[spans[0][0]:spans[0][1]] == "born 3 April 1987"


def test_an_english_mobile_id_request_reaches_the_adapter(engine):
    r = ask(engine, "Verify my mobile ID: Park Jiwoo, born 3 April 1987", consents=("mobile_id_verify",))
    row = _first(r, "mobile_id_verify")
    assert row is not None and row["arguments"] == {"person_name": "Park Jiwoo", "birth_date": "1987-04-03"}, r.calls


# -- typed coordinates: the candidate that takes them answers instead of a question -----------------


def test_typed_coordinates_answer_with_the_candidate_that_takes_them(engine):
    r = ask(engine, "토요일에 여는 약국 위도 35.1796 경도 129.0756")
    row = _first(r, "nmc_pharmacies")
    assert row is not None and row["arguments"].get("latitude") == 35.1796, (r.stop_reason, r.calls)


def test_without_coordinates_the_engine_asks(engine):
    r = ask(engine, "토요일에 여는 약국")
    assert r.stop_reason == "needs_input" and not r.calls, (r.stop_reason, r.calls)


# -- words that are another field's value ----------------------------------------------------------


def test_a_specialty_is_no_place_to_look_up(engine):
    r = ask(engine, "피부과 어디 있어 근처")
    assert not any(c["adapter_id"] == "kakao_keyword_search" for c in r.calls), r.calls
    assert r.stop_reason == "needs_input"


def test_the_services_own_hint_word_is_no_programme(engine):
    r = ask(engine, "청소년 복지서비스 찾아줘")
    row = _first(r, "mohw_welfare_services")
    assert row is not None and "keyword" not in row["arguments"], r.calls


def test_a_region_the_adapters_fields_take_is_no_title(engine):
    r = ask(engine, "해운대구 도서관에 책 있어?")
    assert not any(c["adapter_id"] == "library_book_availability" for c in r.calls), r.calls
    assert r.stop_reason == "needs_input"


def test_a_clause_final_copula_noun_is_no_keyword():
    from ummaya.runtime.understand import table
    from ummaya.runtime.understand.readers import READERS, ReadRequest

    st = table.slot("keyword")
    req = ReadRequest("아동수당이 어떤 제도야?", dt.datetime(2026, 12, 1), {"type": "string"}, "keyword", "ko", {}, st,
                      None, True)
    assert READERS.get("keyword")(req) == "아동수당"


def test_a_named_welfare_term_goes_to_the_service_whose_vocabulary_holds_it(engine):
    r = ask(engine, "아동수당이 어떤 제도야?")
    row = r.calls[0] if r.calls else None
    assert row is not None and (row["adapter_id"], row["arguments"].get("keyword")) == (
        "mohw_welfare_services", "아동수당"), r.calls


# -- optional search words of a job or course search -------------------------------------------------


def test_job_and_course_searches_send_the_citizens_search_words(engine):
    r = ask(engine, "대구 용접공 구인 공고 있어?")
    row = _first(r, "work24_job_postings")
    assert row is not None and row["arguments"].get("keyword") == "용접공", r.calls
    r = ask(engine, "바리스타 국비 교육 과정")
    row = _first(r, "hrd_training_courses")
    assert row is not None and row["arguments"].get("keyword") == "바리스타", r.calls


def test_an_english_word_is_not_sent_to_an_optional_korean_filter(engine):
    # No vocabulary maps it: an English word matches no Korean posting, so every posting beats none.
    r = ask(engine, "Show astronaut job openings in Busan")
    row = _first(r, "work24_job_postings")
    assert row is not None and "keyword" not in row["arguments"], r.calls


def test_an_english_job_word_is_sent_as_the_korean_word_the_jobs_vocabulary_maps_it_to(engine):
    # registry/_vocab/jobs.yaml, read for English requests only (search_words: vocabulary_for english).
    r = ask(engine, "Show welder job openings in Busan")
    row = _first(r, "work24_job_postings")
    assert row is not None and row["arguments"].get("keyword") == "용접", r.calls


def test_a_korean_job_search_keeps_its_own_words_whole_beside_the_jobs_vocabulary(engine):
    # 물류 is a term of the jobs vocabulary; a Korean request is not read through it (물류센터 stays whole).
    r = ask(engine, "부산 물류센터 일자리 있어?")
    row = _first(r, "work24_job_postings")
    assert row is not None and row["arguments"].get("keyword") == "물류센터", r.calls


# -- a coded value carried to an adapter that spells the code differently ------------------------------


def test_a_carried_code_travels_as_its_label():
    from ummaya.runtime.dialogue.resolve import _canonical

    prop = {"enum": ["11000", "26000"], "x-enum-labels": {"11000": "서울특별시", "26000": "부산광역시"}}
    assert _canonical(prop, "26000") == "부산광역시"
    assert _canonical({"type": "string"}, "26000") == "26000"


def test_a_carried_label_converts_into_the_next_fields_code(engine):
    from ummaya.runtime.plan.offline import SlotFiller
    from ummaya.runtime.plan.protocol import PlanContext
    from ummaya.runtime.understand import table

    hrd = engine.catalog.get("hrd_training_courses")
    ctx = PlanContext(request="과정도 있어?", language="ko", candidates=[hrd], messages=[], evidence=[], slots={}, step=0)
    filler = SlotFiller(ctx, dt.datetime(2026, 12, 1))
    filler.carried = {"region": "부산광역시"}
    prop = hrd.input_schema["properties"]["region"]
    assert filler.carried_value(table.slot_of(prop), "region", prop) == "26"
    filler.carried = {"region": "부산"}  # another spelling: the slot type's reader reads it
    assert filler.carried_value(table.slot_of(prop), "region", prop) == "26"


def test_a_follow_up_keeps_the_region_in_the_adapters_own_code(engine):
    rs = ask_all(engine, "제주 공휴일에 여는 약국", "토요일은?")
    rows = [c for r in rs for c in r.calls if c["adapter_id"] == "nmc_pharmacies_open_on_day"]
    assert [c["arguments"].get("sido") for c in rows] == ["제주특별자치도", "제주특별자치도"], [r.calls for r in rs]


# -- an official category label goes to the adapter that files by it --------------------------------


def test_an_official_category_label_is_filed_under_its_category(engine):
    r = ask(engine, "청소년 지원 정책 뭐 있어?")
    assert [(c["adapter_id"], c["arguments"].get("life_stage")) for c in r.calls][:1] == [
        ("mohw_welfare_services", "003")], r.calls


def test_a_synonym_stays_a_search_word(engine):
    r = ask(engine, "노인 관련 혜택 뭐 있어?")
    assert [(c["adapter_id"], c["arguments"].get("keyword")) for c in r.calls][:1] == [
        ("gov24_benefit_search", "노인")], r.calls


def test_a_category_word_named_as_the_topic_is_searched_by_name(engine):
    r = ask(engine, "할머니 관련 정부 지원금 뭐 있어?")
    assert [(c["adapter_id"], c["arguments"].get("keyword")) for c in r.calls][:1] == [
        ("gov24_benefit_search", "할머니")], r.calls
    r = ask(engine, "할머니가 받을 수 있는 복지 서비스 뭐 있어?")
    assert [(c["adapter_id"], c["arguments"].get("life_stage")) for c in r.calls][:1] == [
        ("mohw_welfare_services", "006")], r.calls


def test_the_birth_suffix_goes_with_the_date():
    from ummaya.runtime.understand.dates import birth_spans

    text = "최유리 1971년 6월 2일생 과태료 확인해줘"
    [(s, e)] = birth_spans(text)
    assert text[s:e] == "1971년 6월 2일생"


def test_a_fine_check_with_a_birth_date_and_a_plate_reaches_the_adapter(engine):
    r = ask(engine, "최유리 1971년 6월 2일생 과태료 확인해줘, 차는 12가3456", consents=("traffic_fine_payment",))
    row = _first(r, "traffic_fine_payment")
    assert row is not None and row["arguments"].get("birth_date") == "1971-06-02", (r.stop_reason, r.calls)
