"""Issue 17 (arguments whole, right question) in a conversation about jobs: a follow-up naming a
job is the new search word, not a predicate; a topic switch keeps every carried slot type the new
adapter declares, through the slot's own spelling (a code as its label, the new field's code);
a service's own words are never its search word."""

from __future__ import annotations

import pytest

from ummaya.runtime.understand import grammar

from .conftest import Talk, args_of, calls


def test_a_job_named_as_a_follow_up_is_the_new_keyword(talk: Talk) -> None:
    first = talk("부산 사무직 채용 공고 보여줘")
    assert args_of(first, "work24_job_postings")["region"] == "26000"
    r = talk("경리는?")  # was: no keyword (「경리는」 read as a verb form)
    assert calls(r) == ["work24_job_postings"]
    assert args_of(r, "work24_job_postings") == {"keyword": "경리", "region": "26000"}


def test_a_job_no_hint_names_stays_with_the_job_search(talk: Talk) -> None:
    talk("대구 요양보호사 구인 공고 있어?")
    r = talk("그럼 바리스타는?")  # was: the training courses (their examples name a barista course)
    assert calls(r) == ["work24_job_postings"]
    assert args_of(r, "work24_job_postings") == {"keyword": "바리스타", "region": "27000"}


@pytest.mark.parametrize(("job", "sido", "code"), [("서울 요양보호사 일자리 찾아줘", "11000", "11"),
                                                    ("인천 용접 구인 공고 알려줘", "28000", "28")])
def test_a_switch_to_training_courses_keeps_the_region_in_their_own_code(talk: Talk, job: str, sido: str, code: str) -> None:
    assert args_of(talk(job), "work24_job_postings")["region"] == sido
    r = talk("국비 교육 과정은?")  # was: no region (the session carried work24's 「11000」, no HRD code)
    assert calls(r) == ["hrd_training_courses"]
    assert args_of(r, "hrd_training_courses")["region"] == code


def test_the_district_carries_with_the_region(talk: Talk) -> None:
    talk("부산 사하구 요양보호사 채용 공고")
    r = talk("국비 교육 과정은?")
    assert args_of(r, "hrd_training_courses") == {"region": "26", "district": "사하구"}


def test_a_service_word_is_no_search_word(talk: Talk) -> None:
    r = talk("내일배움카드 훈련 과정 알려줘")  # was: keyword 「훈련」 (half of 훈련과정, 직업훈련)
    assert calls(r) == ["hrd_training_courses"] and "keyword" not in args_of(r, "hrd_training_courses")


@pytest.mark.parametrize(("word", "noun"), [("경리는?", "경리"), ("바리스타는", "바리스타"), ("서울은", "서울"),
                                            ("먹는", None), ("공부하는", None), ("있는", None), ("약은", None)])
def test_a_clause_final_topic_particle_is_a_nouns(word: str, noun: str | None) -> None:
    assert grammar.clause_final_topic(word) == noun
