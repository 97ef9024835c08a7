"""The claim check: a planner's prose keeps only the claims this turn can back.

A *claim* is a piece of an answer a citizen would act on: a phone number, a number with a unit, a
date or a time, a receipt/application/case number, the name of a facility — and statements about
the turn itself: that something was submitted or paid, that consent was given, that data is live
or mock. Each kind is checked against what the turn actually holds (``Facts``): the full output of
every adapter called in this turn, the citations, the citizen's own words, the carried session
slots, the clock. A sentence with a claim the facts do not back is removed whole, and the removal
is recorded — the answer says ``grounded: false`` and lists what was removed.

Statements about the turn are checked against the turn's record, not against text: a completion
claim (접수되었습니다, 납부 완료, submitted, paid …) stands only when a ``send`` adapter returned
``ok`` on the Live tier in this turn; a consent claim only when a protected adapter passed the gate
on a recorded consent; "실시간/Live" only when some evidence is Live, "모의/Mock" only when some is
Mock. Negated statements (「제출된 것은 없습니다」, "nothing was submitted") are not claims.

Korean and English. The check is regular expressions over the text and set look-ups in the facts
(built once per turn), so it costs well under a millisecond on a 2,000-character answer
(bench/claims.py).
"""

from __future__ import annotations

import bisect
import datetime as dt
import functools
import re
from dataclasses import dataclass, field
from collections.abc import Sequence
from typing import Any

from ummaya.runtime.understand.grammar import CONDITION_AFTER_PAST, DEEMING_VERBS

class _lazy:
    """A pattern compiled on first use. The check holds ~60 patterns and most turns reach a few of
    them; compiling them all at import cost ~50 ms of every cold ``ummaya ask`` (sre compiles in
    Python, and compiled patterns are not kept in bytecode). ``pattern`` is the source, so the
    patterns built from others below need no compile."""

    def __init__(self, pattern: str, flags: int = 0):
        self.pattern, self.flags = pattern, flags

    def __getattr__(self, name: str) -> Any:
        compiled = self.__dict__.get("_compiled")
        if compiled is None:
            compiled = self.__dict__["_compiled"] = re.compile(self.pattern, self.flags)
        value = getattr(compiled, name)
        setattr(self, name, value)  # the bound method is found directly from now on
        return value


# ------------------------------------------------------------------------------------------ facts


@dataclass
class Facts:
    """What the turn can back a claim with, normalised for look-up."""

    text: str = ""  # every evidence string, the citizen's words, citations: spaces removed, lower-case
    digits: set[str] = field(default_factory=set)  # digit-only forms: of each value and of each digit run
    numbers: set[float] = field(default_factory=set)
    dates: set[tuple[int, int, int]] = field(default_factory=set)  # (y, m, d); y = 0 when unknown
    times: set[tuple[int, int]] = field(default_factory=set)
    tokens: set[str] = field(default_factory=set)  # identifiers, upper-case, separators removed
    tiers: set[str] = field(default_factory=set)  # tiers of this turn's evidence
    live_send_ok: bool = False  # a send adapter returned ok on the Live tier in this turn
    consented: bool = False  # a protected adapter passed the gate on a recorded consent
    ordered: list[float] = field(default_factory=list)  # ``numbers`` sorted, for range look-ups
    own: str = ""  # the engine's own wording, squashed: a sentence it contains is the engine's
    said: set[str] = field(default_factory=set)  # identifiers and digit runs in the citizen's own words
    private: Any = None  # PrivateText: a planner's system prompt, never to be echoed

    def near(self, lo: float, hi: float) -> bool:
        """Some number the facts hold lies in [lo, hi]."""
        i = bisect.bisect_left(self.ordered, lo)
        return i < len(self.ordered) and self.ordered[i] <= hi


_DIGIT_RUN = _lazy(r"\d+(?:[.,]\d+)*")
_ID_TOKEN = _lazy(r"[A-Za-z0-9]+(?:[-_/][A-Za-z0-9]+)*")
_ISO_DATE = _lazy(r"(?<!\d)((?:19|20)\d{2})\s*[-./년]\s*(\d{1,2})\s*[-./월]\s*(\d{1,2})(?!\d)")
_KO_MD = _lazy(r"(?<!\d)(\d{1,2})\s*월\s*(\d{1,2})\s*일")
_NOT_QUANTITY = _lazy(
    r"(?<!\d)(?:19|20)\d{2}[-./년]\s*\d{1,2}[-./월]\s*\d{1,2}(?:[T\s]\d{1,2}:\d{2}(?::\d{2})?(?:[+-]\d{2}:?\d{2}|Z)?)?"
    r"|(?<!\d)\d{1,2}:\d{2}(?::\d{2})?|(?<![\d-])0\d{1,2}-\d{3,4}-\d{4}(?!\d)|(?<!\d)\d{1,2}\s*월\s*\d{1,2}\s*일"
)
_HHMM = _lazy(r"(?<!\d)([01]?\d|2[0-4])\s*[:시]\s*([0-5]\d)(?!\d)")


