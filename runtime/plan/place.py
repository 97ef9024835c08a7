"""Place span extraction: the words of a request that name a place, and nothing else.

「하단동인데 제일 가까운 응급실 어디야?」 → 하단동; 「제 번호 010-…인데 부산역 근처 약국」 → 부산역.
What goes to a locate upstream is this span only: degree words (제일, 가장), time words (지금,
내일), request words (좀, 바로, 알려줘), pronouns and deixis (거기, 여기) and personal data are
never part of it.

Korean is read word by word (eojeol). Going back from the anchor (근처, 주변, 가까운 …), words are
collected while they can be part of a place name; a word that ends a clause (「…인데」, 「…아파서」)
ends the span — a copula clause (「하단동인데」, 「부산역이고」) still contributes its noun. Function
words between the place and the anchor are skipped. Without an anchor, a short message that is
only a place (an answer to 「어디 기준으로 찾을까요?」, or 「광주는?」) is read the same way.

Kiwi is not loaded here: its model takes seconds to load and a cold ``ummaya ask`` must answer in
about a second. Kiwi's user dictionary of landmarks (runtime/retrieve/analysis.py) and the
district list (lexicon.DISTRICTS) are used as known place names; the rest is the closed classes
below, which is where Korean function words live anyway.
"""

from __future__ import annotations

import re
from functools import lru_cache

from . import lexicon as lx

ANCHORS = ("근처", "주변", "인근", "부근", "근방", "가까운", "가까이", "가까운데", "가장가까운", "앞", "옆", "쪽")

# Closed classes that are never part of a place name.
DEGREE_WORDS = frozenset("제일 젤 가장 제일로 더 덜 진짜 정말 너무 아주 완전 엄청 꽤 되게 딱 최대한 조금".split())
REQUEST_WORDS = frozenset(
    """좀 바로 빨리 얼른 당장 혹시 그냥 일단 지금당장 알려줘 알려줘요 알려주세요 알려 찾아줘 찾아 찾아주세요
    보여줘 어디 어디야 어디에 어디요 어딨어 어디있어 어디있나요 있어 있나요 있니 있는 있을까 뭐 뭐야 무슨
    어떤 어때 어떄 어떻게 해줘 주세요 줘 부탁해 부탁해요 궁금해 싶어 가고 가려면 가야 가는 문 연 여는
    하는 할 수 있는 곳 데 거 것 때 번 좀요 요 네 예 아니 그럼 그러면 그리고 근데 그런데 그래서 또 다시
    저기요 여보세요 안녕하세요 하고 하려고 하려면 하려는데 할래 하는데 싶은데 싶어요 싶다 했어 했는데
    how""".split()
)
PRONOUNS = frozenset("나 저 제 내 우리 저희 너 당신 본인 제가 내가 저는 나는 우리집 저희집 집 지금위치 현재위치 여기서 저기서".split())
DEIXIS = frozenset("거기 여기 저기 그곳 이곳 저곳 그 이 그쪽 이쪽 저쪽 그근처 거기서 there here that".split())
# Words that introduce personal data (「전화 010-…」, 「이름은 홍길동」, "my email is …"): they say what
# the next value is, never where the citizen is, so they are never a place and never sent as one.
PERSONAL_LABELS = frozenset(
    """전화 전화번호 번호 휴대폰 휴대전화 핸드폰 핸드폰번호 폰 폰번호 연락처 연락번호 주민번호 주민등록번호 주민등록
    이메일 메일 메일주소 이메일주소 이름 성함 성명 실명 생년월일 생일 카드 카드번호 계좌 계좌번호 여권 여권번호
    면허 면허번호 운전면허 운전면허번호 차량번호 차번호 외국인등록번호 사업자번호 주소 집주소
    phone mobile number email e-mail name birthday""".split()
)
# Labels whose value is a word, not a number (「이름은 홍길동이고」): the next word is that value.
_WORD_VALUE_LABELS = frozenset("이름 성함 성명 실명 name".split())
# A copula or connective standing alone (「⟦⟧ 인데요」 once a value is removed): no noun, no place.
COPULA_WORDS = frozenset(
    "인데 인데요 이고 이고요 이구요 이에요 이예요 예요 이요 입니다 이야 이라서 이니까 이거든요 이랑 하고 고요 구요".split()
)
EN_STOP = frozenset(
    """the a an me my i i'm im am is are was be near nearby around close to by at in on of for from
    please show find tell what where which how about and or now today tomorrow tonight right this
    that there here closest nearest best open any some with""".split()
)

