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
import re
from dataclasses import dataclass, field
from typing import Any

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

    def near(self, lo: float, hi: float) -> bool:
        """Some number the facts hold lies in [lo, hi]."""
        i = bisect.bisect_left(self.ordered, lo)
        return i < len(self.ordered) and self.ordered[i] <= hi


_DIGIT_RUN = re.compile(r"\d+(?:[.,]\d+)*")
_ID_TOKEN = re.compile(r"[A-Za-z0-9]+(?:[-_/][A-Za-z0-9]+)*")
_ISO_DATE = re.compile(r"(?<!\d)((?:19|20)\d{2})\s*[-./년]\s*(\d{1,2})\s*[-./월]\s*(\d{1,2})(?!\d)")
_KO_MD = re.compile(r"(?<!\d)(\d{1,2})\s*월\s*(\d{1,2})\s*일")
_HHMM = re.compile(r"(?<!\d)([01]?\d|2[0-4])\s*[:시]\s*([0-5]\d)(?!\d)")


def build_facts(
    outputs: list[Any],
    *,
    citizen: list[str] = (),  # type: ignore[assignment]
    extra: list[str] = (),  # type: ignore[assignment]
    tiers: set[str] | None = None,
    live_send_ok: bool = False,
    consented: bool = False,
    clock: dt.datetime | None = None,
) -> Facts:
    """``outputs``: full adapter outputs and citations (any JSON); ``citizen``: the citizen's own
    words and carried slots; ``extra``: the engine's own text (a claim it makes itself is backed)."""
    f = Facts(tiers=set(tiers or ()), live_send_ok=live_send_ok, consented=consented)
    strings: list[str] = []
    for out in outputs:
        _walk(out, strings, f)
    strings.extend(citizen)
    strings.extend(extra)
    for s in strings:
        _index_string(s, f)
    f.text = "\n".join(_squash(s) for s in strings)
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
    digits_only = re.sub(r"\D", "", s)
    if digits_only:
        f.digits.add(digits_only)
    for run in _DIGIT_RUN.findall(s):
        plain = run.replace(",", "")
        f.digits.add(re.sub(r"\D", "", run))
        try:
            f.numbers.add(float(plain))
        except ValueError:
            for part in run.split("."):  # 2026.12.01
                if part:
                    f.numbers.add(float(part.replace(",", "")))
        d = re.sub(r"\D", "", run)
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


def _squash(s: str) -> str:
    return re.sub(r"\s+", "", s).lower()


def _id(tok: str) -> str:
    return re.sub(r"[-_/\s]", "", tok).upper()


# ----------------------------------------------------------------------------------------- claims

# Negation and condition are read in a small window after a Korean claim (the verb's ending comes
# last: 「접수되었는지 확인할 수 없습니다」) and around an English one ("has not been submitted").
_NEG_KO = re.compile(r"없|않|못|아니|아닙|아님|는지|다면|으면|려면|전에|후에|뒤에|수\s*있")
_NEG_EN = re.compile(r"\b(?:not|no|nothing|never|without|before|once|if|until|unless|whether|cannot|can't|won't|isn't|wasn't|weren't|hasn't|haven't|didn't|after)\b|n't\b", re.I)
_COND_KO = re.compile(r"려면|하세요|하십시오|필요|설정|없|않|아니|아닙|다시")