def build_facts(
    outputs: list[Any],
    *,
    citizen: Sequence[str] = (),
    extra: Sequence[str] = (),
    tiers: set[str] | None = None,
    live_send_ok: bool = False,
    consented: bool = False,
    clock: dt.datetime | None = None,
    private: Sequence[str] = (),
) -> Facts:
    """``outputs``: full adapter outputs and citations (any JSON); ``citizen``: the citizen's own
    words and carried slots; ``extra``: the engine's own text (a sentence of it, repeated, stands)."""
    f = Facts(tiers=set(tiers or ()), live_send_ok=live_send_ok, consented=consented)
    strings: list[str] = []
    for out in outputs:
        _walk(out, strings, f)
    strings.extend(citizen)
    strings.extend(extra)
    for s in strings:
        _index_string(s, f)
    f.text = "\n".join(_squash(s) for s in strings)
    f.own = "\n".join(_squash(s) for s in extra)
    for s in citizen:
        f.said.update(_id(t) for t in _ID_TOKEN.findall(s or "") if any(ch.isdigit() for ch in t))
        f.said.update(_NONDIGIT.sub("", r) for r in _DIGIT_RUN.findall(s or ""))
    if private:
        f.private = _private_text(tuple(private))
    if clock is not None:
        for days in range(-1, 8):  # 어제 … 다음 주: a weekday the citizen can name
            d = (clock + dt.timedelta(days=days)).date()
            f.dates.add((d.year, d.month, d.day))
            f.dates.add((0, d.month, d.day))
        f.numbers.add(float(clock.year))
    f.ordered = sorted(f.numbers)
    return f


def _walk(value: Any, strings: list[str], f: Facts) -> None:
    if isinstance(value, dict):
        for v in value.values():
            _walk(v, strings, f)
    elif isinstance(value, list):
        f.numbers.add(float(len(value)))  # "3곳": a count of the records the evidence lists
        for v in value:
            _walk(v, strings, f)
    elif isinstance(value, bool) or value is None:
        return
    elif isinstance(value, (int, float)):
        f.numbers.add(float(value))
        strings.append(str(value))
    else:
        strings.append(str(value))


def _index_string(s: str, f: Facts) -> None:
    if not s:
        return
    digits_only = _NONDIGIT.sub("", s)
    if digits_only:
        f.digits.add(digits_only)
    # Quantities come from what is left once dates, times and phone numbers are taken out: the 12
    # of 2026-12-01 is no count of anything.
    for run in _DIGIT_RUN.findall(_NOT_QUANTITY.sub(" ", s)):
        try:
            f.numbers.add(float(run.replace(",", "")))
        except ValueError:
            pass
    for run in _DIGIT_RUN.findall(s):
        f.digits.add(_NONDIGIT.sub("", run))
        d = _NONDIGIT.sub("", run)
        if len(d) in (8, 12, 14):  # 20261201, 202612011530
            _add_date(f, int(d[:4]), int(d[4:6]), int(d[6:8]))
            if len(d) >= 12:
                _add_time(f, int(d[8:10]), int(d[10:12]))
        if len(d) == 4 and "." not in run:  # 0900, 1830: opening hours as upstreams write them
            _add_time(f, int(d[:2]), int(d[2:]))
    for m in _ISO_DATE.finditer(s):
        _add_date(f, int(m.group(1)), int(m.group(2)), int(m.group(3)))
    for m in _KO_MD.finditer(s):
        _add_date(f, 0, int(m.group(1)), int(m.group(2)))
    for m in _HHMM.finditer(s):
        _add_time(f, int(m.group(1)), int(m.group(2)))
    for m in re.finditer(r"(?<!\d)(\d{1,2})\s*시(?!\s*\d)", s):
        _add_time(f, int(m.group(1)), 0)
    for tok in _ID_TOKEN.findall(s):
        if any(ch.isdigit() for ch in tok):
            f.tokens.add(_id(tok))


def _add_date(f: Facts, y: int, m: int, d: int) -> None:
    if 1 <= m <= 12 and 1 <= d <= 31:
        f.dates.add((y, m, d))
        f.dates.add((0, m, d))


def _add_time(f: Facts, h: int, m: int) -> None:
    if 0 <= h <= 24 and 0 <= m <= 59:
        f.times.add((h % 24, m))


_SPACE = _lazy(r"\s+")
_SEPARATORS = _lazy(r"[-_/\s]")
_NONDIGIT = _lazy(r"\D")


def _squash(s: str) -> str:
    return "".join(s.split()).lower()  # str.split() knows every Unicode space, at C speed


def _id(tok: str) -> str:
    return _SEPARATORS.sub("", tok).upper()
# ----------------------------------------------------------------------------------------- claims
#
# Every pattern is run once over the whole answer (English ones over its lower-case copy, so none
# needs re.IGNORECASE) and each match is filed under the sentence it starts in; numeric patterns
# all begin with a digit, so the regex engine skips to digits. A sentence is judged by its matches
# in text order; the first one the facts do not back removes it.

# Negation and condition are read in a small window after a Korean statement (the verb's ending
# comes last: 「접수되었는지 확인할 수 없습니다」) and around an English one ("has not been submitted").
_NEG_KO = _lazy(r"없|않|못|아니|아닙|아님|는지|다면|으면|려면|전에|후에|뒤에|수\s*있")
_NEG_EN = _lazy(r"\b(?:not|no|nothing|never|without|before|once|if|until|unless|whether|cannot|can't|won't|isn't|wasn't|weren't|hasn't|haven't|didn't|after)\b|n't\b")
_COND_KO = _lazy(r"려면|하세요|하십시오|필요|설정|없|않|아니|아닙|다시")
_COND_EN = _lazy(r"\b(?:for|to get|configure|set up|with an? api key|once)\b")

