"""Korean grammar the readers need: particles, endings and the 받침 agreement between them.

This module is the only place Korean is written in the runtime's Python, and it holds grammar, not
vocabulary: case and topic particles (이/가, 은/는, 을/를, 과/와, (으)로 …), copula and predicate
endings, and the rule that picks between the two forms of a particle — 이, 은, 을, 과, 으로 follow a
syllable with a final consonant (받침), 가, 는, 를, 와, 로 one without (로 also follows ㄹ). Words (what
a place, a product, a request word is) are registry data (registry/_vocab/, runtime/understand/vocab.py).

``strip_particle`` takes a particle off a word only when the grammar allows it and the remaining
word is no better a match than the whole: 판콜에이 keeps its 이 (에 has no 받침, so 이 cannot be a
particle there), 게보린이 → 게보린, 베아제가 → 베아제, 효원로 keeps 로 (원 ends in ㄴ, which takes 으로),
and a word that is itself a known noun (횡단보도, 위도) is never cut.
"""

from __future__ import annotations

import re
from collections.abc import Container

_HANGUL_BASE, _HANGUL_LAST = 0xAC00, 0xD7A3
_RIEUL = 8  # the final-consonant index of ㄹ


def is_hangul(ch: str) -> bool:
    return len(ch) == 1 and _HANGUL_BASE <= ord(ch) <= _HANGUL_LAST


def final_consonant(ch: str) -> int | None:
    """The 받침 index of a syllable (0: none, 8: ㄹ), None for a character that is no syllable."""
    if not is_hangul(ch):
        return None
    return (ord(ch) - _HANGUL_BASE) % 28


def has_batchim(word: str) -> bool | None:
    """Whether ``word`` ends in a final consonant; None when it does not end in a syllable (a
    digit, a Latin letter: either form may follow, 「3이」 and 「A가」 are both written)."""
    if not word:
        return None
    f = final_consonant(word[-1])
    return None if f is None else f != 0


# Particles in pairs: (after a final consonant, after none). 로 also follows ㄹ.
_PAIRS = (("이", "가"), ("은", "는"), ("을", "를"), ("과", "와"), ("으로", "로"), ("이랑", "랑"), ("이나", "나"),
          ("이라도", "라도"), ("으로는", "로는"), ("으로도", "로도"), ("이라", "라"), ("이며", "며"), ("이란", "란"),
          ("이든", "든"), ("이요", "요"))
AFTER_CONSONANT = frozenset(c for c, _v in _PAIRS)
AFTER_VOWEL = frozenset(v for _c, v in _PAIRS)
# Particles that follow anything.
NEUTRAL = frozenset((
    "에서는", "에서도", "에서", "에게서", "에게", "한테서", "한테", "께서", "께", "에는", "에도", "에선", "엔", "에",
    "까지", "부터", "하고", "의", "도", "만", "처럼", "보다", "마다", "조차", "밖에", "까지만", "부터는", "만큼", "이랑은",
    "더러", "보고", "요",
))
PARTICLES: tuple[str, ...] = tuple(sorted(AFTER_CONSONANT | AFTER_VOWEL | NEUTRAL, key=len, reverse=True))
# Particles of place (「광장시장에 계신데요」, 「해수욕장에서 놀다가」): a word carrying one says where.
LOCATIVE = frozenset(("에", "에서", "에는", "에서는", "에도", "에서도", "에선", "엔"))


def particle_fits(stem: str, particle: str) -> bool:
    """The 받침 agreement: may ``particle`` follow ``stem``?"""
    if particle in NEUTRAL:
        return True
    final = final_consonant(stem[-1]) if stem else None
    if final is None:
        return True  # a digit or a Latin letter before a particle: either form is written
    if particle in ("으로", "으로는", "으로도"):
        return final not in (0, _RIEUL)
    if particle in ("로", "로는", "로도"):
        return final in (0, _RIEUL)
    if particle in AFTER_CONSONANT:
        return final != 0
    if particle in AFTER_VOWEL:
        return final == 0
    return True


# The directional particle (으)로 (「부산역으로 가」, 「해운대로 와」). A word ending so is also the
# shape of a road name (효원로, 해운대로, 한누리대로): the two are told apart by what follows. The
# particle governs a verb of motion; it never stands before a building number (「해운대로 25」) or a
# place anchor noun (「해운대로 근처」), so before those the ending is the road's own.
DIRECTIONAL = frozenset(("으로", "로"))


