"""Personal data: one detector (``find_personal``) and the redaction everyone uses (``redact``).

Six kinds are found, and ``redact`` replaces each by a placeholder naming the kind:

- 주민등록번호 (resident registration number) ``YYMMDD-GNNNNNN``, with or without a separator. It
  is validated plausibly: a real calendar date for the century the 7th digit implies (1–8; 9 and
  0 for the 1800s). Half-masked forms (``900101-1******``) go too: they still tell birth date and
  sex. The check digit is *not* required: numbers issued since October 2020 have random trailing
  digits, so a checksum test would let them through.
- Phone numbers: mobile (010, 011, 016–019), Seoul 02, area codes 031–064, 070 and 050x safe
  numbers, written with hyphens, dots, spaces, " - " or nothing, and the +82 forms
  (``+82 10 …``, ``+82-2-…``, ``+82 (0)10 …``).
- E-mail addresses.
- Card numbers: 13–19 digits written contiguously or in the printed groupings (4-4-4-4,
  4-4-4-4-3, 4-6-5, 4-6-4), accepted only when the Luhn check passes.
- Korean passport numbers: M/S/R/G/D and 8 digits (``M12345678``), and the form issued since
  December 2021, letter, 3 digits, letter, 4 digits (``M123A4567``).
- Driver-licence numbers ``NN-NN-NNNNNN-NN`` (region code 11–28 first) and the older form with the
  region written out (``서울 12-345678-90``).

Variant forms are matched as the plain form: full-width digits and letters (``０１０``), the dashes
people and word processors type (en/em dash, minus sign, ``ㅡ``), full-width ``＠`` and ``＋``, and
no-break or ideographic spaces are read as their ASCII counterparts — one character for one, so
every finding keeps the offsets of the text it was found in. A text that carries URL escapes
(``%2D``, ``%40``, ``+`` for a space) is also read decoded: ``010%2D1234%2D5678`` inside a stored
upstream URL is a phone number, and the finding covers its escaped span.

What must survive: dates (2026-11-30, 20261130), times, bus numbers (1002번, 5-1, M6405), amounts
(50,000원), counts, ids that fail the checks above — and every decimal fraction. A coordinate's
digits after the point (``129.050504421228``) are never a phone, card or 주민등록번호: a digit run
that follows ``<digit>.`` is a fraction, not an identifier (``tests/security`` checks random
coordinates with 4–15 decimals).
"""

from __future__ import annotations

import calendar
import codecs
import re
import unicodedata
from dataclasses import dataclass
from typing import Any, Literal

Kind = Literal["rrn", "phone", "email", "card", "passport", "driver_licence"]

PLACEHOLDERS: dict[str, str] = {
    "rrn": "[주민등록번호]",
    "phone": "[전화번호]",
    "email": "[이메일]",
    "card": "[카드번호]",
    "passport": "[여권번호]",
    "driver_licence": "[운전면허번호]",
}

# When two findings overlap, the earlier kind wins (an e-mail holds digits; a plausible 13-digit
# 주민등록번호 is not read as a card).
_PRIORITY: dict[str, int] = {
    "email": 0, "rrn": 1, "driver_licence": 2, "card": 3, "passport": 4, "phone": 5,
}


@dataclass(frozen=True)
class Finding:
    """One piece of personal data: its kind and where it is (``text[start:end] == value``)."""

    kind: Kind
    start: int
    end: int
    value: str


# --- one character for one: variant forms read as the plain form ---------------------------------

_FOLD: dict[int, str] = {}
for _i in range(10):
    _FOLD[0xFF10 + _i] = str(_i)  # full-width digits
for _i in range(26):
    _FOLD[0xFF21 + _i] = chr(65 + _i)  # full-width A-Z
    _FOLD[0xFF41 + _i] = chr(97 + _i)  # full-width a-z
for _ch in "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\uff0d\u3161\ufe63":
    _FOLD[ord(_ch)] = "-"  # hyphen, non-breaking hyphen, figure/en/em dash, bar, minus, ㅡ