# Statements are found by their rarest part first (the noun or the participle, a plain literal
# alternation the regex engine scans for quickly), then read around it.
_COMPLETION_NOUN = _lazy("접수|신청|제출|납부|결제|송금|이체|입금|예약|신고|등록|발급|처리|변경|해지|취소|전송|발송")
# 「…된 것으로 본다」 is the law's deeming (a statute's 「주민등록이 된 것으로 본다」: treated as done
# by law, for everyone), not a report that something was done for this citizen: no completion.
_COMPLETION_TAIL = _lazy(
    r"\s*(?:이|가|을|를|은|는)?\s*(?:정상적으로\s*|성공적으로\s*|모두\s*|바로\s*|이미\s*)?(?:완료|마무리|확정|승인|완납|수리)?\s*"
    r"(?:되었|됐|되어\s*있|했습니다|했어요|하였|해\s*드렸|해드렸|드렸|끝났|끝냈|마쳤|된\s*(?:상태|것으로(?!\s*(?:"
    + "|".join(DEEMING_VERBS) + r"))|걸로))"
    # ... unless it is a condition (「주민등록을 마쳤을 때에는」, 「신고했다면」, 「접수되었으면」): when
    # it happens, not that it did.
    r"(?!" + CONDITION_AFTER_PAST + r")"
    r"|\s*(?:가|이)?\s*완료"
)
_COMPLETION_KO = _lazy(
    r"완료(?:되었|됐|했)"
    # Things done *for* the citizen that only a send adapter could have done.
    r"|(?:보냈|전송했|발송했|전달했|연결했|통보했|연락했|알렸)(?:습니다|어요|다)"
    r"|(?:보내|전달해|연결해|연락해|예약해|신청해|접수해|제출해|납부해|결제해|신고해|등록해)\s*드렸"
)
_PARTICIPLE = _lazy(
    r"submitted|paid|filed|booked|registered|processed|completed|sent|reported|applied|received|issued|accepted"
    r"|transferred|lodged|forwarded|notified|scheduled|contacted|called|emailed|confirmed|approved|settled"
)
_AUXILIARY = _lazy(
    r"(?:\b(?:has|have|had|was|were|is|are|been|got)\s+(?:now\s+|just\s+|successfully\s+|already\s+)*"
    r"|\bi(?:'ve|\s+have)?\s+(?:just\s+|successfully\s+|already\s+)*|\bsuccessfully\s+)$"
)
_FIRST_PERSON_ONLY = frozenset({"contacted", "called", "emailed"})  # "I called", not "is called"
_CONSENT_KO = _lazy(
    r"동의(?:하신|해\s*주신|해주신)\s*(?:것으로|내용|사항|걸로)|동의하셨|동의를\s*(?:받았|받아\s*두었|확인했|기록했)"
    r"|동의(?:가|는)?\s*(?:정상적으로\s*)?(?:확인|기록|완료|접수|처리|등록)\s*(?:되었|됐|했)|동의된\s*것으로"
)
_CONSENT_EN = _lazy(
    r"(?:consent|permission|agreement)\s+(?:has\s+been|was|is|had\s+been)\s+(?:recorded|given|granted|received|confirmed|obtained|registered)\b"
    r"|you\s+(?:have\s+|already\s+|'ve\s+)*(?:consented|agreed)\b"
)
# Where to go or write: a link, an e-mail address, a street address (「낙동대로 550」, 「하단동 840-1」).
# Each is found by its anchor (a scheme, "www.", ".go.kr", "@", a road or 동 suffix before a
# number) and widened to the whole word by hand: a pattern that starts with a word class would be
# tried at every letter of the answer.
_LINK_ANCHOR = _lazy(r"https?://|www\.|\.(?:go|or|co|ac|re|ne)\.kr\b|@")
_LINK_END = _lazy(r"[^\s)\]」』>,]*")
_LINK_START = _lazy(r"[a-z0-9._%+:/-]*$")
_ADDRESS_ANCHOR = _lazy(r"(?:대로|로|길)\s*\d+(?:\s*번길\s*\d+)?(?:-\d+)?|동\s*\d+(?:-\d+)?")
_ADDRESS_WORD = _lazy(r"[가-힣0-9]*[가-힣]$")
_ADDRESS_NOT = _lazy(r"[\d.]|\s*(?:km|m|개|곳|명|분|시|%|원|번|배|초|세|살|일|년|층|호)")
_LIVE_KO = _lazy(
    r"실시간\s*(?:으로|데이터|정보|조회|결과|응답|자료|확인|현황|입니다|이에요|예요|이며|이고)|실시간\s*\]"
    r"|실제\s*(?:[가-힣]+\s+)?(?:데이터|자료|정보|현황|조회\s*결과)"
)
# The label a model copies ("[Live · 실시간]") is a tier claim like any other.
_LIVE_EN = _lazy(r"live\b|real[- ]time\s+(?:data|result|information|figures)|(?:real|actual)\s+(?:data|figures|information)")
_MOCK_KO = _lazy(r"모의|예시\s*데이터")
_MOCK_EN = _lazy(r"mock\b|sample\s+data\b|simulated\b")