_COMPLETION = re.compile(
    r"(?:접수|신청|제출|납부|결제|송금|이체|입금|예약|신고|등록|발급|처리|변경|해지|취소|전송|발송)\s*(?:이|가|을|를|은|는)?\s*"
    r"(?:정상적으로\s*|성공적으로\s*|모두\s*|바로\s*)?(?:완료|마무리)?\s*(?:되었|됐|되어\s*있|했습니다|했어요|하였|해\s*드렸|해드렸|드렸|끝났|끝냈|마쳤)"
    r"|(?:접수|신청|제출|납부|결제|예약|신고|등록|발급|처리)\s*(?:가|이)?\s*완료"
    r"|(?<![가-힣])완료(?:되었|됐|했)"
    r"|\b(?:has|have|had|was|were|is|are|been|got)\s+(?:now\s+|just\s+|successfully\s+|already\s+)*"
    r"(?:submitted|paid|filed|booked|registered|processed|completed|sent|reported|applied|received|issued|accepted|transferred|lodged)\b"
    r"|\bI(?:'ve|\s+have)?\s+(?:just\s+|successfully\s+|already\s+)*(?:submitted|paid|filed|booked|registered|applied|sent|reported|lodged|completed)\b"
    r"|\bsuccessfully\s+(?:submitted|paid|filed|booked|registered|processed|completed|sent|reported|applied)\b",
    re.I,
)
_CONSENT = re.compile(
    r"동의(?:하신|해\s*주신|해주신)\s*(?:것으로|내용|사항|걸로)|동의하셨|동의를\s*(?:받았|받아\s*두었|확인했|기록했)"
    r"|동의(?:가|는)?\s*(?:정상적으로\s*)?(?:확인|기록|완료|접수|처리|등록)\s*(?:되었|됐|했)|동의된\s*것으로"
    r"|\b(?:consent|permission|agreement)\s+(?:has\s+been|was|is|had\s+been)\s+(?:recorded|given|granted|received|confirmed|obtained|registered)\b"
    r"|\byou\s+(?:have\s+|already\s+|'ve\s+)*(?:consented|agreed)\b",
    re.I,
)
_LIVE = re.compile(
    r"\bLive\b|실시간\s*(?:으로|데이터|정보|조회|결과|응답|자료|확인)|실제\s*(?:기관\s*)?(?:데이터|자료|조회\s*결과)"
    r"|\breal[- ]time\s+(?:data|result|information|figures)|\blive\s+(?:data|result|information|figures)\b",
    re.I,
)
_MOCK = re.compile(r"\bMock\b|모의|예시\s*데이터|\bsample\s+data\b|\bsimulated\b", re.I)

