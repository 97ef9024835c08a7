"""Issue 9 item 4: only the place span goes to a locate upstream."""

from __future__ import annotations

import pytest

from ummaya.runtime.understand.places import bare_place, has_deixis, place_span
from ummaya.runtime.understand.places import find_place


@pytest.mark.parametrize("text, place", [
    ("하단동인데 제일 가까운 응급실 어디야?", "하단동"),
    ("동아대 승학캠퍼스 근처 응급실 알려줘", "동아대 승학캠퍼스"),
    ("지금 부산역 근처 약국 좀 알려줘", "부산역"),
    ("부산역에서 가장 가까운 약국", "부산역"),
    ("서울시청 앞에 약국 있어?", "서울시청"),
    ("사하구 하단동 근처 약국 바로 알려줘", "사하구 하단동"),
    ("태평로2가 근처 약국", "태평로2가"),
    ("부산진경찰서 근처 약국", "부산진경찰서"),
    ("낙동대로550번길 37 근처 응급실", "낙동대로550번길 37"),
    ("해운대 주변 AED", "해운대"),
    ("pharmacy near Busan Station please", "부산역"),  # mapped through the landmarks vocabulary
])
def test_the_place_span_is_only_the_place(text: str, place: str) -> None:
    lang = "en" if text.isascii() else "ko"
    assert find_place(text, lang) == place


@pytest.mark.parametrize("text", [
    "근처 응급실 알려줘",            # nothing before the anchor
    "배가 아파서 근처 병원",          # a predicate is never a place
    "엄마가 쓰러졌는데 가장 가까운 응급실",
    "거기 근처 약국은?",              # deixis resolves to the carried place, not to a word
    "ER near me",
])
def test_no_place_when_none_is_named(text: str) -> None:
    lang = "en" if text.isascii() else "ko"
    assert find_place(text, lang) is None


@pytest.mark.parametrize("text", [
    "제 번호 010-1234-5678인데 부산역 근처 약국",
    "주민번호 900101-1234567 인데 부산역 근처 약국",
    "hong@example.com 인데 부산역 근처 약국",
    "０１０－１２３４－５６７８ 부산역 근처 약국",
    "010–1234–5678 부산역 근처 약국",
])
def test_personal_data_is_never_part_of_a_place(text: str) -> None:
    assert find_place(text, "ko") == "부산역"


def test_degree_time_and_request_words_never_join_a_place() -> None:
    for word in ("제일", "가장", "지금", "바로", "좀", "알려줘", "혹시", "빨리"):
        span = find_place(f"하단동 {word} 근처 약국", "ko")
        assert span == "하단동", (word, span)


def test_the_service_asked_for_is_not_where() -> None:
    assert place_span("응급실 가야 돼 근처에 어디 있어", "ko", frozenset({"응급실"})) is None


@pytest.mark.parametrize("text, place", [
    ("하단동", "하단동"), ("부산역이요", "부산역"), ("사하구 하단동이야", "사하구 하단동"),
    ("광주는?", "광주"), ("하단동 근처요", "하단동"), ("광안리 쪽이요", "광안리"),
    ("동아대 승학캠퍼스인데요", "동아대 승학캠퍼스"),
])
def test_a_bare_answer_is_read_as_a_place(text: str, place: str) -> None:
    assert bare_place(text, "ko") == place


def test_deixis() -> None:
    for text in ("거기 날씨는?", "그 근처 약국은?", "여기 약국도 있어?", "What's the weather like there?"):
        assert has_deixis(text), text
    assert not has_deixis("부산역 근처 약국")


def test_no_kiwi_at_query_time_every_surface_reads_alike(monkeypatch) -> None:
    """The place reader never consults Kiwi, loaded or not: a CLI and a server read a request the
    same way. Unknown adverbial forms end the span by grammar (빨갛게), not by a tagger."""
    from ummaya.model import analysis

    monkeypatch.setattr(analysis, "_kiwi", None)
    assert place_span("빨갛게 근처 약국", "ko") is None
    assert place_span("승학캠퍼스 근처 약국", "ko") == "승학캠퍼스"
    assert analysis._kiwi is None  # nothing loaded it


def test_what_a_removed_value_leaves_is_no_place(talk) -> None:
    from .conftest import args_of

    r = talk("제 이메일은 kim@test.com이고 하단동 근처 응급실")
    assert args_of(r, "kakao_keyword_search") == {"query": "하단동"}
    r = talk("010 1234 5678로 연락주세요 부산역은?")
    assert args_of(r, "kakao_keyword_search") == {"query": "부산역"}


@pytest.mark.parametrize("text", ["연락주세요", "가볼게요", "알겠습니다"])
def test_polite_verbs_are_not_places(text: str) -> None:
    assert bare_place(text, "ko") is None