_PHONE = _lazy(r"(?:0\d{1,2}|1[5-9]\d{2})[-.)\s]?\d{3,4}(?:[-.\s]?\d{4})?(?![\d-])")
_UNITS = (
    r"km|㎞|킬로미터|킬로|cm|mm|kg|mg|ml|m|미터|g|l|ℓ|℃|°c|도|%|％|퍼센트|프로|만\s*원|억\s*원|천\s*원|원|만|억"
    r"|명|개|곳|군데|병상|석|대|건|가구|세대|회|번|배|일|시간|분|초|세|살|년|개월|주일|주|층|호|동|㎍/㎥|µg/m³|ug/m3|㎍|ppm"
    r"|정|알|캡슐|포|kilometers?|kilometres?|meters?|metres?|miles?|percent|won|krw|people|persons?|beds?|places?"
    r"|sites?|hospitals?|pharmacies|clinics?|times?|days?|hours?|hrs?|minutes?|mins?|seconds?|years?|months?|weeks?"
    r"|degrees?|tablets?|pills?|cases?|households?"
)
# Numeric patterns are tried only where a run of digits starts (``_numeric``), with ``match``.
_NUM_UNIT = _lazy(r"(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?\s*(" + _UNITS + r")(?![a-z])")
_DATE_NUM = _lazy(
    r"((?:19|20)\d{2})\s*(?:년|[-./])\s*(\d{1,2})\s*(?:월|[-./])\s*(\d{1,2})\s*일?(?!\d)"
    r"|(\d{1,2})\s*월\s*(\d{1,2})\s*일"
)
_DATE_EN = _lazy(r"(\d{1,2})(?:st|nd|rd|th)?(?:,?\s*((?:19|20)\d{2}))?")
_MONTH_LEFT = _lazy(r"(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+$")
_ID_LEFT = _lazy(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*-$")
_ID_RIGHT = _lazy(r"\d{3,}(?:-\d+)*(?![\d.])")
_DIGITS = _lazy(r"\d+")
_MONTH_END = set("abcdefghijklmnopqrstuvwxyz.")
_MONTHS = {m: i for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), 1)}
_TIME = _lazy(
    r"(\d{1,2})\s*시(?:\s*(\d{1,2})\s*분|\s*(반))?(?!간)"
    r"|(\d{1,2}):(\d{2})(?!\d)(?:\s*([ap])\.?m\b\.?)?"
    r"|(\d{1,2})\s*([ap])\.?m\b\.?"
)
_TIME_PREFIX = _lazy(r"(오전|오후|새벽|아침|낮|저녁|밤)\s*$")
_RECEIPT_KO = _lazy(
    r"(?:접수|신청|사건|민원|처리|예약|관리|고지|납부|신고|확인|승인|주문|거래)\s*번호\s*(?:는|은|:|：)?\s*([A-Za-z0-9][A-Za-z0-9\-_/]{3,})"
)
_RECEIPT_EN = _lazy(
    r"(?:receipt|application|case|reference|confirmation|ticket|tracking|booking|transaction)\s*(?:number|no\.?|#|id)\s*(?:is|:)?\s*#?([a-z0-9][a-z0-9\-_/]{3,})"
)
_APPROX = _lazy(r"약|대략|거의|about|around|approximately|roughly|~|≈", re.I)
_LONG_NUMBER = _lazy(r"\d[\d-]{4,}\d(?![\d.])")
_NUMERIC_KINDS = {"date": _DATE_NUM, "phone": _PHONE, "time": _TIME, "number": _NUM_UNIT, "long": _LONG_NUMBER}
# One anchored match tells which kind starts at a digit run: alternatives in priority order.
_ANY_NUMERIC = _lazy("|".join(
    f"(?P<{k}>{re.sub(r'[(][?]P<[a-z_]+>', '(', p.pattern)})" for k, p in _NUMERIC_KINDS.items()))
_FACILITY_SUFFIX = (
    "대학교병원", "대학병원", "병원", "의원", "약국", "보건소", "보건지소", "보건진료소", "의료원", "의료센터",
    "센터", "치과", "한의원", "소방서", "안전센터", "경찰서", "파출소", "지구대", "주민센터", "행정복지센터",
    "구청", "시청", "군청", "도청", "세무서", "우체국", "도서관", "복지관", "공단", "지사", "지청", "청사",
)
_SUFFIXES_LONGEST = sorted(_FACILITY_SUFFIX, key=len, reverse=True)
_SUFFIX = _lazy("|".join(_SUFFIXES_LONGEST))
_SUFFIX_AT_END = _lazy("(?:" + "|".join(_SUFFIXES_LONGEST) + ")$")
_WORD_TAIL = _lazy(r"[가-힣A-Za-z0-9·]+$")
# Words that make a facility *kind*, not a name: 「가까운 약국」, 「권역응급의료센터」, 「소아청소년과의원」.
_GENERIC_WORDS = {
    "근처", "가까운", "가장", "인근", "주변", "해당", "동네", "대형", "종합", "상급", "권역", "지역", "응급", "응급의료",
    "소아", "소아청소년과", "청소년", "내과", "외과", "정형외과", "신경외과", "안과", "이비인후과", "피부과", "산부인과",
    "비뇨기과", "신경과", "정신건강의학과", "재활의학과", "가정의학과", "영상의학과", "마취통증의학과", "24시", "24시간",
    "야간", "심야", "휴일", "주말", "달빛어린이", "공공", "국공립", "국립", "공립", "시립", "도립", "구립", "전문", "일반",
    "대학", "대학교", "치매안심", "정신건강복지", "정신건강", "건강생활지원", "건강", "보건", "의료", "행정복지", "행정",
    "주민", "119", "119안전", "안전", "고객", "콜", "상담", "민원", "지원", "복지", "노인", "노인복지", "장애인", "장애인복지",
    "사회복지", "종합사회복지", "다문화가족지원", "가족", "고용", "고용복지플러스", "일자리", "어린이", "한방", "요양",
    "재활", "동물", "각", "다른", "모든", "이", "그", "저", "큰", "작은", "새", "관할", "담당", "가까이", "여러", "주요",
    "해당지역", "관할지역", "거주지", "읍면동", "시군구", "시도", "광역", "기초", "센터", "병원", "의원", "약국", "치과",
    "한의원", "보건소", "외래", "입원", "진료", "검진", "예방접종", "접종", "감염병", "코로나", "선별진료", "임시",
}
_GENERIC = _lazy("(?:" + "|".join(sorted(_GENERIC_WORDS, key=len, reverse=True)) + ")*")
_EN_FACILITY_SUFFIX = _lazy(r"Hospital|Clinic|Pharmacy|Medical\s+Cent(?:er|re)|Health\s+Cent(?:er|re)|Cent(?:er|re)|Fire\s+Station|Police\s+Station|Office")
_EN_NAME_WORDS = _lazy(r"(?:[A-Z][\w'&.-]*\s+){1,5}$")
_EN_FACILITY = _lazy(
    r"((?:[A-Z][\w'&.-]*\s+){1,5}(?:Hospital|Clinic|Pharmacy|Medical\s+Cent(?:er|re)|Health\s+Cent(?:er|re)|Cent(?:er|re)|Fire\s+Station|Police\s+Station|Office))\b"
)
_EN_GENERIC = {"the", "a", "an", "nearest", "nearby", "closest", "emergency", "general", "university", "local",
               "public", "regional", "community", "health", "medical", "children's", "24-hour", "night",
               "this", "that", "your", "our", "any", "each", "another", "other", "big", "large", "main", "national",
               "city", "district", "welfare", "service", "citizen", "call", "customer", "support", "care"}