# Copula endings: the noun before them is the place (「하단동인데」 → 하단동), and the clause ends.
_COPULA_END = re.compile(
    r"^(?P<noun>.+?)(?:이?(?:인데요?|이고요?|이라서|이니까|이거든요?|이에요|이예요|예요|이야|이요|입니다|이에용|인데용)|인데|이고|이라서|이니까|이거든|이에요|이예요|이야|이요|에요|예요|야|요|입니다|이라|라)$"
)
# Endings of predicates (verbs, adjectives): such a word ends the span and is not part of it.
_PREDICATE_END = re.compile(
    r"(?:는데|은데|ㄴ데|아서|어서|해서|여서|니까|으면|하면|려면|는|았|었|했|겠|습니다|세요|해요|어요|아요|"
    r"줘|줘요|다|지|죠|네|까|고서|면서|더니|잖아|거든|을까|ㄹ까|할|한|하는|있는|없는|아픈|다친|"
    r"(?<!경찰|소방|세무|보건|우체|파출)서|워서|와서|러서|려서|데)$"
)
# Polite verb endings (「연락주세요」, 「가볼게요」): a request, never a noun with a copula.
_POLITE_END = re.compile(r"(?:세요|셔요|게요|래요|까요|네요|어요|아요|해요|죠|습니다)$")

# Place-name suffixes: a word ending so is a place even when unknown.
_PLACE_SUFFIX = re.compile(
    r"(?:특별시|광역시|특별자치시|특별자치도|도|시|군|구|읍|면|동|리|\d가|로|길|경찰서|소방서|세무서|보건소|우체국|번길|역|터미널|공항|항|병원|의원|"
    r"대학교|대학|대|캠퍼스|시청|구청|군청|도청|주민센터|센터|공원|시장|해수욕장|해변|아파트|타워|빌딩|"
    r"사거리|삼거리|오거리|입구|광장|거리|마을|단지|학교|초등학교|중학교|고등학교|점|호텔|교회|성당|사|"
    r"산|섬|다리|대교|정류장|정류소|출구)$"
)
_PERSONAL_MARK = "⟦⟧"
_WORD_CHARS = re.compile(r"[^\w\-·.⟦⟧]+", re.U)
_EN_NAME_VALUE = re.compile(r"\b(?:name|called)\s*(?:is|'s|:)?\s+[^,.;!?]+", re.I)
_EN_ANCHOR = re.compile(
    r"\b(?:near|around|close to|nearby|by|at|in|for)\s+(?P<place>[A-Za-z0-9 .'\-]+?)(?=\s*(?:[,?!.]|$|\b(?:today|tomorrow|tonight|now|right now|this|please|open|that|which|with|and|then)\b))",
    re.I,
)


@lru_cache(maxsize=1)
def known_places() -> frozenset[str]:
    """Names Kiwi's user dictionary and the district list know as places."""
    names: set[str] = set(lx.DISTRICTS)
    for full, short, legacy, en, _c in lx.SIDO:
        names.update(n for n in (full, short, legacy, en, en.lower()) if n)
    try:
        from ..retrieve.analysis import USER_DICTIONARY

        names.update(form for form, tag, _s in USER_DICTIONARY if tag == "NNP")
    except Exception:  # pragma: no cover - retrieval not installed
        pass
    return frozenset(names)


# Contractions a citizen types (「오후엔」 = 오후에는, 「거긴」 = 거기는) beside the plain particles.
_MORE_PARTICLES = ("에서는", "에선", "에는", "엔", "에요")


def _strip_particle(word: str) -> str:
    for p in (*_MORE_PARTICLES, *lx.PARTICLES):
        if word.endswith(p) and len(word) - len(p) >= 2:
            return word[: -len(p)]
    return word


