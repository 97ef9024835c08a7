"""Red-team variants of personal data that the detector once missed (each test failed before).

A citizen spells a number with Korean digits, a client escapes an escaped URL twice, a pasted
number carries zero-width characters, or groups are written with ``_`` or ``/``. The detector is
shared by the guard, trace redaction and the log filter, so one miss here is a leak in all three.
"""

from __future__ import annotations

import pytest

from ummaya.wire.redact import find_personal, redact


@pytest.mark.parametrize(
    "text, kind",
    [
        ("제 번호는 공일공-일이삼사-오육칠팔 입니다", "phone"),
        ("공일공 일이삼사 오육칠팔로 연락주세요", "phone"),
        ("영일영-1234-5678", "phone"),
        ("010-일이삼사-5678", "phone"),
        ("주민번호 구공공일공일-일이삼사오육칠", "rrn"),
    ],
)
def test_korean_digits_are_read_as_digits(text: str, kind: str) -> None:
    kinds = [f.kind for f in find_personal(text)]
    assert kinds == [kind], (text, kinds)
    assert not any(ch in redact(text) for ch in "0123456789일이삼사오육칠팔")


@pytest.mark.parametrize(
    "text, values",
    [
        # the trailing 이 is a particle, not a digit
        ("제 주민등록번호는 8503152345678이에요", ["8503152345678"]),
        ("면허번호: 대구 07-123456-89", ["대구 07-123456-89"]),
        ("공공기관 이사 일정은 사이트에서", []),
        ("일이삼 오육", []),  # too short to be anything
    ],
)
def test_korean_syllables_in_words_stay_words(text: str, values: list[str]) -> None:
    assert [f.value for f in find_personal(text)] == values


@pytest.mark.parametrize(
    "text, kind",
    [
        ("https://x.example/?q=hong%2540example.com", "email"),
        ("https://x.example/?q=010%252D1234%252D5678", "phone"),
        ("https://x.example/?q=900101%25252D1234567", "rrn"),
    ],
)
def test_url_escapes_undone_more_than_once(text: str, kind: str) -> None:
    assert [f.kind for f in find_personal(text)] == [kind]
    assert redact(text).startswith("https://x.example/?q=[")


@pytest.mark.parametrize(
    "text",
    ["010\u200b1234\u200b5678", "0\u200c1\u200d0-1234-5678", "010\u00ad-1234-5678",
     "900101\u20601234567", "hong\ufeff@example.com"],
)
def test_invisible_characters_inside_a_number(text: str) -> None:
    found = find_personal(text)
    assert len(found) == 1 and found[0].start == 0 and found[0].end == len(text), (text, found)


@pytest.mark.parametrize("text", ["010_1234_5678", "010/1234/5678", "900101_1234567"])
def test_underscore_and_slash_separators(text: str) -> None:
    assert len(find_personal(text)) == 1, text


def test_dates_with_slashes_survive() -> None:
    for text in ("2026/11/30", "2026/11/30 14:00", "1002/5-1번 버스", "20261130_103000.log"):
        assert redact(text) == text
