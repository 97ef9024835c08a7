"""Issue 17 item 3 for titles: a book's title is taken whole although it holds a verb or an
adjective — quoted, bracketed, or before a word saying what kind of work it is (책, 소설 …,
registry/_vocab/titles.yaml) or asking about it (누가 쓴, 출판사, 대출 …). 「소년이 온다」 was cut
to 「소년」."""

from __future__ import annotations

import pytest

from ummaya.runtime.understand.names import title_in


@pytest.mark.parametrize(("request_text", "title"), [
    ("소년이 온다 누가 쓴 책이야?", "소년이 온다"),
    ("'82년생 김지영' 책 정보 알려줘", "82년생 김지영"),
    ("「작별하지 않는다」 누가 쓴 책이야?", "작별하지 않는다"),
    ("불편한 편의점 소설 작가가 누구야?", "불편한 편의점"),
    ("달러구트 꿈 백화점 책 출판사 어디야?", "달러구트 꿈 백화점"),
    ("서울 중구 도서관에서 소년이 온다 빌릴 수 있어?", "소년이 온다"),
    ("수영구 도서관에 작별하지 않는다 대출 가능해?", "작별하지 않는다"),
    ("한강이 쓴 소년이 온다 책 있어?", "소년이 온다"),
    ("나는 나로 살기로 했다 책 있어?", "나는 나로 살기로 했다"),
    ("이 책 우리 동네 도서관에 있어? 소년이 온다", "소년이 온다"),
    ("흰 책 누가 썼어?", "흰"),
    ("Who wrote the book 채식주의자?", "채식주의자"),
])
def test_a_title_is_read_whole(request_text: str, title: str) -> None:
    assert title_in(request_text) == title


@pytest.mark.parametrize("request_text", [
    "Book details for ISBN 9788936434120", "이 책 누가 썼어?", "요즘 인기 있는 소설 추천해줘", "사하구 도서관에 책 있어?",
])
def test_no_title_is_made_up(request_text: str) -> None:
    assert title_in(request_text) is None


def test_the_book_search_sends_the_title_whole(engine) -> None:
    import asyncio

    from ummaya.runtime.turn import TurnRequest

    r = asyncio.run(engine.ask(TurnRequest("달러구트 꿈 백화점 책 출판사 어디야?", session_id="titles", mode="mock")))
    row = next(c for c in r.calls if c["adapter_id"] == "nl_book_search")
    assert row["arguments"]["title"] == "달러구트 꿈 백화점"