_ENDS = _lazy(r"[.!?。\n]+")


def _list_mark(text: str, start: int, i: int) -> bool:
    """``text[:i]`` ends with a one- or two-digit number that starts the sentence or a word."""
    k = i
    while k > start and k > i - 3 and text[k - 1].isdigit():
        k -= 1
    return k < i and i - k <= 2 and (k == start or text[k - 1].isspace())


@dataclass
class Verdict:
    text: str  # what is left of the prose
    removed: list[dict[str, str]] = field(default_factory=list)  # {"kind", "claim", "sentence"}

    @property
    def grounded(self) -> bool:
        return not self.removed


def _spans(text: str) -> list[tuple[int, int]]:
    """Sentence spans; a line break is a span of its own. A period after a list number (「1.」) or
    inside a decimal (「4.1km」) does not end a sentence."""
    out: list[tuple[int, int]] = []
    start = 0
    n = len(text)
    for m in _ENDS.finditer(text):
        i, j = m.start(), m.end()
        run = m.group(0)
        if "\n" in run:
            k = i + run.index("\n")
            if k > start:
                out.append((start, k))
            out.append((k, j))
            start = j
            continue
        after = text[j] if j < n else " "
        if run[0] in "?!" and after not in ".":
            pass  # 「있어요?그럼」: a question mark ends a sentence even without a space
        elif not after.isspace():
            if not (run == "." and i > 0 and text[i - 1] in "다요죠까"):
                continue  # 4.1km, www.go.kr
        elif run[0] == "." and _list_mark(text, start, i):
            continue  # 「1. 동아대학교병원」
        out.append((start, j))
        start = j
    if start < n:
        out.append((start, n))
    return out


def sentences(text: str) -> list[str]:
    return [text[a:b] for a, b in _spans(text)]


def check(text: str, facts: Facts) -> Verdict:
    """Remove every sentence holding a claim the facts do not back."""
    spans = _spans(text)
    starts = [a for a, _ in spans]
    lower = text.lower()
    if len(lower) != len(text):  # a character whose lower case is longer: keep offsets exact
        lower = "".join(ch if len(ch.lower()) != 1 else ch.lower() for ch in text)
    found: dict[int, list[tuple[int, str, _Hit]]] = {}

    def file(kind: str, m: _Hit) -> None:
        found.setdefault(bisect.bisect_right(starts, m.start()) - 1, []).append((m.start(), kind, m))

    def file_words(kind: str, p: _Pattern) -> None:
        for m in p.finditer(lower):  # English: at a word start only
            if m.start() == 0 or not lower[m.start() - 1].isalnum():
                file(kind, m)

    if not facts.live_send_ok:
        for m in _COMPLETION_NOUN.finditer(text):
            tail = _COMPLETION_TAIL.match(text, m.end())
            if tail is not None:
                file("completion", _Span(m.start(), tail.end(), text))
        for m in _COMPLETION_KO.finditer(text):
            if not (m.group(0).startswith("완료") and m.start() and "가" <= text[m.start() - 1] <= "힣"):
                file("completion", m)
        for m in _PARTICIPLE.finditer(lower):
            if m.end() < len(lower) and lower[m.end()].isalnum():
                continue
            aux = _AUXILIARY.search(lower, max(0, m.start() - 40), m.start())
            if aux is not None and (m.group(0) not in _FIRST_PERSON_ONLY or aux.group(0).startswith("i")):
                file("completion", _Span(aux.start(), m.end(), text))
    if not facts.consented:
        for m in _CONSENT_KO.finditer(text):
            file("consent", m)
        file_words("consent", _CONSENT_EN)
    if "live" not in facts.tiers:
        for m in _LIVE_KO.finditer(text):
            file("live", m)
        file_words("live", _LIVE_EN)
    if facts.tiers and "mock" not in facts.tiers:
        for m in _MOCK_KO.finditer(text):
            file("mock", m)
        file_words("mock", _MOCK_EN)
    links, addresses = _links(lower), _addresses(text)
    for m in links:
        file("link", m)
    for m in addresses:
        file("address", m)
    _numeric(text, lower, file, [(m.start(), m.end()) for m in (*links, *addresses)])
    for m in _SUFFIX.finditer(text):
        file("facility", m)
    for m in _EN_FACILITY_SUFFIX.finditer(text):
        words = _EN_NAME_WORDS.search(text, max(0, m.start() - 80), m.start())
        if words is not None:
            file("facility_en", _Span(words.start(), m.end(), text, (text[words.start(): m.end()],)))

    verdicts: list[tuple[str, str] | None] = []
    for i, (a, b) in enumerate(spans):
        sentence = text[a:b]
        bad = None
        if facts.private is not None and (echo := facts.private.echoed(sentence)):
            bad = ("system_prompt", echo)  # the planner's instructions are never the citizen's answer
        elif i in found:
            bad = _judge(found[i], text, a, b, facts)
            if bad is not None and _own(sentence, facts):
                bad = None
        verdicts.append(bad)
    if any(v is not None and v[0] == "completion" for v in verdicts):
        # A receipt or case number belongs to the completion it would prove: with the completion
        # gone, a number only an upstream's text backs goes too (the citizen's own stays).
        for i in range(len(spans)):
            if verdicts[i] is None and i in found:
                verdicts[i] = _orphan_number(found[i], text, facts)
    kept: list[str] = []
    removed: list[dict[str, str]] = []
    for (a, b), bad in zip(spans, verdicts, strict=False):
        sentence = text[a:b]
        if bad is None:
            kept.append(sentence)
        else:
            removed.append({"kind": bad[0], "claim": bad[1], "sentence": sentence.strip()})
    out = "".join(kept)
    out = re.sub(r"[ \t]+\n", "\n", out)
    out = re.sub(r"\n{3,}", "\n\n", out).strip()
    return Verdict(out, removed)