for _ch in "\u00a0\u2007\u202f\u3000":
    _FOLD[ord(_ch)] = " "  # no-break, figure, narrow no-break, ideographic space
_FOLD.update({0xFF20: "@", 0xFF0B: "+", 0xFF0E: ".", 0xFF08: "(", 0xFF09: ")", 0xFF3F: "_"})


def _fold(text: str) -> str:
    return text if text.isascii() else text.translate(_FOLD)


# --- the patterns (ASCII classes: \d is 0-9 after folding, never another script's digits) ---------

_A = re.ASCII
_EMAIL = re.compile(
    r"(?<![\w.%+-])[A-Za-z0-9][A-Za-z0-9._%+-]*@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*\.[A-Za-z]{2,}(?![A-Za-z0-9])",
    _A,
)

# A separator between digit groups: hyphen or dot (a space on either side allowed: " - "), or one
# space. Never a newline: numbers on consecutive lines are separate numbers.
_SEP = r"(?: ?[-./_] ?| )"

# Every pattern starts with a plain character class and puts its "not inside a longer number"
# look-behind *after* that first character (a fixed two-character look-behind): the regex engine
# can then skip ahead to candidate characters instead of trying the look-behind at every position.
# "Not inside a longer number": no digit, and no "digit-" (12-900101-…), right before the start;
# a dash after a word is a separator people type (주민번호-900101-1234567).
_RRN = re.compile(r"(\d(?<!\d\d)(?<!\d-\d)\d)(\d{2})(\d{2})" + _SEP + r"?(\d)(\d{6})(?![\d-])", _A)
# Half-masked forms still give away the birth date and sex: 900101-1******, 900101-1xxxxxx.
_RRN_MASKED = re.compile(r"(\d(?<!\d\d)(?<!\d-\d)\d)(\d{2})(\d{2}) ?- ?([1-8])[*xX●○•]{6}", _A)
_MASK_CHARS = re.compile(r"[1-8][*xX●○•]{6}")

_CODES = r"(?:1[016789]|2|[3-6][1-5]|70|50\d)"  # mobile, Seoul, area codes, 070, 050x
_S = _SEP + "?"
_PHONE = re.compile(
    r"[+(0](?<![\d+][+(0])"
    r"(?:"
    # +82 forms: the leading 0 of the code is dropped, sometimes written as (0).
    r"(?<=\+)82[- ]?(?:\(0\)[- ]?)?" + _CODES + _S + r"\d{3,4}" + _S + r"\d{4}"
    # "(02) 123-4567"
    r"|(?<=\()0" + _CODES + r"\)?" + _S + r"\d{3,4}" + _S + r"\d{4}"
    # "02-123-4567", "010 1234 5678", "01012345678", "010 - 1234 - 5678", "053)123-4567"
    r"|(?<=0)" + _CODES + r"\)?" + _S + r"\d{3,4}" + _S + r"\d{4}"
    r")"
    r"(?!\d)",
    _A,
)

_CARD = re.compile(
    r"\d(?<!\d\d)(?<!\d-\d)\d{3}"
    r"(?:"
    r"( - |[ .-])\d{4}\1\d{4}\1\d{4}(?:\1\d{3})?"  # 4-4-4-4 and 4-4-4-4-3
    r"|( - |[ .-])\d{6}\2\d{4,5}"  # Amex 4-6-5, Diners 4-6-4
    r"|\d{9,15}"  # contiguous, 13-19 in all
    r")"
    r"(?![\d-])",
    _A,
)

# Passports: not inside a longer word or code (ASCII letters/digits on either side).
_PASSPORT = re.compile(
    r"[MSRGDmsrgd](?<![A-Za-z0-9][MSRGDmsrgd])(?:\d{8}|\d{3}[A-Za-z]\d{4})(?![A-Za-z0-9])", _A
)

