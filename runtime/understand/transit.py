"""Trips and transport identifiers: an origin with its destination, a bus route number, a flight.

The words come from ``registry/_vocab/transit.yaml`` (what marks a destination, a mode of travel,
what a number after 번 is when it is not a route) and ``airlines.yaml`` (IATA designators); the
readers in ``readers.py`` shape the value for the field (its enum and x-enum-labels).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from . import grammar, table, vocab


def _alt(words: Iterable[str]) -> str:
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True)) or "(?!)"


# -- route numbers -------------------------------------------------------------------------------


@dataclass(frozen=True)
class _RouteRx:
    token: re.Pattern[str]
    english: re.Pattern[str]
    not_prefix: frozenset[str]
    route_words: frozenset[str]
    not_after: re.Pattern[str]
    unit_after: re.Pattern[str]


@lru_cache(maxsize=4)
def _route_rx(generated: Path) -> _RouteRx:
    units = vocab.words("transit", "units")
    not_after = vocab.words("transit", "not_route_after")
    # A route token: an optional prefix glued to the number (첨단09, 급행1, N26), the number with an
    # optional branch (5-1), then whatever follows (번, 버스, a unit, a particle …) checked below.
    token = re.compile(r"(?<![\d.:/\-A-Za-z])(?P<pre>[가-힣]{1,6}|[A-Za-z]{1,2})?-?(?P<num>\d{1,4}(?:-\d{1,2})?)(?![\d.:])")
    english = re.compile(r"\b(?:bus|route)\s*(?:no\.?|number|#)?\s*([A-Za-z]{0,2}\d{1,4}(?:-\d{1,2})?)\b"
                         r"|\b([A-Za-z]{0,2}\d{1,4}(?:-\d{1,2})?)\s+bus\b", re.I)
    return _RouteRx(
        token=token,
        english=english,
        not_prefix=vocab.words("transit", "not_route_prefix") | vocab.words("transit", "route_words"),
        route_words=vocab.words("transit", "route_words"),
        not_after=re.compile(rf"\s*번\s*(?:{_alt(not_after)})"),
        unit_after=re.compile(rf"(?:{_alt(units)})"),
    )


def _route_prefix(pre: str) -> str:
    """The route's own prefix (첨단, 급행), without a region word or particle glued before it."""
    from .regions import is_region_name

    if not pre or pre.isascii():
        return pre
    # 「대전급행」 → 급행: a region word glued before the route's own prefix is the city's
    rest = next((pre[cut:] for cut in range(len(pre) - 1, 0, -1) if is_region_name(pre[:cut])), pre)
    if rest in _route_rx(table.folder()).not_prefix or is_region_name(rest):
        return ""  # 버스1003, 부산1003: the number alone is the route
    _stem, particle = grammar.split_particle(rest, min_stem=1)
    if particle and len(rest) > 1:
        return ""  # 「버스는5번」: the word before is a sentence's, not the route's
    return rest


def route_number_in(text: str, *, bare: bool = False) -> str | None:
    """A bus route number: 「1003번」, 「5번 버스」, 「첨단09」, 「급행1」, "bus 1003"; ``bare``
    (the field is required) also takes a lone number that nothing else claims (「1003 언제 와」)."""
    rx = _route_rx(table.folder())
    m = rx.english.search(text)
    if m:
        return (m.group(1) or m.group(2)).upper()
    bare_found: list[str] = []
    for m in rx.token.finditer(text):
        rest = text[m.end():]
        num = m.group("num")
        pre = _route_prefix(m.group("pre") or "")
        if re.match(r"\s*번", rest):
            if rx.not_after.match(rest):
                continue
            return pre + num
        if re.match(r"\s*(?:버스|bus)", rest, re.I):
            return pre + num
        if rx.unit_after.match(rest):
            continue  # 3시, 200명, 2호선, 5개: a number of something else
        if pre or any((m.group("pre") or "").endswith(w) for w in rx.route_words):
            return pre + num  # 첨단09, 급행1; 버스1003
        if bare and len(num) >= 1:
            bare_found.append(num)
    return bare_found[0] if len(bare_found) == 1 else None


# -- flights -------------------------------------------------------------------------------------