def ends_like_directional(word: str) -> bool:
    """``word`` ends in (으)로 after a stem of two syllables or more, as the directional particle
    would; the reader decides by what follows whether that 로 is the particle or the name's."""
    return any(word.endswith(p) and len(word) > len(p) + 1 for p in DIRECTIONAL)


def split_particle(word: str, *, known: Container[str] = (), min_stem: int = 2,
                   roads: bool = False) -> tuple[str, str]:
    """(stem, particle) of one eojeol — particle "" when none may be taken off.

    A particle is taken off only when (1) the grammar allows it after the stem (받침 agreement),
    (2) at least ``min_stem`` characters remain and (3) the whole word is not itself known
    (``known``: nouns and names the registry knows). With ``roads`` (reading a place), a 로 after a
    stem nobody knows is a road name's own ending (한누리대로), not the particle."""
    if word in known:
        return word, ""
    for p in PARTICLES:
        if not word.endswith(p) or len(word) - len(p) < min_stem:
            continue
        stem = word[: -len(p)]
        if not particle_fits(stem, p):
            continue
        if roads and p in ("로", "로는", "로도", "도") and stem not in known:
            continue  # 한누리대로, 월미도: a road's or an island's own ending after a name nobody knows
        return stem, p
    return word, ""


def strip_particle(word: str, *, known: Container[str] = (), min_stem: int = 2, roads: bool = False) -> str:
    return split_particle(word, known=known, min_stem=min_stem, roads=roads)[0]


# Copula endings: the noun before them is what the clause is about (「하단동인데」 → 하단동).
COPULA_END = re.compile(
    r"^(?P<noun>.+?)(?:이?(?:인데요?|이고요?|이라서|이니까|이거든요?|이에요|이예요|예요|이야|이요|입니다|이에용|인데용)"
    r"|인데|이고|이라서|이니까|이거든|이에요|이예요|이야|이요|에요|예요|야|요|입니다|이라|라)$"
)
# Endings of predicates (verbs, adjectives): a word ending so ends a span and is not part of it.
PREDICATE_END = re.compile(
    r"(?:는데|은데|ㄴ데|아서|어서|해서|여서|니까|으면|하면|려면|는|았|었|했|겠|습니다|세요|해요|어요|아요|"
    r"줘|줘요|다|지|죠|네|까|고서|면서|더니|잖아|거든|을까|ㄹ까|할|한|하는|있는|없는|아픈|다친|"
    r"(?<!경찰|소방|세무|보건|우체|파출)서|워서|와서|러서|려서|데|신데|신데요|계신데|계신데요|는데요|던데|나요|가요|을게|ㄹ게|"
    r"어도|아도|여도|셔도|해도|워도|와도|봐도|져도|려도|나면|으니|이면|일까|인지|는지|은지|을지|는지요|"
    r"었나|았나|했나|였나|겠나|나요|는가|은가|냐|니|을래|ㄹ래)$"
)
# Polite verb endings (「연락주세요」, 「가볼게요」, 「계신데요」): a predicate, never a noun with a copula.
POLITE_END = re.compile(r"(?:세요|셔요|게요|래요|까요|네요|어요|아요|해요|죠|습니다|신데요|신데|는데요|나요|가요)$")
# A word that is only an ending once a value before it was removed (「⟦⟧인데요」).
VERB_STEM_END = re.compile(r"(?:하|되|있|없|주|보|가|오|먹|쓰|받|드|시키|알리)(?:고|게|지|면|니|자|려|러|도)$")


_N_FINAL = 4  # the final-consonant index of ㄴ
_PAST_OR_BE = frozenset("했있없었았겠였됐왔갔봤줬")


_SSANG_SIOT = 20  # the final-consonant index of ㅆ, the past-tense 받침 (했, 었, 갔, 됐 …)


def past_tense(word: str) -> bool:
    """A predicate in the past tense (이사했는데, 왔어요, 늦었나): a syllable closed by ㅆ, except
    있 (being: 「있어」 is present) and 겠 (conjecture or future)."""
    # Korean nouns hardly ever close a syllable with ㅆ, so the 받침 alone marks the verb form.
    return any(final_consonant(ch) == _SSANG_SIOT and ch not in "있겠" for ch in word)


