"""The words that name an adapter's service, derived from its own hints and title (no pydantic:
the runtime imports this on the cold path; model/guidance.py holds the registry data's types)."""

from __future__ import annotations

import re
from collections.abc import Iterable

_SPLIT = re.compile(r"[\s,·/()\[\]?!.~\"'“”‘’:;+]+")
_HANGUL = re.compile(r"[\uac00-\ud7a3]")
# Korean predicate endings (grammar, not vocabulary): a hint word ending in one of these is a verb
# or adjective the citizen says (「쓰러졌어요」, 「받을」, 「먹어도」, 「언제 와」), never the name of
# a service. Nouns rarely end so; a manifest names its service exactly with ``service_words``.
# (Not 고/서/지/다: 신고, 신청서, 미세먼지 and 바다 are nouns.)
_PREDICATE_END = ("요", "야", "어", "해", "돼", "줘", "까", "니", "래", "게", "는", "은", "을", "를",
                  "워", "네", "죠", "냐", "데")


# Particles a hint word may carry (「허리가」, 「신분증으로」, 「나라에서」): the stem names the thing.
# Only on words of three or more characters, so 아이 and 국가 keep their last syllable.
_PARTICLE_END = ("으로", "에서", "에게", "한테", "이", "가", "와")


def _words_of(text: str) -> list[str]:
    text = re.sub(r"\([^)]*\)", " ", text).replace("'", "").replace("’", "")
    return [w for w in _SPLIT.split(text) if w]


def _stem(word: str) -> str:
    for p in _PARTICLE_END:
        if len(word) >= 3 and word.endswith(p) and len(word) - len(p) >= 2:
            return word[: -len(p)]
    return word


def derive_service_words(hints_ko: Iterable[str], hints_en: Iterable[str], title_ko: str, title_en: str,
                         generic: Iterable[str]) -> dict[str, list[str]]:
    """The words that name an adapter's service, from its hints and title: Korean words of two or
    more characters that are neither generic nor a predicate form; English phrases with the generic
    words taken out. (A protected adapter declares its own ``service_words``: a derived single word
    like "ticket" would name too much for a consent notice.)"""
    gen = {g.lower().replace(" ", "") for g in generic}
    ko: list[str] = []
    for text in (*hints_ko, title_ko):
        for w in _words_of(text):
            lw = _stem(w.lower())
            if len(lw) < 2 or lw in gen or not _HANGUL.search(lw) and not re.search(r"[a-z]", lw):
                continue
            if _HANGUL.search(lw[-1]) and lw.endswith(_PREDICATE_END):
                continue
            ko.append(lw)
    en: list[str] = []
    for text in (*hints_en, title_en):
        words = [w for w in _words_of(text) if w.lower() not in gen]
        phrase = " ".join(w.lower() for w in words)
        # a phrase of three letters or more, or an acronym as the hint writes it (ER, AED, KTX)
        if len(phrase.replace(" ", "")) >= 3 or (len(words) == 1 and len(words[0]) >= 2 and words[0].isupper()):
            en.append(phrase)
        # and each word of four letters or more on its own: "will it rain" names rain
        en += [w.lower() for w in words if len(w) >= 4 and w.isalpha()]
    return {"ko": sorted(set(ko)), "en": sorted(set(en))}


