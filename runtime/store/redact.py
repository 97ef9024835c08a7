"""Redaction of personal data before anything is kept: a pure function everyone uses.

Four kinds are replaced by a placeholder naming the kind:

- 주민등록번호 (resident registration number) ``YYMMDD-GNNNNNN``, with or without the hyphen. It is
  validated plausibly: a real calendar date for the century the 7th digit implies (1–8; 9 and 0
  for the 1800s). Half-masked forms (``900101-1******``) go too: they still tell birth date and sex. The check digit is *not* required: numbers issued since October 2020 have
  random trailing digits, so a checksum test would let them through.
- Phone numbers: mobile (010, 011, 016–019), Seoul 02, area codes 031–064, 070 and 050x safe
  numbers, written with hyphens, dots, spaces or nothing, and the +82 forms (``+82 10 …``,
  ``+82-2-…``, ``+82 (0)10 …``).
- E-mail addresses.
- Card numbers: 13–19 digits written contiguously or in the printed groupings (4-4-4-4,
  4-4-4-4-3, 4-6-5, 4-6-4; spaces or hyphens), accepted only when the Luhn check passes.

What must survive: dates (2026-11-30, 20261130), times, bus numbers (1002번, 5-1), amounts
(50,000원), coordinates, counts, ids that fail the checks above.
"""

from __future__ import annotations

import calendar
import re
from typing import Any

PLACEHOLDERS = {
    "rrn": "[주민등록번호]",
    "phone": "[전화번호]",
    "email": "[이메일]",
    "card": "[카드번호]",
}

_EMAIL = re.compile(
    r"(?<![\w.%+-])[A-Za-z0-9][A-Za-z0-9._%+-]*@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*\.[A-Za-z]{2,}(?![A-Za-z0-9])"
)

# Every pattern starts with a plain character class and puts its "not inside a longer number"
# look-behind *after* that first character (a fixed two-character look-behind): the regex engine
# can then skip ahead to candidate characters instead of trying the look-behind at every position
# (2-3x faster on digit-heavy answers).
_RRN = re.compile(r"(\d(?<![\d-]\d)\d)(\d{2})(\d{2})[- ]?(\d)(\d{6})(?![\d-])")
# Half-masked forms still give away the birth date and sex: 900101-1******, 900101-1xxxxxx.
_RRN_MASKED = re.compile(r"(\d(?<![\d-]\d)\d)(\d{2})(\d{2})-([1-8])[*xX●○•]{6}")
_MASK_CHARS = re.compile(r"-[1-8][*xX●○•]")

_CODES = r"(?:1[016789]|2|[3-6][1-5]|70|50\d)"  # mobile, Seoul, area codes, 070, 050x
_S = r"[-. ]?"  # one hyphen, dot or space between groups (never a newline)
_PHONE = re.compile(
    r"[+(0](?<![\d+][+(0])"
    r"(?:"
    # +82 forms: the leading 0 of the code is dropped, sometimes written as (0).
    r"(?<=\+)82[- ]?(?:\(0\)[- ]?)?" + _CODES + _S + r"\d{3,4}" + _S + r"\d{4}"
    # "(02) 123-4567"
    r"|(?<=\()0" + _CODES + r"\)?" + _S + r"\d{3,4}" + _S + r"\d{4}"
    # "02-123-4567", "010 1234 5678", "01012345678"
    r"|(?<=0)" + _CODES + _S + r"\d{3,4}" + _S + r"\d{4}"
    r")"
    r"(?!\d)"
)

_CARD = re.compile(
    r"\d(?<![\d-]\d)\d{3}"
    r"(?:"
    r"([ -])\d{4}\1\d{4}\1\d{4}(?:\1\d{3})?"  # 4-4-4-4 and 4-4-4-4-3
    r"|([ -])\d{6}\2\d{4,5}"  # Amex 4-6-5, Diners 4-6-4
    r"|\d{9,15}"  # contiguous, 13-19 in all
    r")"
    r"(?![\d-])"
)


def _luhn_ok(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = ord(ch) - 48
        if i % 2 == 1:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10 == 0


def _rrn_plausible(yy: str, mm: str, dd: str, g: str) -> bool:
    century = {"1": 1900, "2": 1900, "5": 1900, "6": 1900, "3": 2000, "4": 2000, "7": 2000, "8": 2000,
               "9": 1800, "0": 1800}[g]
    year, month, day = century + int(yy), int(mm), int(dd)
    if not 1 <= month <= 12:
        return False
    return 1 <= day <= calendar.monthrange(year, month)[1]


def _sub_rrn(m: re.Match[str]) -> str:
    yy, mm, dd, g = m.groups()[:4]
    return PLACEHOLDERS["rrn"] if _rrn_plausible(yy, mm, dd, g) else m.group(0)


def _sub_card(m: re.Match[str]) -> str:
    digits = re.sub(r"\D", "", m.group(0))
    if 13 <= len(digits) <= 19 and _luhn_ok(digits):
        return PLACEHOLDERS["card"]
    return m.group(0)


_DIGIT = re.compile(r"\d")


def redact(text: str) -> str:
    """Return ``text`` with 주민등록번호, phone numbers, e-mail addresses and card numbers replaced.

    Pure and idempotent: ``redact(redact(x)) == redact(x)``. Order matters: e-mail first (an
    address may hold digits), then 주민등록번호 (a 13-digit run that is a plausible RRN is one),
    then cards (Luhn), then phones.
    """
    if not text:
        return text
    # Every kind holds digits (or an @): most strings in a trace — names, addresses, Korean
    # prose — leave here, at C speed, without running five patterns.
    if "@" not in text and _DIGIT.search(text) is None:
        return text
    out = _EMAIL.sub(PLACEHOLDERS["email"], text) if "@" in text else text
    out = _RRN.sub(_sub_rrn, out)
    if _MASK_CHARS.search(out):
        out = _RRN_MASKED.sub(_sub_rrn, out)
    out = _CARD.sub(_sub_card, out)
    out = _PHONE.sub(PLACEHOLDERS["phone"], out)
    return out


def redact_value(value: Any) -> Any:
    """Redact every string inside a JSON-like value (dict keys are left alone)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: redact_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_value(v) for v in value]
    return value


__all__ = ["redact", "redact_value", "PLACEHOLDERS"]