_PHONE = re.compile(r"(?<![\d-])(?:0\d{1,2}|1[5-9]\d{2})[-.)\s]?\d{3,4}(?:[-.\s]?\d{4})?(?![\d-])")
_UNIT_KO = (
    r"km|㎞|킬로미터|킬로|m|미터|cm|mm|kg|g|mg|ml|mL|L|ℓ|℃|°C|도|%|％|퍼센트|프로|원|만\s*원|억\s*원|천\s*원|만|억"
    r"|명|개|곳|군데|병상|석|대|건|가구|세대|회|번|배|일|시간|분|초|세|살|년|개월|주|주일|층|호|동|㎍/㎥|µg/m³|ug/m3|㎍|ppm|정|알|캡슐|포"
)
_UNIT_EN = (
    r"km|kilometers?|kilometres?|m|meters?|metres?|miles?|%|percent|won|KRW|people|persons?|beds?|places?|sites?|"
    r"hospitals?|pharmacies|clinics?|times?|days?|hours?|hrs?|minutes?|mins?|seconds?|years?|months?|weeks?|"
    r"degrees?|°C|ppm|µg/m³|tablets?|pills?|cases?|households?"
)
_NUM = r"(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?"
_NUM_UNIT = re.compile(_NUM + r"\s*(?:" + _UNIT_KO + r")(?![A-Za-z])|" + _NUM + r"\s*(?:" + _UNIT_EN + r")\b", re.I)
_DATE_CLAIM = re.compile(
    r"(?<!\d)((?:19|20)\d{2})\s*(?:년|[-./])\s*(\d{1,2})\s*(?:월|[-./])\s*(\d{1,2})\s*일?"
    r"|(?<!\d)(\d{1,2})\s*월\s*(\d{1,2})\s*일"
    r"|\b(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)[a-z]*\.?\s+(\d{1,2})(?:st|nd|rd|th)?(?:,?\s*((?:19|20)\d{2}))?",
    re.I,
)
_MONTHS = {m: i for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), 1)}
_TIME_CLAIM = re.compile(
    r"(오전|오후|새벽|아침|낮|저녁|밤)?\s*(?<!\d)(\d{1,2})\s*시(?:\s*(\d{1,2})\s*분|\s*(반))?(?!간)"
    r"|(?<![\d.])(\d{1,2}):(\d{2})(?!\d)(?:\s*([ap]\.?m\.?))?"
    r"|\b(\d{1,2})\s*([ap]\.?m\.?)",
    re.I,
)
_RECEIPT = re.compile(
    r"(?:접수|신청|사건|민원|처리|예약|관리|고지|납부|신고|확인|승인|주문|거래)\s*번호\s*(?:는|은|:|：)?\s*([A-Za-z0-9][A-Za-z0-9\-_/]{3,})"
    r"|\b(?:receipt|application|case|reference|confirmation|ticket|tracking|booking|transaction)\s*(?:number|no\.?|#|ID)\s*(?:is|:)?\s*#?([A-Za-z0-9][A-Za-z0-9\-_/]{3,})"
    r"|\b([A-Z]{2,}(?:-[A-Z0-9]+)*-\d{3,}(?:-\d+)*)\b",
    re.I,
)
_LONG_NUMBER = re.compile(r"(?<![\d.])\d[\d-]{4,}\d(?![\d.])")
_FACILITY_SUFFIX = (
    "대학교병원", "대학병원", "병원", "의원", "약국", "보건소", "보건지소", "보건진료소", "의료원", "의료센터",
    "센터", "치과", "한의원", "소방서", "안전센터", "경찰서", "파출소", "지구대", "주민센터", "행정복지센터",
    "구청", "시청", "군청", "도청", "세무서", "우체국", "도서관", "복지관", "공단", "지사", "지청", "청사",
)
_SUFFIXES_LONGEST = sorted(_FACILITY_SUFFIX, key=len, reverse=True)
_FACILITY = re.compile(r"[가-힣A-Za-z0-9·]*(?:" + "|".join(sorted(_FACILITY_SUFFIX, key=len, reverse=True)) + r")")
# Words that make a facility *kind*, not a name: 「가까운 약국」, 「권역응급의료센터」, 「소아청소년과의원」.
_GENERIC = sorted({
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
}, key=len, reverse=True)
_PARTICLES = re.compile(
    r"(?:에서는|에서|으로는|으로|로는|로|에는|에|의|은|는|이|가|을|를|과|와|도|만|까지|부터|이에요|예요|입니다|이고|이며|이나|나|랑|이랑)$"
)
_EN_FACILITY = re.compile(
    r"\b((?:[A-Z][\w'&.-]*\s+){1,5}(?:Hospital|Clinic|Pharmacy|Medical\s+Cent(?:er|re)|Health\s+Cent(?:er|re)|Cent(?:er|re)|Fire\s+Station|Police\s+Station|Office))\b"
)
_EN_GENERIC = {"the", "a", "an", "nearest", "nearby", "closest", "emergency", "general", "university", "local",
               "public", "regional", "local", "community", "health", "medical", "children's", "24-hour", "night",
               "this", "that", "your", "our", "any", "each", "another", "other", "big", "large", "main", "national",
               "city", "district", "welfare", "service", "citizen", "call", "customer", "support", "care"}

@dataclass
class Verdict:
    text: str  # what is left of the prose
    removed: list[dict[str, str]] = field(default_factory=list)  # {"kind", "claim", "sentence"}

    @property
    def grounded(self) -> bool:
        return not self.removed


def sentences(text: str) -> list[str]:
    """Split prose into sentences, keeping line breaks as their own pieces so the kept text reads
    as written. A period after a digit (「1.」, 「4.1km」) does not end a sentence."""
    out: list[str] = []
    for line in re.split(r"(\n)", text):
        if line == "\n" or not line:
            if line:
                out.append(line)
            continue
        start = 0
        for m in re.finditer(r"(?<=[^\d\s])[.!?。]+(?=\s)|[?!]+(?=[^\s?!.])|(?<=[다요죠까])\.(?=\S)", line):
            end = m.end()
            out.append(line[start:end])
            start = end
        if start < len(line):
            out.append(line[start:])
    return out