def _orphan_number(matches: list[tuple[int, str, _Hit]], text: str, f: Facts) -> tuple[str, str] | None:
    for _, kind, m in matches:
        if kind not in ("identifier", "token", "long"):
            continue
        tok = text[m.start(1): m.end(1)] if kind == "identifier" else text[m.start(): m.end()]
        digits = _NONDIGIT.sub("", tok)
        if kind == "long" and len(digits) < 6:
            continue
        if _id(tok) not in f.said and digits not in f.said:
            return "identifier", tok
    return None


def _own(sentence: str, f: Facts) -> bool:
    squashed = _squash(sentence)
    return len(squashed) > 8 and squashed in f.own


def _links(lower: str) -> list[_Span]:
    out: list[_Span] = []
    end = -1
    for m in _LINK_ANCHOR.finditer(lower):
        if m.start() < end:
            continue
        left = _LINK_START.search(lower, max(0, m.start() - 80), m.start())
        start = left.start() if left else m.start()
        end = _LINK_END.match(lower, m.end()).end()
        if m.group(0) == "@" and (start == m.start() or "." not in lower[m.end(): end]):
            continue  # not an e-mail address
        out.append(_Span(start, end, lower))
    return out


def _addresses(text: str) -> list[_Span]:
    out: list[_Span] = []
    for m in _ADDRESS_ANCHOR.finditer(text):
        word = _ADDRESS_WORD.search(text, max(0, m.start() - 20), m.start())
        if word is None or text[m.start() - 1] == "으":
            continue  # 「…으로 4km」: a particle, not a road
        if _ADDRESS_NOT.match(text, m.end()):
            continue  # a quantity follows: 「…로 3개」
        if m.group(0).startswith("동") and m.end() < len(text) and not (text[m.end()].isspace() or text[m.end()] in ",)에은는이의번"):
            continue
        out.append(_Span(word.start(), m.end(), text))
    return out


def _numeric(text: str, lower: str, file: Any, spans: Sequence[tuple[int, int]] = ()) -> None:
    """File numeric claims, trying the patterns where each run of digits starts, most specific
    first: an identifier or a date over a phone number, a time or a quantity."""
    receipts: list[tuple[int, int]] = list(spans)
    for m in _RECEIPT_KO.finditer(text):
        file("identifier", m)
        receipts.append(m.span())
    for m in _RECEIPT_EN.finditer(lower):
        if m.start() == 0 or not lower[m.start() - 1].isalnum():
            file("identifier", m)
            receipts.append(m.span())
    receipts.sort()
    end, r = -1, 0
    for run in _DIGITS.finditer(text):
        p = run.start()
        while r < len(receipts) and receipts[r][1] <= p:
            r += 1
        if p < end or (r < len(receipts) and receipts[r][0] <= p):
            continue
        if p and text[p - 1] == ".":
            continue  # the decimals of a number already read
        before = lower[p - 1] if p else " "
        if before == "-" and (idl := _ID_LEFT.search(lower, max(0, p - 30), p)) and (m := _ID_RIGHT.match(text, p)):
            file("token", _Span(idl.start(), m.end(), text))
            end = m.end()
            continue
        if before.isspace() and p > 1 and lower[p - 2] in _MONTH_END:
            mon = _MONTH_LEFT.search(lower, max(0, p - 16), p)
            if mon is not None and (m := _DATE_EN.match(lower, p)):
                file("date_en", _Span(mon.start(), m.end(), text, (mon.group(1), m.group(1), m.group(2))))
                end = m.end()
                continue
        m = _ANY_NUMERIC.match(lower, p)  # which kind, most specific first; then its own groups
        if m is not None:
            kind = m.lastgroup or "long"
            m = _NUMERIC_KINDS[kind].match(lower, p)
            file(kind, m)
            end = m.end()


class _Span:
    """A match-like record for claims assembled from two pieces (a word before a number)."""

    def __init__(self, start: int, end: int, text: str, groups: tuple[Any, ...] = ()):
        self._start, self._end, self._text, self._groups = start, end, text, groups

    def start(self, *_: Any) -> int:
        return self._start

    def end(self, *_: Any) -> int:
        return self._end

    def group(self, i: int = 0) -> str:
        return self._text[self._start: self._end] if i == 0 else self._groups[i - 1]

    def groups(self) -> tuple[Any, ...]:
        return self._groups