def _is_function(word: str) -> bool:
    low = word.lower()
    if low in COPULA_WORDS or low in PERSONAL_LABELS:
        return True
    if low.endswith("요") and len(low) > 2:
        low = low[:-1]
    return (
        low in ANCHORS or low in PERSONAL_LABELS or
        low in DEGREE_WORDS or low in REQUEST_WORDS or low in PRONOUNS or low in DEIXIS
        or low in lx.TEMPORAL_WORDS or low in lx.STOPWORDS
    )


def classify(word: str) -> tuple[str, str]:
    """(kind, text) for one eojeol: kind is ``place`` (part of a name), ``place_end`` (a noun that
    ends its clause: 「하단동인데」), ``skip`` (a function word) or ``stop`` (ends the span)."""
    w = word.strip(".,!?~…\"'()[]「」『』")
    if not w or _PERSONAL_MARK in w or "[" in word:
        return "stop", ""
    if re.fullmatch(r"[\d\-]+", w) and len(w) >= 5:  # a number that is not a building number
        return "stop", ""
    if w in known_places() or re.search(r"\d가$", w):
        return "place", w
    if _is_function(w) or _is_function(_strip_particle(w)):
        return "skip", ""
    m = _COPULA_END.match(w)
    if m and _is_function(m.group("noun")):
        return "skip", ""
    if m and len(m.group("noun")) >= 2 and not _is_function(m.group("noun")):
        noun = m.group("noun")
        if noun in known_places() or _PLACE_SUFFIX.search(noun) or not (
                _PREDICATE_END.search(noun) or _POLITE_END.search(w)):
            return "place_end", noun
    stem = _strip_particle(w)
    if stem in known_places() or _PLACE_SUFFIX.search(stem):
        return "place", stem
    if _PREDICATE_END.search(w) or _POLITE_END.search(w):
        return "stop", ""
    if len(stem) < 2 and re.fullmatch(r"[가-힣]", stem):
        return "skip", ""  # a lone syllable (「로」 left by a removed value) names nothing
    kind = _kiwi_kind(w)
    if kind is not None:
        return kind, (stem if kind == "place" else "")
    return "place", stem


# Kiwi tags that begin a word which is never part of a place: verbs, adjectives, adverbs,
# determiners, interjections (Sejong tag set as Kiwi uses it).
_NOT_PLACE_TAGS = ("VV", "VA", "VX", "MAG", "MAJ", "MM", "IC", "NP")


def _kiwi_kind(word: str) -> str | None:
    """What Kiwi says about a word the closed classes above could not place — only when a Kiwi
    is already loaded in this process (a server analysing queries with Kiwi, the build); it is
    never loaded here, because loading takes seconds and a cold ``ummaya ask`` must not wait."""
    from ..retrieve import analysis

    k = getattr(analysis, "_kiwi", None)
    if k is None or not re.search(r"[가-힣]", word):
        return None
    try:
        tokens = k.tokenize(word)
    except Exception:  # pragma: no cover - a Kiwi failure must not fail a turn
        return None
    if not tokens:
        return None
    if tokens[0].tag.startswith(_NOT_PLACE_TAGS):
        return "stop"
    return None


def _span_backwards(words: list[str], max_words: int = 4, exclude: frozenset[str] = frozenset()) -> str | None:
    picked: list[str] = []
    for word in reversed(words):
        kind, text = classify(word)
        if kind in ("place", "place_end") and _is_service_word(text, exclude):
            # 「응급실 가야 돼 근처에」: the service asked for is not where it is asked for.
            kind = "stop" if picked else "skip"
        if kind == "skip":
            if picked:
                break
            continue
        if kind == "stop":
            break
        if kind == "place_end":
            if picked:  # a clause ended before the words already picked
                break
            picked.append(text)
            break
        picked.append(text)
        if len(picked) >= max_words:
            break
    if not picked:
        return None
    return " ".join(reversed(picked))


def _is_service_word(word: str, exclude: frozenset[str]) -> bool:
    low = word.lower()
    return bool(exclude) and low in exclude and word not in known_places()


def _words(text: str) -> list[str]:
    return _mask_labelled([w for w in _WORD_CHARS.sub(" ", text).split() if w])