@lru_cache(maxsize=4)
def _flight_rx(generated: Path) -> tuple[re.Pattern[str], re.Pattern[str], dict[str, str]]:
    airlines = vocab.terms("airlines")
    codes = [t["code"] for t in airlines if t.get("code")]
    by_name: dict[str, str] = {}
    for t in airlines:
        if t.get("code"):
            for n in (t["label"], *t.get("ko", []), *t.get("en", [])):
                by_name[n.lower()] = t["code"]
    coded = re.compile(rf"(?<![A-Za-z0-9])({_alt(codes)})\s?-?(\d{{1,4}})(?![\d])", re.I)
    named = re.compile(rf"({_alt(by_name)})\s*(\d{{1,4}})\s*(?:편|flight|\b)", re.I)
    return coded, named, by_name


def flight_number_in(text: str) -> str | None:
    """KE082, 「OZ 8915」 → OZ8915, 7C1101, 「대한항공 082편」 → KE082."""
    coded, named, by_name = _flight_rx(table.folder())
    m = coded.search(text)
    if m and (m.group(1).isupper() or m.group(1)[0].isdigit() or m.group(1)[1].isdigit() or re.search(r"(?i)flight|편|항공", text)):
        return m.group(1).upper() + m.group(2)
    m = named.search(text)
    if m:
        return by_name[m.group(1).lower()] + m.group(2)
    return None


# -- an origin and its destination ---------------------------------------------------------------


@lru_cache(maxsize=4)
def _pair_rx(generated: Path) -> tuple[re.Pattern[str], ...]:
    motion = _alt(vocab.words("transit", "motion"))
    modes = _alt(vocab.words("transit", "modes"))
    ends = _alt(vocab.words("transit", "destination_ends"))
    word = r"[^\s,.!?~→\->]+"
    return (
        # 서울→광주, 서울 -> 광주, 서울~부산
        re.compile(rf"({word})\s*(?:→|->|➡|⇒|~)\s*({word})"),
        # 대전에서 부산 가는 KTX, 김포에서 제주 비행기, 서울에서 부산까지
        re.compile(rf"({word}?)에서\s*({word}?)(?:(?:{ends})(?=\s|$|[?!.,])|\s*(?:{motion})(?=\s|$|[?!.,])|\s+(?:{modes}))", re.I),
        # 대전 출발 부산 도착, 대전발 부산행
        re.compile(rf"({word}?)\s*(?:출발|발)\s+({word}?)\s*(?:도착|행)"),
    )


_EN_PAIR = re.compile(r"\bfrom\s+([A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*)\s+to\s+([A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*)"
                      r"|\b([A-Z][\w'-]*(?:\s+(?:Station|Airport|Terminal))?)\s+to\s+([A-Z][\w'-]*(?:\s+(?:Station|Airport|Terminal))?)")


def _place_word(word: str) -> str:
    w = word.strip(".,!?~…\"'()[]「」『』")
    for end in sorted(vocab.words("transit", "destination_ends"), key=len, reverse=True):
        if not w.endswith(end) or len(w) <= len(end):
            continue
        stem = w[: -len(end)]
        if end in grammar.AFTER_CONSONANT | grammar.AFTER_VOWEL and not grammar.particle_fits(stem, end):
            continue  # 효원로: 로 after 원 is the road's own ending
        w = stem
        break
    return grammar.strip_particle(w, min_stem=1)


def pair_in(text: str) -> tuple[str, str] | None:
    """(origin, destination) a trip names, as said (particles off), or None."""
    m = _EN_PAIR.search(text)
    if m:
        a, b = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
        return a.strip(), b.strip()
    for rx in _pair_rx(table.folder()):
        m = rx.search(text)
        if m and m.group(1) and m.group(2):
            a, b = _place_word(m.group(1)), _place_word(m.group(2))
            verbs = set(vocab.words("transit", "not_places"))
            if {a, b, m.group(1), m.group(2)} & verbs:
                continue  # 「서울에서 출발하는 고속버스」: 출발하는 is the trip's verb, not its destination
            if a and b and a != b:
                return a, b
    return None


__all__ = ["flight_number_in", "pair_in", "route_number_in"]
