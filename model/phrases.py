"""Phrase matching shared by the build and the query: spacing-free Korean phrases and whole-word
other phrases (runtime/guidance_reader.py says how requests are read). No pydantic: the runtime imports
this on the cold path, and the build's checks (codegen/emit_guidance.py) must match exactly as the
query does, or a check would pass a registry the runtime reads differently."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

_HANGUL = re.compile(r"[\uac00-\ud7a3]")
_NOT_WORD = re.compile(r"[^a-z0-9\uac00-\ud7a3]+")
_SEAM = re.compile(r"(?<=[a-z0-9])(?=[^a-z0-9])|(?<=[^a-z0-9])(?=[a-z0-9])")


def _fold(text: str) -> str:
    return unicodedata.normalize("NFC", text).lower().replace("'", "").replace("’", "")


@lru_cache(maxsize=8192)
def _words(text: str) -> str:
    """Letters and digits as space-separated words, split where they meet Hangul or punctuation."""
    return " ".join(_NOT_WORD.sub(" ", _SEAM.sub(" ", _fold(text))).split())


@dataclass(frozen=True)
class Text:
    """A request in the two forms phrases are matched against."""

    words: str  # " ktx 로 예매 ": whole-word phrases
    squashed: str  # NFC, lower case, no whitespace: Korean phrases (spacing varies)

    @classmethod
    def of(cls, text: str) -> Text:
        return cls(f" {_words(text)} ", "".join(_fold(text).split()))


# A Korean phrase written in words (「숨을 못 쉬」) matches its words in order with up to this many
# characters between them (「숨을 잘 못 쉬셔」, 「피가 계속 안 멈춰요」): citizens put adverbs in.
GAP = 3


@lru_cache(maxsize=8192)
def _phrase(phrase: str) -> tuple[bool, tuple[str, ...]]:
    p = _fold(phrase).strip()
    if _HANGUL.search(p):
        return True, tuple(p.split())
    w = _words(p)
    return False, (f" {w} ",) if w else ()


def _in_order(parts: tuple[str, ...], text: str) -> bool:
    """Every part in order, each within GAP characters of the one before (the first anywhere)."""
    start = text.find(parts[0])
    while start >= 0:
        at, ok = start + len(parts[0]), True
        for part in parts[1:]:
            i = text.find(part, at, at + GAP + len(part))
            if i < 0:
                ok = False
                break
            at = i + len(part)
        if ok:
            return True
        start = text.find(parts[0], start + 1)
    return False


def phrase_in(phrase: str, text: Text) -> bool:
    korean, parts = _phrase(phrase)
    if not parts:
        return False
    if not korean:
        return parts[0] in text.words
    return parts[0] in text.squashed if len(parts) == 1 else _in_order(parts, text.squashed)


def longest_match(phrases: list[str], text: Text) -> str:
    """The longest phrase the request contains, squashed ('' when none)."""
    best = ""
    for ph in phrases:
        if phrase_in(ph, text):
            squashed = "".join(_fold(ph).split())
            if len(squashed) > len(best):
                best = squashed
    return best


def longest_in(phrases: list[str], text: Text) -> int:
    """The length of the longest phrase the request contains (0: none)."""
    return len(longest_match(phrases, text))