# What the check files and judges: a regex match or a span assembled from two (same three methods);
# and what it searches with: a compiled pattern or one compiled on first use.
_Hit = re.Match[str] | _Span
_Pattern = re.Pattern[str] | _lazy


def _judge(matches: list[tuple[int, str, _Hit]], text: str, a: int, b: int, f: Facts) -> tuple[str, str] | None:
    """The first claim among a sentence's matches the facts do not back, as (kind, claim)."""
    backed_ko = False
    for _, kind, m in matches:
        claim = text[m.start(): m.end()]
        if kind in ("completion", "consent"):
            if _asserted(text, m, a, b, _NEG_KO):
                return kind, claim.strip()
        elif kind in ("live", "mock"):
            if _asserted(text, m, a, b, _COND_KO) and not _COND_EN.search(text[max(a, m.start() - 20): m.start()].lower()):
                return "tier", claim.strip()
        elif kind == "link":
            if _squash(claim).rstrip(".") not in f.text:
                return "link", claim.strip()
        elif kind == "address":
            if _squash(claim) not in f.text:
                return "address", claim.strip()
        elif kind in ("identifier", "token"):
            tok = text[m.start(1): m.end(1)] if kind == "identifier" else claim
            if any(ch.isdigit() for ch in tok) and _id(tok) not in f.tokens and _NONDIGIT.sub("", tok) not in f.digits:
                return "identifier", tok
        elif kind == "date":
            g = m.groups()
            key = (int(g[0]), int(g[1]), int(g[2])) if g[0] else (0, int(g[3]), int(g[4]))
            if key not in f.dates:
                return "date", claim.strip()
        elif kind == "date_en":
            key = (int(m.group(3)) if m.group(3) else 0, _MONTHS[m.group(1)], int(m.group(2)))
            if key not in f.dates:
                return "date", claim.strip()
        elif kind == "phone":
            digits = _NONDIGIT.sub("", claim)
            if len(digits) >= 7 and digits not in f.digits:
                return "phone", claim.strip()
        elif kind == "time":
            if not _time_backed(m, text, f):
                return "time", claim.strip()
        elif kind == "number":
            approx = bool(_APPROX.search(text[max(a, m.start() - 6): m.start()]))
            if not _number_backed(m.group(1), m.group(2), m.group(3), f, approx) \
                    and not _day_of_month_backed(m.group(1), m.group(2), m.group(3), f):
                return "number", claim.strip()
        elif kind == "long":
            digits = _NONDIGIT.sub("", claim)
            if len(digits) >= 6 and digits not in f.digits and _id(claim) not in f.tokens:
                return "identifier", claim
        elif kind == "facility":
            name = _facility_name(text, m, a)
            if name is None:
                continue
            if _squash(name) in f.text:
                backed_ko = True
                continue
            return "facility", name
        elif kind == "facility_en":
            name = m.group(1)
            words = name.split()
            if all(w.lower().strip("'.,") in _EN_GENERIC for w in words[:-1]):
                continue
            if backed_ko and "(" in text[max(a, m.start() - 3): m.start()]:
                continue  # an English gloss of a name the evidence backs: 동아대학교병원 (Dong-A University Hospital)
            if _squash(name) in f.text:
                continue
            return "facility", name
    return None


def _asserted(text: str, m: _Hit, a: int, b: int, cond: _Pattern) -> bool:
    """The statement ``m`` is asserted, not negated or made conditional by the words around it."""
    after = text[m.end(): min(b, m.end() + 16)]
    before = text[max(a, m.start() - 30): m.start()].lower()
    return not (cond.search(after) or _NEG_EN.search(before) or _NEG_EN.search(after.lower()))


def _facility_name(text: str, m: _Hit, a: int) -> str | None:
    """The whole word a facility suffix ends (「동아대학교」+「병원」), or None for a facility kind."""
    w = _WORD_TAIL.search(text, max(a, m.start() - 24), m.start())
    name = (w.group(0) if w else "") + m.group(0)
    if _is_generic(name):
        return None
    return name


def _time_backed(m: _Hit, text: str, f: Facts) -> bool:
    g = m.groups()
    if g[0] is not None:
        h, mi = int(g[0]), 30 if g[2] else int(g[1] or 0)
        pre = _TIME_PREFIX.search(text[max(0, m.start() - 4): m.start()])
        if pre:
            pm = pre.group(1) in ("오후", "저녁", "밤") and h < 12
            options = {(h + 12) % 24 if pm else h % 24}
        else:
            options = {h % 24, (h + 12) % 24}
    elif g[3] is not None:
        h, mi = int(g[3]), int(g[4])
        options = {h % 24} if not g[5] else {(h % 12) + (12 if g[5] == "p" else 0)}
    else:
        h, mi = int(g[6]), 0
        options = {(h % 12) + (12 if g[7] == "p" else 0)}
    return any((o, mi) in f.times for o in options)