_LICENCE_SEP = r"(?: ?- ?| )"
_LICENCE = re.compile(
    # NN-NN-NNNNNN-NN: the first pair is the issuing region (11 Seoul … 28 Gyeonggi north).
    r"(?:1[1-9]|2[0-8])(?<![\d-]\d\d)"
    + _LICENCE_SEP + r"\d{2}" + _LICENCE_SEP + r"\d{6}" + _LICENCE_SEP + r"\d{2}(?![\d-])"
    # Licences issued before 2011 name the region: "서울 12-345678-90".
    r"|(?:서울|부산|경기|강원|충북|충남|전북|전남|경북|경남|제주|대구|인천|광주|대전|울산)"
    r" ?\d{2}" + _LICENCE_SEP + r"\d{6}" + _LICENCE_SEP + r"\d{2}(?![\d-])",
    _A,
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


def _in_fraction(text: str, start: int, value: str) -> bool:
    """A contiguous digit run right after ``<digit>.`` is a decimal fraction (a coordinate's
    ``129.050504421228``), never an identifier. A separated number after a list marker
    (``1.010-1234-5678``) is still found."""
    return start >= 2 and text[start - 1] == "." and text[start - 2].isdigit() and value.isdigit()


def _scan(text: str) -> list[Finding]:
    """Every candidate in one (folded) view, before overlaps are settled."""
    found: list[Finding] = []
    has_at = "@" in text
    if has_at:
        found += [Finding("email", m.start(), m.end(), m.group(0)) for m in _EMAIL.finditer(text)]
    for m in _RRN.finditer(text):
        if _rrn_plausible(*m.groups()[:4]) and not _in_fraction(text, m.start(), m.group(0)):
            found.append(Finding("rrn", m.start(), m.end(), m.group(0)))
    if _MASK_CHARS.search(text):
        for m in _RRN_MASKED.finditer(text):
            if _rrn_plausible(*m.groups()[:4]):
                found.append(Finding("rrn", m.start(), m.end(), m.group(0)))
    for m in _LICENCE.finditer(text):
        found.append(Finding("driver_licence", m.start(), m.end(), m.group(0)))
    for m in _CARD.finditer(text):
        digits = re.sub(r"\D", "", m.group(0))
        if 13 <= len(digits) <= 19 and _luhn_ok(digits) and not _in_fraction(text, m.start(), m.group(0)):
            found.append(Finding("card", m.start(), m.end(), m.group(0)))
    for m in _PASSPORT.finditer(text):
        found.append(Finding("passport", m.start(), m.end(), m.group(0)))
    for m in _PHONE.finditer(text):
        if not _in_fraction(text, m.start(), m.group(0)):
            found.append(Finding("phone", m.start(), m.end(), m.group(0)))
    return found


_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")


def _url_decoded(text: str) -> tuple[str, list[int], list[int]]:
    """``text`` with ``%XX`` escapes (UTF-8) and ``+`` decoded, and for each decoded character the
    span of ``text`` it came from (``starts[i]``, ``ends[i]``)."""
    out: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    i, n = 0, len(text)
    while i < n:
        if text[i] == "%" and _ESCAPE.match(text, i):
            raw = bytearray()
            pos: list[int] = []
            j = i
            while j + 3 <= n and _ESCAPE.match(text, j):
                raw.append(int(text[j + 1:j + 3], 16))
                pos.append(j)
                j += 3
            dec = codecs.getincrementaldecoder("utf-8")("replace")
            first = 0
            for k, byte in enumerate(raw):
                for ch in dec.decode(bytes((byte,))):
                    out.append(ch)
                    starts.append(pos[first])
                    ends.append(pos[k] + 3)
                    first = k + 1
            for ch in dec.decode(b"", final=True):
                out.append(ch)
                starts.append(pos[min(first, len(pos) - 1)])
                ends.append(j)
            i = j
            continue
        out.append(" " if text[i] == "+" else text[i])
        starts.append(i)
        ends.append(i + 1)
        i += 1
    return "".join(out), starts, ends


# Sino-Korean digits, as a citizen spells a number out (공일공-일이삼사-오육칠팔, 영일영…). They are
# ordinary syllables too (이사, 사이, 공공, 대구, "…5678이에요"), so a syllable is read as a digit
# only in a group of at least three of them inside a run of at least nine digit-like characters
# (a phone number is the shortest target: 02-123-4567) — one character for one, so offsets stay
# those of the text.
_HANGUL_DIGITS = {"공": "0", "영": "0", "빵": "0", "일": "1", "이": "2", "삼": "3", "사": "4",
                  "오": "5", "육": "6", "륙": "6", "칠": "7", "팔": "8", "구": "9"}
_HD = "".join(_HANGUL_DIGITS)
_DIGIT_SEP = r"[ \-.\u2010-\u2015\u2212\uff0d\u3161]"
_HANGUL_RUN = re.compile("(?:[0-9\uff10-\uff19" + _HD + "]" + _DIGIT_SEP + "{0,3}){9,}")
_HANGUL_GROUP = re.compile("[" + _HD + "](?:" + _DIGIT_SEP + "{0,3}[" + _HD + "]){2,}")
_HANGUL_TABLE = str.maketrans(_HANGUL_DIGITS)


_HANGUL_DIGIT = re.compile("[" + _HD + "]")


def _fold_hangul_digits(text: str) -> str:
    if _HANGUL_DIGIT.search(text) is None:
        return text

    def run(m: re.Match[str]) -> str:
        return _HANGUL_GROUP.sub(lambda g: g.group(0).translate(_HANGUL_TABLE), m.group(0))

    return _HANGUL_RUN.sub(run, text)


# Invisible format characters (zero-width space/joiners, soft hyphen, word joiner, BOM…) typed or
# pasted inside a number: 010\u200b1234\u200b5678 is 010-1234-5678 to every reader but a regex.
def _invisible(ch: str) -> bool:
    return ch == "\u00ad" or (not ch.isascii() and unicodedata.category(ch) == "Cf")


def _without_invisible(text: str) -> tuple[str, list[int], list[int]]:
    out: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    for i, ch in enumerate(text):
        if _invisible(ch):
            continue
        out.append(ch)
        starts.append(i)
        ends.append(i + 1)
    return "".join(out), starts, ends


# English digits spelled out ("zero one zero, one two three four …", "oh", "double five") and
# e-mail addresses written around filters ("hong(at)example.com", "hong [at] example [dot] com",
# "hong at example dot com"): each is read in a view of its own where a digit word is its digit
# and an "(at)" is "@" — one character standing for the span of the word, so findings keep the
# text's offsets. A digit word counts only inside a run of at least seven digits, three of them
# spelled: "one or two" stays words.
_EN_DIGITS = {"zero": "0", "oh": "0", "o": "0", "nil": "0", "one": "1", "two": "2", "three": "3",
              "four": "4", "five": "5", "six": "6", "seven": "7", "eight": "8", "nine": "9"}
_EN_WORDS = "triple|double|three|seven|eight|zero|four|five|nine|one|two|six|nil|oh|o"  # longest first
_EN_TOKEN = r"(?:(?:" + _EN_WORDS + r")(?![A-Za-z])|[0-9]+)"
_EN_RUN = re.compile(r"(?i)(?<![A-Za-z0-9])" + _EN_TOKEN + r"(?:[\s,.\-/]{1,3}" + _EN_TOKEN + r")+(?![A-Za-z0-9])")
_EN_PART = re.compile(r"(?i)(?:" + _EN_WORDS + r")(?![A-Za-z])|[0-9]+")
_AT_WORD = re.compile(r"(?i)\s*[\(\[\{<]\s*(?:at|골뱅이|앳)\s*[\)\]\}>]\s*")
_DOT_WORD = re.compile(r"(?i)\s*[\(\[\{<]\s*(?:dot|점|닷)\s*[\)\]\}>]\s*")
_SPELLED_EMAIL = re.compile(r"(?i)(?<![\w.])[a-z0-9][a-z0-9._%+-]*(\s+at\s+)[a-z0-9-]+((?:\s+dot\s+[a-z0-9-]+)+)(?![\w])")
_SPELLED_DOT = re.compile(r"(?i)\s+dot\s+")
_OBFUSCATION = re.compile(r"(?i)[\(\[\{<]\s*(?:at|dot|골뱅이|앳|점|닷)\s*[\)\]\}>]|\sat\s|"
                          r"(?<![a-z])(?:zero|oh|one|two|three|four|five|six|seven|eight|nine)(?![a-z])")


def _spelled(text: str) -> tuple[str, list[int], list[int]] | None:
    """The view of ``text`` with spelled digits and spelled e-mail separators folded, or None
    when there is nothing to fold."""
    edits: list[tuple[int, int, str]] = []  # (start, end, replacement) — disjoint, in order
    for m in _EN_RUN.finditer(text):
        parts = list(_EN_PART.finditer(m.group(0)))
        spelled = sum(1 for p in parts if not p.group(0).isdigit() and p.group(0).lower() not in ("double", "triple"))
        digits, repeat = 0, 1
        for p in parts:
            w = p.group(0).lower()
            digits += len(w) if w.isdigit() else (0 if w in ("double", "triple") else 1)
        if spelled < 3 or digits < 7:
            continue
        base = m.start()
        for p in parts:
            w = p.group(0).lower()
            if w in ("double", "triple"):
                repeat = 2 if w == "double" else 3
                edits.append((base + p.start(), base + p.end(), ""))
                continue
            spelled_out = w if w.isdigit() else _EN_DIGITS[w] * repeat
            repeat = 1
            edits.append((base + p.start(), base + p.end(), spelled_out))
        # the separators between the words go: the digits read as one number
        last = base
        for p in parts:
            if base + p.start() > last:
                edits.append((last, base + p.start(), ""))
            last = base + p.end()
    for pattern, ch in ((_AT_WORD, "@"), (_DOT_WORD, ".")):
        edits += [(m.start(), m.end(), ch) for m in pattern.finditer(text)]
    for m in _SPELLED_EMAIL.finditer(text):
        edits.append((m.start(1), m.end(1), "@"))
        off = m.start(2)
        edits += [(off + d.start(), off + d.end(), ".") for d in _SPELLED_DOT.finditer(m.group(2))]
    if not edits:
        return None
    edits.sort()
    out: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    i = 0
    for a, b, rep in edits:
        if a < i:
            continue  # overlapping edits: the first wins
        for k in range(i, a):
            out.append(text[k])
            starts.append(k)
            ends.append(k + 1)
        for ch in rep:
            out.append(ch)
            starts.append(a)
            ends.append(b)
        i = b
    for k in range(i, len(text)):
        out.append(text[k])
        starts.append(k)
        ends.append(k + 1)
    return "".join(out), starts, ends


_CANDIDATE = re.compile("[0-9@\uff10-\uff19\uff20" + _HD + "]")
# One scan for "could anything be found here": a digit or an "@" (ASCII or full-width), an
# obfuscated form, or a Korean digit in a run that could read as nine digits. Korean digits are
# ordinary syllables (이, 사, 구 are in most Korean sentences), so a lone one does not open the
# slow path: only a run of nine digit-like characters with at most a few non-word characters
# between them (a superset of _HANGUL_RUN in every view: separators as typed, full-width or
# no-break spaces, invisible characters, "+" for a URL's space, the ㅡ people type for a dash).
_GATE = re.compile(
    "[0-9@\uff10-\uff19\uff20]"
    "|(?i:" + _OBFUSCATION.pattern.removeprefix("(?i)") + ")"
    "|(?:[" + _HD + "](?:[\\W_\u3161]{0,8}|$)){9,}"
)
_SHORTEST = 6  # "a@b.co"; a phone is 9 characters at least (02 123 4567 without separators)

# URL escapes are undone up to this many times: %2540 is "@" escaped twice, which a stored
# upstream URL holds when a client escaped an already escaped value.
_MAX_DECODES = 3

_View = tuple[str, "list[int] | None", "list[int] | None"]


def _compose(outer: _View, inner: tuple[str, list[int], list[int]]) -> _View:
    """``inner`` is a view of ``outer[0]``; return it as a view of the original text."""
    _, o_starts, o_ends = outer
    text, starts, ends = inner
    if o_starts is None or o_ends is None:
        return text, starts, ends
    return text, [o_starts[s] for s in starts], [o_ends[e - 1] for e in ends]


def _views(text: str) -> list[_View]:
    """The ways ``text`` is read: as written, URL-decoded (repeatedly), and without invisible
    characters; each view maps its characters back to spans of ``text``."""
    views: list[_View] = [(text, None, None)]
    current: _View = views[0]
    for _ in range(_MAX_DECODES):
        if "%" not in current[0] and "+" not in current[0]:
            break
        decoded = _url_decoded(current[0])
        if decoded[0] == current[0]:
            break
        current = _compose(current, decoded)
        views.append(current)
    for view in list(views):
        # Every invisible character is a non-printable one (category C*): a printable text,
        # most of them, is not walked character by character.
        if not view[0].isascii() and not view[0].isprintable() and any(_invisible(ch) for ch in view[0]):
            views.append(_compose(view, _without_invisible(view[0])))
    for view in list(views):
        if _OBFUSCATION.search(view[0]):
            folded = _spelled(view[0])
            if folded is not None:
                views.append(_compose(view, folded))
    return views


def find_personal(text: str) -> list[Finding]:
    """Every piece of personal data in ``text``, in order, none overlapping another.

    ``value`` is the text as written (``text[start:end]``), which may hold full-width digits, an
    en dash, Korean digits, invisible characters or URL escapes. Shared by ``redact`` and the
    pre-dispatch personal-data guard, so what is kept out of traces and what is kept away from
    upstreams is one definition.
    """
    # The fast path: shorter than the shortest finding (an e-mail "a@b.co"), or without any
    # character a finding needs (a digit, an "@", a Korean digit) and without any spelled form —
    # one combined scan — and no view of the text can hold a finding.
    if len(text) < _SHORTEST or _GATE.search(text) is None:
        return []
    found: list[Finding] = []
    for view, starts, ends in _views(text):
        for f in _scan(_fold_hangul_digits(_fold(view))):
            if starts is None or ends is None:
                found.append(f)
            else:
                s, e = starts[f.start], ends[f.end - 1]
                found.append(Finding(f.kind, s, e, text[s:e]))
    if not found:
        return []
    found.sort(key=lambda f: (_PRIORITY[f.kind], f.start, -(f.end - f.start)))
    kept: list[Finding] = []
    for f in found:
        if all(f.end <= k.start or f.start >= k.end for k in kept):
            kept.append(f)
    kept.sort(key=lambda f: f.start)
    return [Finding(f.kind, f.start, f.end, text[f.start:f.end]) for f in kept]


def redact(text: str) -> str:
    """Return ``text`` with every ``find_personal`` finding replaced by its kind's placeholder.

    Pure and idempotent: ``redact(redact(x)) == redact(x)`` (placeholders hold no digits).
    """
    if not text:
        return text
    findings = find_personal(text)
    if not findings:
        return text
    parts: list[str] = []
    at = 0
    for f in findings:
        parts.append(text[at:f.start])
        parts.append(PLACEHOLDERS[f.kind])
        at = f.end
    parts.append(text[at:])
    return "".join(parts)


def _personal_number(value: int) -> str | None:
    """The placeholder for an integer that is a 주민등록번호 or a card number, else None. A model
    may send 9001011234567 as a JSON number. Card numbers count from 15 digits: a 13-digit
    epoch-milliseconds timestamp passes Luhn one time in ten and must stay a number."""
    text = str(value)
    if len(text) < 13:
        return None
    for f in find_personal(text):
        if f.value == text and (f.kind == "rrn" or (f.kind == "card" and len(text) >= 15)):
            return PLACEHOLDERS[f.kind]
    return None


def redact_value(value: Any, *, keys: bool = False) -> Any:
    """Redact every string inside a JSON-like value, and integers that are a 주민등록번호 or a card
    number. Dict keys are left alone unless ``keys`` (stored traces: a model may put personal
    data in a key)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return _personal_number(value) or value
    if isinstance(value, dict):
        return {(redact(k) if keys and isinstance(k, str) else k): redact_value(v, keys=keys)
                for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_value(v, keys=keys) for v in value]
    return value


__all__ = ["Finding", "Kind", "PLACEHOLDERS", "find_personal", "redact", "redact_value"]