def _mask_labelled(words: list[str]) -> list[str]:
    """The value after a word-valued label (「이름은 홍길동이고」 → the name) is personal data:
    marked like a removed value, so no place span reaches into it."""
    out = list(words)
    for i, w in enumerate(words[:-1]):
        stem = _strip_particle(w.strip(".,!?~").lower())
        if stem in _WORD_VALUE_LABELS or w.lower() in _WORD_VALUE_LABELS:
            out[i + 1] = _PERSONAL_MARK
    return out


def _anchor_split(text: str) -> tuple[str, str] | None:
    """(before, after) the first place anchor, or None."""
    for m in re.finditer(r"(?:에서\s*)?(?:가장\s*)?(" + "|".join(ANCHORS) + r")(?=\s|$|에|의|으로|로|[?.!,])", text):
        before = text[: m.start()]
        # 「앞」「옆」「쪽」 only as anchors after a word (「역 앞」), never inside one (「앞으로」 is time).
        if m.group(1) in ("앞", "옆", "쪽") and (not before or not before[-1].isspace()):
            if not before or not re.search(r"[가-힣A-Za-z0-9]$", before):
                continue
        return before, text[m.end():]
    return None


def place_span(text: str, language: str = "ko", exclude: frozenset[str] = frozenset()) -> str | None:
    """The place a request anchors on (「X 근처」, "near X"), or None. ``exclude``: words that
    name services (lower-case), which are never the place."""
    if language != "ko":
        m = _EN_ANCHOR.search(text)
        if not m:
            return None
        words = [w for w in m.group("place").split() if w.lower() not in EN_STOP and w.lower() not in PERSONAL_LABELS
                 and _PERSONAL_MARK not in w]
        place = " ".join(words).strip(" .'-")
        return place or None
    split = _anchor_split(text)
    if split is None:
        return None
    before = split[0]
    # 「부산역에서 가까운」: the particle goes with the anchor.
    before = re.sub(r"에서\s*$", "", before.rstrip())
    return _span_backwards(_words(before), exclude=exclude)


def bare_place(text: str, language: str = "ko", vocabulary: frozenset[str] | set[str] = frozenset()) -> str | None:
    """A message that is only a place (「하단동」, 「부산역이요」, 「광주는?」, "Haeundae"), or the
    place words of a short elliptical message once function words and the topic's own vocabulary
    (``vocabulary``, lower-case) are set aside."""
    if language != "ko":
        text = _EN_NAME_VALUE.sub(" ", text)  # "my name is Kim Minji, Haeundae": the name is no place
        words = [w.strip(".,!?'\"") for w in text.split()]
        kept = [w for w in words if w and w.lower() not in EN_STOP and w.lower() not in vocabulary
                and w.lower().rstrip(":") not in PERSONAL_LABELS
                and _PERSONAL_MARK not in w and not re.fullmatch(r"[\d\-+().]+", w)
                and not re.fullmatch(r"what|about|how|then|so|ok|okay", w.lower())]
        kept = [w for w in kept if w[:1].isupper() or any(c.isdigit() for c in w)]
        return " ".join(kept) or None
    picked: list[str] = []
    for word in _words(text):
        kind, value = classify(word)
        if kind in ("skip", "stop") or not value:
            if picked and kind == "stop":
                break
            continue
        low = value.lower()
        if any(low[:k] in vocabulary for k in range(len(low), 1, -1)):
            continue
        picked.append(value)
        if kind == "place_end" or len(picked) >= 4:
            break
    return " ".join(picked) or None


def has_deixis(text: str) -> bool:
    """「거기」「그 근처」「여기」 "there": the message points at the place already talked about."""
    low = text.lower()
    if re.search(r"\b(?:there|that place|same place|that area)\b", low):
        return True
    return re.search(r"(?:^|\s)(?:거기|그곳|그쪽|그\s*근처|그\s*주변|그\s*동네|저기|거긴|거기는|거기도|거기서|여기|이곳|이\s*근처|이\s*동네)", text) is not None


__all__ = ["PERSONAL_LABELS", "place_span", "bare_place", "has_deixis", "classify", "known_places"]