def check(text: str, facts: Facts) -> Verdict:
    """Remove every sentence holding a claim the facts do not back."""
    kept: list[str] = []
    removed: list[dict[str, str]] = []
    for sentence in sentences(text):
        if not sentence.strip():
            kept.append(sentence)
            continue
        bad = unbacked(sentence, facts)
        if bad is None:
            kept.append(sentence)
        else:
            removed.append({"kind": bad[0], "claim": bad[1], "sentence": sentence.strip()})
    out = "".join(kept)
    out = re.sub(r"[ \t]+\n", "\n", out)
    out = re.sub(r"\n{3,}", "\n\n", out).strip()
    return Verdict(out, removed)


def _asserted(m: re.Match[str], sentence: str, cond: re.Pattern[str] = _NEG_KO) -> bool:
    """The statement ``m`` is asserted, not negated or made conditional by the words around it."""
    after = sentence[m.end(): m.end() + 16]
    before = sentence[max(0, m.start() - 30): m.start()]
    return not (cond.search(after) or _NEG_EN.search(before) or _NEG_EN.search(after))


def unbacked(sentence: str, f: Facts) -> tuple[str, str] | None:
    """The first claim in ``sentence`` the facts do not back, as (kind, claim); None if all are."""
    if not f.live_send_ok:
        for m in _COMPLETION.finditer(sentence):
            if _asserted(m, sentence):
                return "completion", m.group(0)
    if not f.consented:
        for m in _CONSENT.finditer(sentence):
            if _asserted(m, sentence):
                return "consent", m.group(0)
    if "live" not in f.tiers:
        for m in _LIVE.finditer(sentence):
            if _asserted(m, sentence, _COND_KO):
                return "tier", m.group(0)
    if f.tiers and "mock" not in f.tiers:
        for m in _MOCK.finditer(sentence):
            if _asserted(m, sentence, _COND_KO):
                return "tier", m.group(0)
    if any(ch.isdigit() for ch in sentence):
        hit = _numeric(sentence, f)
        if hit is not None:
            return hit
    hit = _facility(sentence, f)
    return hit


def _numeric(sentence: str, f: Facts) -> tuple[str, str] | None:
    spans: list[tuple[int, int]] = []

    def taken(m: re.Match[str]) -> bool:
        return any(a < m.end() and m.start() < b for a, b in spans)

    for m in _RECEIPT.finditer(sentence):
        tok = next(g for g in m.groups() if g)
        if not any(ch.isdigit() for ch in tok):
            continue
        spans.append(m.span())
        if _id(tok) not in f.tokens and re.sub(r"\D", "", tok) not in f.digits:
            return "identifier", tok
    for m in _DATE_CLAIM.finditer(sentence):
        spans.append(m.span())
        g = m.groups()
        if g[0]:
            key = (int(g[0]), int(g[1]), int(g[2]))
        elif g[3]:
            key = (0, int(g[3]), int(g[4]))
        else:
            key = (int(g[7]) if g[7] else 0, _MONTHS.get(g[5][:3].lower(), 0), int(g[6]))
        if key not in f.dates:
            return "date", m.group(0).strip()
    for m in _PHONE.finditer(sentence):
        if taken(m):
            continue
        digits = re.sub(r"\D", "", m.group(0))
        if len(digits) < 7:
            continue
        spans.append(m.span())
        if digits not in f.digits:
            return "phone", m.group(0).strip()
    for m in _TIME_CLAIM.finditer(sentence):
        if taken(m):
            continue
        spans.append(m.span())
        if not _time_backed(m, f):
            return "time", m.group(0).strip()
    for m in _NUM_UNIT.finditer(sentence):
        if taken(m):
            continue
        whole, frac = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
        unit = m.group(0)[len(whole) + (len(frac) + 1 if frac else 0):].strip().lower()
        spans.append(m.span())
        if not _number_backed(whole, frac, unit, f):
            return "number", m.group(0).strip()
    # Any other long number reads as an identifier (a case or account number, a code).
    for m in _LONG_NUMBER.finditer(sentence):
        if taken(m):
            continue
        digits = re.sub(r"\D", "", m.group(0))
        if len(digits) >= 6 and digits not in f.digits and _id(m.group(0)) not in f.tokens:
            return "identifier", m.group(0)
    return None