def hearsay(word: str) -> bool:
    """「온대」, 「간대요」, 「했대」, 「있대」: the hearsay ending -ㄴ대/-었대 after a verb, never the 대 of a name
    (첨성대, 동아대: the syllable before has no ㄴ and is no past or being form)."""
    core = word[:-1] if word.endswith("요") else word
    if len(core) < 2 or core[-1] not in "대래":
        return False
    before = core[-2]
    return final_consonant(before) == _N_FINAL or before in _PAST_OR_BE


def is_predicate(word: str) -> bool:
    """A verb or adjective form (it ends a clause): 아파서, 가려면, 계신데요, 알려주세요, 온대."""
    return bool(PREDICATE_END.search(word) or POLITE_END.search(word) or hearsay(word))


# The syllables a verb or adjective stem (or a tense) ends in before the adnominal -는/-은 (공부하는,
# 되는, 있는, 없는, 않는, 가려는, 했는): grammar, not vocabulary.
_ADNOMINAL_BEFORE = frozenset("하되있없않려겠었았했였")


def clause_final_topic(word: str) -> str | None:
    """The noun of a topic-marked word that ends the message (「경리는?」, 「바리스타는?」, 「서울은?」):
    Korean ends no question with the adnominal -는, so there the 는/은 is the topic particle of an
    elliptical follow-up, not a verb form — unless the stem is a verb's (「공부하는」, 「있는」) or
    too short to be a noun on its own (「먹는」, 「가는」)."""
    w = word.strip(".,!?~…\"' ")
    for p in ("는", "은"):
        if not w.endswith(p) or len(w) - 1 < 2:
            continue
        stem = w[:-1]
        if not is_hangul(stem[-1]) or stem[-1] in _ADNOMINAL_BEFORE or not particle_fits(stem, p):
            continue
        if PREDICATE_END.search(stem) or POLITE_END.search(stem):
            continue
        return stem
    return None


def copula_noun(word: str) -> str | None:
    """The noun of a copula form (「부산역이고」 → 부산역), else None."""
    m = COPULA_END.match(word)
    return m.group("noun") if m else None


# Numerals with their units (년, 월, 일, 주, 시, 분, 반) and the postpositions of time (뒤, 후, 전): the
# forms a date or a time takes (runtime/understand/dates.py reads them; the words are calendar data).
DAY_UNIT = "일"
# Particles that make a day the target of a verb (「12월 20일로 예약했는데」, 「까지 내야 해」), not
# the time the clause happened.
TARGET_PARTICLES = ("로", "으로", "까지")
BEFORE = frozenset({"전"})
AFTER = ("뒤", "후", "있다가", "지나")
_DIR = "|".join((*AFTER, *BEFORE))
DATE_YEAR = re.compile(r"(?<!\d)(20\d\d|19\d\d)\s*년")
DATE_YMD = re.compile(r"(?<!\d)((?:19|20)\d{2})\s*(?:년\s*|[-./\/]\s*)(\d{1,2})\s*(?:월\s*|[-./\/]\s*)(\d{1,2})\s*일?(?!\d)")
DATE_YY_MD = re.compile(r"(?<![\d.\-/])(\d{2})\s*(?:년\s*|[-./\/]\s*)(\d{1,2})\s*(?:월\s*|[-./\/]\s*)(\d{1,2})\s*일?(?![\d.])")
DATE_MD = re.compile(r"(?<!\d)(1[0-2]|0?[1-9])\s*월\s*(3[01]|[12]\d|0?[1-9])\s*일")
DATE_MONTH = re.compile(r"(?<!\d)(1[0-2]|0?[1-9])\s*월(?!\s*(?:3[01]|[12]\d|0?[1-9])\s*일)")
DATE_MONTH_ANY = re.compile(r"(?<!\d)(1[0-2]|0?[1-9])\s*월")
DATE_IN_DAYS = re.compile(r"(\d{1,3})\s*일\s*(" + _DIR + ")")
DATE_IN_WEEKS = re.compile(r"(\d{1,2})\s*주\s*(" + _DIR + ")")
DATE_HOUR = re.compile(r"(?<![\d:.])(\d{1,2})\s*시(?:\s*(\d{1,2})\s*분|\s*(반))?(?!간)")
# A number with a unit of time (「3일」, 「2주 뒤」, 「5시간」): never a place or a name.
DATE_AMOUNT = re.compile(r"(?<!\d)\d{1,3}\s*(?:일|주|달|개월|년|시간|분)(?:\s*(?:" + _DIR + r"|동안|만에))?(?=\s|$|[은는이가을를도에의?!.,])")
TIME_UNITS = "(?:시|분|일|월|년)"
ONE_SYLLABLE_PARTICLE = "[" + "".join(sorted({p for p in NEUTRAL | AFTER_CONSONANT | AFTER_VOWEL if len(p) == 1})) + "]"
TOPIC_PARTICLES = ("은", "는", "이", "가", "을")

