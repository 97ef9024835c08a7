"""Redaction: each kind of personal data goes, look-alikes that are not personal data stay."""

from __future__ import annotations

import pytest

from ummaya.wire.redact import redact, redact_value


@pytest.mark.parametrize(
    "text, expected",
    [
        # 주민등록번호, with and without the hyphen, 1900s and 2000s
        ("주민번호 900101-1234567 입니다", "주민번호 [주민등록번호] 입니다"),
        ("9001011234567", "[주민등록번호]"),
        ("제 번호는 031229-3123456", "제 번호는 [주민등록번호]"),
        ("000229-4123456", "[주민등록번호]"),  # 2000-02-29 existed
        ("900101-1******", "[주민등록번호]"),  # half-masked still gives birth date and sex
        # phones
        ("010-1234-5678로 연락주세요", "[전화번호]로 연락주세요"),
        ("01012345678", "[전화번호]"),
        ("010.1234.5678", "[전화번호]"),
        ("010 1234 5678", "[전화번호]"),
        ("02-123-4567", "[전화번호]"),
        ("(02) 1234-5678", "[전화번호]"),
        ("051-240-5000", "[전화번호]"),
        ("0701234567", "[전화번호]"),
        ("+82 10 1234 5678", "[전화번호]"),
        ("+82-10-1234-5678", "[전화번호]"),
        ("+821012345678", "[전화번호]"),
        ("+82 (0)10 1234 5678", "[전화번호]"),
        ("+82-2-123-4567", "[전화번호]"),
        # e-mail
        ("a.b+c@example.co.kr 으로 보내", "[이메일] 으로 보내"),
        ("메일: hong_gildong@korea.kr.", "메일: [이메일]."),
        # cards (Luhn-valid)
        ("4111 1111 1111 1111", "[카드번호]"),
        ("4111-1111-1111-1111", "[카드번호]"),
        ("카드 4111111111111111 결제", "카드 [카드번호] 결제"),
        ("378282246310005", "[카드번호]"),  # Amex, 15 digits
        ("3782 822463 10005", "[카드번호]"),
        ("5555 5555 5555 4444", "[카드번호]"),
        # several in one text
        ("010-1234-5678 / a@b.io / 900101-1234567",
         "[전화번호] / [이메일] / [주민등록번호]"),
    ],
)
def test_redacts(text: str, expected: str) -> None:
    assert redact(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "2026-11-30 마감",
        "20261130 0500 발표",
        "2026.11.30",
        "13:40 도착",
        "1002번 버스, 5-1번, 급행 1001",
        "1002 1003",
        "50,000원",
        "1,234,567원 과태료",
        "35.1158, 129.0405",
        "hpid A1100010",
        "nx=98 ny=75",
        "1588-1234",  # a business call-centre number, not a person's
        "119",
        "4111 1111 1111 1112",  # fails Luhn
        "991399-1******",  # not a date
        "주문번호 12010-1234-5678",  # digits run on before the 0: not a phone number
        "A-010-1234",  # too short
        "900230-1234567",  # February 30th: not a plausible 주민등록번호
        "901301-1234567",  # month 13
        "1764520000000",  # a millisecond timestamp
        "https://apis.data.go.kr/B552657/ErmctInfoInqireService/getEgytListInfoInqire?pageNo=1",
        "user@localhost",  # no top-level domain
    ],
)
def test_leaves_alone(text: str) -> None:
    assert redact(text) == text


def test_idempotent_and_empty() -> None:
    once = redact("연락처 010-1234-5678, 4111 1111 1111 1111")
    assert redact(once) == once
    assert redact("") == ""


def test_redact_value_walks_json_and_keeps_keys() -> None:
    value = {
        "010-1234-5678": "키는 그대로",
        "args": {"phone": "01012345678", "n": 3, "ok": True, "none": None},
        "list": ["a@b.com", 1.5, ["900101-1234567"]],
    }
    out = redact_value(value)
    assert out == {
        "010-1234-5678": "키는 그대로",
        "args": {"phone": "[전화번호]", "n": 3, "ok": True, "none": None},
        "list": ["[이메일]", 1.5, ["[주민등록번호]"]],
    }
    assert value["args"]["phone"] == "01012345678"  # pure: input untouched