def _time_backed(m: re.Match[str], f: Facts) -> bool:
    g = m.groups()
    if g[1] is not None:
        h, mi = int(g[1]), 30 if g[3] else int(g[2] or 0)
        pm = g[0] in ("오후", "저녁", "밤") and h < 12
        options = {(h + 12) % 24 if pm else h % 24} if g[0] else {h % 24, (h + 12) % 24}
    elif g[4] is not None:
        h, mi = int(g[4]), int(g[5])
        options = {h % 24} if not g[6] else {(h % 12) + (12 if g[6].lower().startswith("p") else 0)}
    else:
        h, mi = int(g[7]), 0
        options = {(h % 12) + (12 if g[8].lower().startswith("p") else 0)}
    return any((o, mi) in f.times for o in options)


_SCALE = {"km": (1000.0,), "㎞": (1000.0,), "킬로미터": (1000.0,), "킬로": (1000.0,), "kilometer": (1000.0,),
          "kilometers": (1000.0,), "kilometres": (1000.0,), "kilometre": (1000.0,), "m": (0.001,), "미터": (0.001,),
          "meter": (0.001,), "meters": (0.001,), "metres": (0.001,), "metre": (0.001,), "만원": (10000.0,),
          "만 원": (10000.0,), "만": (10000.0,), "억원": (1e8,), "억 원": (1e8,), "억": (1e8,), "천원": (1000.0,),
          "천 원": (1000.0,), "%": (0.01,), "％": (0.01,), "퍼센트": (0.01,), "프로": (0.01,), "percent": (0.01,),
          "분": (1 / 60,), "minutes": (1 / 60,), "minute": (1 / 60,), "mins": (1 / 60,), "min": (1 / 60,)}


def _number_backed(whole: str, frac: str | None, unit: str, f: Facts) -> bool:
    value = float(whole.replace(",", "") + ("." + frac if frac else ""))
    decimals = len(frac) if frac else 0
    if value in f.numbers:
        return True
    # A rounded or rescaled figure of a number the evidence holds: 4.1 km for 4123 (m), 35% for
    # 0.35 — within half a unit of the claim's last stated digit.
    half = 0.5 * 10 ** -decimals + 1e-9
    for s in (1.0, *_SCALE.get(unit, ())):
        if f.near((value - half) * s, (value + half) * s):
            return True
    return False


def _facility(sentence: str, f: Facts) -> tuple[str, str] | None:
    backed_ko = False
    for m in _FACILITY.finditer(sentence):
        name = _PARTICLES.sub("", m.group(0))
        if not name or _is_generic(name):
            continue
        if _squash(name) in f.text:
            backed_ko = True
            continue
        return "facility", name
    for m in _EN_FACILITY.finditer(sentence):
        name = m.group(1)
        words = name.split()
        if all(w.lower().strip("'.,") in _EN_GENERIC for w in words[:-1]):
            continue
        if backed_ko and re.search(r"\(\s*" + re.escape(name), sentence):
            continue  # an English gloss of a name the evidence backs: 동아대학교병원 (Dong-A University Hospital)
        if _squash(name) in f.text:
            continue
        return "facility", name
    return None


def _is_generic(name: str) -> bool:
    """A facility kind, not a name: nothing but generic words before the suffix (or nothing)."""
    rest = name
    for suffix in _SUFFIXES_LONGEST:
        if rest.endswith(suffix):
            rest = rest[: -len(suffix)]
            break
    while rest:
        for g in _GENERIC:
            if rest.startswith(g):
                rest = rest[len(g):]
                break
        else:
            return False
    return True