# What stands between a label and the value it introduces (「제출할 곳은 ⟨신한은행⟩」, "purpose: ⟨…⟩",
# "recipient is ⟨…⟩"): a topic or subject particle, a colon, an English copula.
LABEL_GLUE = re.compile(r"(?:\s*(?:은|는|이|가)(?=\s)|\s*:|\s+(?i:is|was|=))\s*")
# Where a stated value ends: a clause boundary (punctuation, a conjunction between clauses).
CLAUSE_END = re.compile(r"[,.;?!\n]|\s(?:그리고|and)\s")

# What may follow a name stated in a sentence (「홍길동이고」, 「박하나입니다」): copulas and particles.
NAME_END = r"(?=이고|이며|이에요|이예요|입니다|이야|이요|이구요|예요|요|이라고|라고|이랑|님|씨|,|\s|$)"

# English number words (two places, three days ago).
EN_NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
              "ten": 10, "a couple of": 2, "a few": 3}

# A name introducing oneself (「홍길동이라고 합니다」, 「김민지입니다」 after 저는): the copulas of it.
SELF_CALLED = r"이?라고\s*(?:합니다|해요|해|하는데요?)"
POLITE_COPULA = r"(?:입니다|이에요|예요|이고요?)(?=\s|[,.]|$)"

# Sino-Korean and native numbers a citizen spells out before a counter (세 곳, 다섯 개): grammar of
# numerals, kept with the particles.
NATIVE_NUMBERS = {"한": 1, "하나": 1, "두": 2, "둘": 2, "세": 3, "셋": 3, "석": 3, "네": 4, "넷": 4, "다섯": 5, "여섯": 6,
                  "일곱": 7, "여덟": 8, "아홉": 9, "열": 10}
# Scales after a number (3만 원, 1억).
NUMBER_SCALES = {"천": 1_000, "만": 10_000, "억": 100_000_000}
SINO_NUMBERS = {"일": 1, "이": 2, "삼": 3, "사": 4, "오": 5, "육": 6, "칠": 7, "팔": 8, "구": 9, "십": 10}


def sino_number(word: str) -> int | None:
    """오 → 5, 십이 → 12, 이십오 → 25 (months and days spelled out: 오월, 시월 is irregular → vocab)."""
    if not word or any(ch not in SINO_NUMBERS for ch in word):
        return None
    total, current = 0, 0
    for ch in word:
        v = SINO_NUMBERS[ch]
        if v == 10:
            total += (current or 1) * 10
            current = 0
        else:
            current = v
    return total + current


WORD = re.compile(r"[^\s,.!?~…\"'()\[\]「」『』]+")


def eojeols(text: str) -> list[str]:
    """The words (어절) of a text, punctuation around them dropped."""
    return WORD.findall(text)


__all__ = ["AFTER_CONSONANT", "AFTER_VOWEL", "CONDITION_AFTER_PAST", "COPULA_END", "clause_final_topic", "DEEMING_VERBS", "DIRECTIONAL", "ends_like_directional", "NEUTRAL", "PARTICLES", "POLITE_END", "PREDICATE_END",
           "copula_noun", "eojeols", "final_consonant", "has_batchim", "is_hangul", "is_predicate", "past_tense", "particle_fits",
           "sino_number", "split_particle", "strip_particle"]


# The law's deeming after 「…된 것으로」 (「주민등록이 된 것으로 본다」): treated as done by law, for
# everyone — no report that something was done (the claim check reads it so).
DEEMING_VERBS = ("본다", "보며", "보아", "보고", "보지", "간주")
# Endings that make a finished verb a condition (「마쳤을 때에는」, 「했다면」, 「되었으면」): when it
# happens, not that it did. A regex fragment, read right after the verb's past stem.
CONDITION_AFTER_PAST = r"\s*(?:을|던)?\s*(?:때|경우)|으면|다면|던|는지|을지"