_SCALE = {"km": (1000.0,), "㎞": (1000.0,), "킬로미터": (1000.0,), "킬로": (1000.0,), "kilometer": (1000.0,),
          "kilometers": (1000.0,), "kilometres": (1000.0,), "kilometre": (1000.0,), "m": (0.001,), "미터": (0.001,),
          "meter": (0.001,), "meters": (0.001,), "metres": (0.001,), "metre": (0.001,), "만원": (10000.0,),
          "만 원": (10000.0,), "만": (10000.0,), "억원": (1e8,), "억 원": (1e8,), "억": (1e8,), "천원": (1000.0,),
          "천 원": (1000.0,), "%": (0.01,), "％": (0.01,), "퍼센트": (0.01,), "프로": (0.01,), "percent": (0.01,),
          "분": (60.0, 1 / 60), "minutes": (60.0, 1 / 60), "minute": (60.0, 1 / 60), "mins": (60.0, 1 / 60),
          "min": (60.0, 1 / 60), "시간": (3600.0, 60.0), "hours": (3600.0, 60.0), "hour": (3600.0, 60.0),
          "hrs": (3600.0, 60.0), "초": (1 / 60,), "seconds": (1 / 60,)}


def _number_backed(whole: str, frac: str | None, unit: str, f: Facts, approx: bool = False) -> bool:
    value = float(whole.replace(",", "") + ("." + frac if frac else ""))
    decimals = len(frac) if frac else 0
    if value in f.numbers:
        return True
    # A rounded or rescaled figure of a number the evidence holds: 4.1 km for 4123 (m), 35% for
    # 0.35 — within half a unit of the claim's last stated digit.
    half = 0.5 * 10 ** -decimals + 1e-9
    if f.near(value - half, value + half):
        return True
    # Converted from another unit, a whole number is as precise as its last non-zero digit
    # (770 m for 0.7689 km, 19분 for 1,140 s).
    if not decimals:
        zeros = len(whole) - len(whole.rstrip("0"))
        half = 0.5 * 10 ** zeros + 1e-9
        if approx and f.near(value - half, value + half):  # 약 770m for 768 (m)
            return True
    for s in _SCALE.get(re.sub(r"\s+", " ", unit), ()):
        if f.near((value - half) * s, (value + half) * s):
            return True
    return False


def _day_of_month_backed(whole: str, frac: str | None, unit: str, f: Facts) -> bool:
    """「6일, 7일, 12일」 after the month was said once: a day of a date the evidence holds."""
    if unit != "일" or frac or not whole.isdigit():
        return False
    day = int(whole)
    return any(d == day for y, _m, d in f.dates if y)


def _is_generic(name: str) -> bool:
    """A facility kind, not a name: nothing but generic words before the suffix (or nothing)."""
    m = _SUFFIX_AT_END.search(name)
    rest = name[: m.start()] if m else name
    return _GENERIC.fullmatch(rest) is not None


# ----------------------------------------------------------------- upstream text and private text
#
# Upstream text is data: a record field can be written by anyone who can write to an agency's
# database, and the engine renders it word for word. A field that states something about *this
# turn* — that something was submitted or paid, that the citizen consented — or that tells the
# citizen to send their personal data somewhere is an instruction planted in data, never a fact a
# lookup can return (issue 19 hole 8).

_CHANNEL = _lazy(r"(?:0\d{1,2}|1[5-9]\d{2})[-.)\s]?\d{3,4}[-.\s]?\d{4}|https?://|www\.|@[\w-]+\.|\b(?:text|sms|send|e-?mail|message|dm)\b"
                      r"|문자|보내|전송|회신")
_PERSONAL_ITEM = _lazy(
    r"주민(?:등록)?\s*번호|생년월일|(?:휴대\s*(?:전화|폰)|핸드폰)\s*번호|계좌\s*(?:번호)?|카드\s*번호|비밀\s*번호|여권\s*번호|운전\s*면허\s*번호"
    r"|resident registration|social security|date of birth|birth\s*date|account number|card number|password|passport number|pin\b",
    re.I,
)


def upstream_problem(text: str, *, send_ok: bool = False) -> tuple[str, str] | None:
    """Why an upstream string must not be shown as it is — (kind, claim) — or None: it asserts
    a completion (unless it is the Live send's own ok result) or a consent, or it asks for
    personal data to be sent through some channel."""
    if not text or len(text) < 4:
        return None
    # Most upstream strings (names, addresses, phone numbers, codes) hold none of the words a
    # completion, a consent or a solicitation needs: they skip the sentence-level check.
    if _TURN_WORDS.search(text) is not None:
        facts = Facts(live_send_ok=send_ok, consented=False, tiers={"live", "mock"})
        for r in check(text, facts).removed:
            if r["kind"] in ("completion", "consent"):
                return r["kind"], r["claim"]
    item = _PERSONAL_ITEM.search(text)
    if item is not None and _CHANNEL.search(text):
        return "solicitation", item.group(0)
    return None


_TURN_WORDS = _lazy(
    "|".join((_COMPLETION_NOUN.pattern, _COMPLETION_KO.pattern, _PARTICIPLE.pattern))
    + r"|동의|consent|permission|agree", re.I)


class PrivateText:
    """Text that must never reach the citizen (a planner's system prompt): a sentence that repeats
    ``SPAN`` or more of its characters in a row (spaces and case aside) is an echo."""

    SPAN = 32

    def __init__(self, texts: list[str]):
        self.shingles: set[str] = set()
        for t in texts:
            for piece in re.split(r"\{[a-z_]+\}", t):  # the template's own words, not its fields
                s = _squash(piece)
                self.shingles.update(s[i:i + self.SPAN] for i in range(0, max(0, len(s) - self.SPAN + 1)))

    def echoed(self, sentence: str) -> str | None:
        s = _squash(sentence)
        for i in range(0, max(0, len(s) - self.SPAN + 1)):
            if s[i:i + self.SPAN] in self.shingles:
                return s[i:i + self.SPAN]
        return None


@functools.lru_cache(maxsize=8)
def _private_text(texts: tuple[str, ...]) -> PrivateText:
    return PrivateText(list(texts))
