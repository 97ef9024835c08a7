"""Names of schools, apartment complexes and public facilities, taken whole.

``registry/_vocab/facility_names.yaml`` says what ends such a name (초등학교, 아파트, 도서관 …),
the short forms citizens write (해운대초 → 해운대초등학교) and the apartment brands a complex's
name starts or ends with (래미안 원베일리, 반포자이). The slot type's vocabulary names the file, so a
new kind of facility is words there, never code.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

from . import grammar, table, vocab

def _alt(words: Iterable[str]) -> str:
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True)) or "(?!)"


@lru_cache(maxsize=16)
def _rx(generated: Path, vocabulary: str, kind: str) -> tuple[re.Pattern[str], dict[str, str], re.Pattern[str] | None]:
    suffixes = set(vocab.words(vocabulary, f"{kind}_suffixes"))
    short = dict(w.split("=", 1) for w in vocab.words(vocabulary, f"{kind}_short") if "=" in w)
    # A name glued to its suffix (해운대초등학교, 사하구립도서관) or a place word then the suffix (해운대 도서관).
    named = re.compile(rf"((?:[가-힣A-Za-z0-9]+\s)?[가-힣A-Za-z0-9]*?)({_alt(suffixes | set(short))})(?=$|\s|[?!.,]|{_alt(grammar.PARTICLES)})")
    brands = vocab.words(vocabulary, f"{kind}_brands")
    brand = re.compile(rf"(?:([가-힣A-Za-z0-9]+)\s?)?({_alt(brands)})(?:\s?([가-힣A-Za-z0-9]+))?") if brands else None
    return named, short, brand


def _not_name_word(word: str) -> bool:
    """A word that cannot be part of a name before or after the kind: a request, time or pointer
    word, a function word, a predicate, a bare number (a place word such as 해운대 can)."""
    from .names import classes
    from .places import is_function

    c, low = classes(), word.lower()
    if word in c.known:
        return False  # a known noun or place (해운대 is no hearsay ending)
    return (not word or low in c.request or low in c.temporal or low in c.pointers or low in c.deixis
            or is_function(word) or grammar.is_predicate(word) or bool(re.fullmatch(r"[\d.\-]+", word)))


def facility_in(text: str, kind: str, vocabulary: str = "facility_names") -> str | None:
    """The name of a ``kind`` (school, apartment, facility) the text names, whole."""
    named, short, brand = _rx(table.folder(), vocabulary, kind)
    for m in named.finditer(text):
        head, suffix = m.group(1), m.group(2)
        words = head.split()
        glued = words[-1] if words and not head.endswith(" ") else ""
        before = words[0] if len(words) == 2 or head.endswith(" ") else ""
        if suffix in short:
            if not glued or len(glued) < 2:
                continue  # a short form stands only glued to a name (해운대초); 「초」 alone is not one
            return glued + short[suffix]
        if before and _not_name_word(before):
            before = ""
        if not glued and not before:
            continue  # a bare kind (도서관) is not a name
        return (f"{before} {glued}{suffix}" if before and glued else f"{before} {suffix}" if before else glued + suffix).strip()
    if brand is not None:
        for m in brand.finditer(text):
            pre, post = m.group(1), m.group(3)
            pre_glued = pre is not None and m.end(1) == m.start(2)
            post_glued = post is not None and m.end(2) == m.start(3)
            post = grammar.strip_particle(post, min_stem=1) if post else post
            if pre_glued and not _not_name_word(pre):  # 반포자이, 대연롯데캐슬레전드
                return text[m.start(1):m.end(2)] + (post if post_glued else "")
            if post and (post_glued or not _not_name_word(post)):  # 래미안 원베일리, 래미안원베일리
                return text[m.start(2):m.start(3)] + post
            if pre and not _not_name_word(pre):  # 반포 자이
                return text[m.start(1):m.end(2)]
    return None


def kind_of(slot_name: str, vocabulary: str | None) -> str:
    """Which words of the vocabulary a slot reads: its name's first part (school_name → school)."""
    return slot_name.split("_", 1)[0]


__all__ = ["facility_in", "kind_of"]
