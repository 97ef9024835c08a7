"""The region a request names: 시·도, 시·군·구, 읍·면·동 and landmarks, from the official code table.

Every name comes from the registry's vocabularies — the 법정동 table with its declared changes
(registry/_vocab/regions.yaml) and the landmarks no table holds (landmarks.yaml) — so the reader
knows every 시·군·구 and 읍·면·동 of the country, not a list tuned to the fixtures. It resolves what the
names together say: a 시·군·구 that exists in only one 시·도 names that 시·도 (수영구 → 부산), a named
시·도 decides between 시·군·구 of the same name (대구 중구, not 서울 중구), a 동 or a landmark names its
시·군·구 and 시·도. A name that fits more than one place and nothing else decides between them
resolves to nothing rather than to a guess.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, NotRequired, TypedDict

from . import grammar, table, vocab


@dataclass(frozen=True)
class Region:
    sido_code: str
    sido_full: str
    sido_short: str
    sido_en: str
    sido_old: tuple[str, ...]
    centroid: tuple[float, float]
    sigungu: str | None = None  # official name within the 시·도 (사하구, 수원시 장안구)
    sigungu_code: str | None = None  # 5 digits
    dong: str | None = None
    dong_code: str | None = None  # 10 digits
    landmark: str | None = None  # the landmark the region was read from, if any
    current: bool = True  # the 시·군·구 code is current (not retired)

    @property
    def sido_legacy(self) -> str | None:
        return self.sido_old[0] if self.sido_old else None

    def names(self) -> list[str]:
        """Every spelling of the 시·도 (an enum picks the one its upstream wants)."""
        return [self.sido_full, self.sido_short, self.sido_en, *self.sido_old]

    @property
    def code(self) -> str:
        """The most precise 법정동 code known (10 digits)."""
        if self.dong_code:
            return self.dong_code
        if self.sigungu_code:
            return self.sigungu_code + "00000"
        return self.sido_code + "0" * 8

    def text(self) -> str:
        """「부산광역시 사하구」: the region as a name."""
        return self.sido_full + (f" {self.sigungu}" if self.sigungu else "")


class _Sido(TypedDict):
    """One 시·도 of registry/_vocab's regions table."""

    name: str
    short: str
    en: str
    centre: list[float]  # [lat, lon]
    old: NotRequired[list[str]]
    en_aliases: NotRequired[list[str]]


def _centre(s: _Sido) -> tuple[float, float]:
    lat, lon = s["centre"]
    return lat, lon


@dataclass
class _Index:
    sido: dict[str, str] = field(default_factory=dict)  # name (lower-case for English) -> code
    sido_en: dict[str, str] = field(default_factory=dict)  # English name, lower-case -> code
    meta: dict[str, _Sido] = field(default_factory=dict)
    sigungu: dict[str, list[str]] = field(default_factory=dict)  # name or short name -> codes
    sigungu_name: dict[str, tuple[str, bool]] = field(default_factory=dict)  # code -> (name, current)
    dong: dict[str, list[str]] = field(default_factory=dict)
    landmarks: dict[str, tuple[str | None, str | None, str]] = field(default_factory=dict)  # -> (sido, sigungu, name)
    landmarks_en: dict[str, tuple[str | None, str | None, str]] = field(default_factory=dict)
    sigungu_en: dict[str, list[str]] = field(default_factory=dict)  # Bupyeong-gu, bupyeong -> codes
    max_words_en: int = 1

    def known(self) -> frozenset[str]:
        english = {n for n in (*self.sido_en, *self.landmarks_en, *self.sigungu_en)} | {
            n.title() for n in (*self.sido_en, *self.landmarks_en, *self.sigungu_en)}
        return frozenset((*self.sido, *self.sigungu, *self.dong, *self.landmarks, *english))


@lru_cache(maxsize=4)
def _index_for(generated: Path) -> _Index:
    data = vocab.regions()
    ix = _Index()
    for code, s in data.get("sido", {}).items():
        ix.meta[code] = s
        for name in (s["name"], s["short"], *s.get("old", [])):
            ix.sido[name] = code
        for name in (s["en"], *s.get("en_aliases", [])):
            ix.sido_en[name.lower()] = code
        # 서울시, 부산시: the short name with 시 is the 시·도 too.
        ix.sido.setdefault(s["short"] + "시", code)
    for code, entry in data.get("sigungu", {}).items():
        name, current = entry[0], entry[1]
        ix.sigungu_name[code] = (name, bool(current))
        if len(entry) > 2 and entry[2]:
            en = entry[2].lower()
            for key in {en, en.split(" ")[-1], en.split(" ")[-1].rsplit("-", 1)[0]}:
                ix.sigungu_en.setdefault(key, []).append(code)
                ix.max_words_en = max(ix.max_words_en, len(key.split()))
        parts = name.split(" ")
        for key in {name, parts[-1], "".join(parts)}:
            ix.sigungu.setdefault(key, []).append(code)
        short = parts[-1][:-1]
        if len(parts) == 1 and len(short) >= 2:  # 해운대구 → 해운대, 수원시 → 수원 (a 시 with 구: its own code)
            ix.sigungu.setdefault(short, []).append(code)
    for name, codes in data.get("dong", {}).items():
        ix.dong[name] = list(codes)
    for p in vocab.places("landmarks"):
        entry = (p.get("sido"), p.get("sigungu"), p["name"])
        for name in (p["name"], *p.get("aliases", [])):
            ix.landmarks.setdefault(name, entry)
        for name in p.get("en", []):
            ix.landmarks_en[name.lower()] = entry
            ix.max_words_en = max(ix.max_words_en, len(name.split()))
    for name in (*ix.sido_en,):
        ix.max_words_en = max(ix.max_words_en, len(name.split()))
    # A sido's short name wins over a 시·군·구 short form of the same spelling (광주 = 광주광역시).
    for name in list(ix.sigungu):
        if name in ix.sido:
            ix.sigungu[name] = [c for c in ix.sigungu[name] if ix.sigungu_name[c][0] == name]
            if not ix.sigungu[name]:
                del ix.sigungu[name]
    return ix


def _index() -> _Index:
    return _index_for(table.folder())


def known_names() -> frozenset[str]:
    """Every region and landmark name the vocabularies know (the place reader's known places)."""
    return _known_for(table.folder())


@lru_cache(maxsize=4)
def _known_for(generated: Path) -> frozenset[str]:
    return _index_for(generated).known()


@dataclass
class _Mentions:
    sido: list[str] = field(default_factory=list)
    sido_or_sigungu: list[tuple[str, list[str]]] = field(default_factory=list)  # 광주시: 광주광역시 or 경기 광주시
    sigungu: list[list[str]] = field(default_factory=list)
    dong: list[list[str]] = field(default_factory=list)
    landmark: list[tuple[str | None, str | None, str]] = field(default_factory=list)


def _word_forms(word: str, known: frozenset[str]) -> list[str]:
    """The word and what it is without its particle or copula (「부산은」, 「하단동이야」)."""
    forms = [word]
    stem = grammar.strip_particle(word, known=known)
    if stem != word:
        forms.append(stem)
    noun = grammar.copula_noun(word)
    if noun and len(noun) >= 2:
        forms.append(noun)
    return list(dict.fromkeys(forms))


def _mentions(text: str) -> _Mentions:
    ix = _index()
    known = known_names()
    found = _Mentions()
    words = grammar.eojeols(text)
    low_words = [w.lower().strip(".,!?'\"") for w in text.split()]
    # English names, up to the longest entry's number of words ("South Jeolla", "Busan Station").
    i = 0
    while i < len(low_words):
        for n in range(min(ix.max_words_en, len(low_words) - i), 0, -1):
            phrase = " ".join(low_words[i:i + n]).rstrip("'s")
            if phrase in ix.landmarks_en:
                found.landmark.append(ix.landmarks_en[phrase])
                i += n
                break
            if phrase in ix.sido_en:
                found.sido.append(ix.sido_en[phrase])
                i += n
                break
            if phrase in ix.sigungu_en and phrase not in ix.landmarks_en:
                found.sigungu.append(ix.sigungu_en[phrase])
                i += n
                break
        else:
            i += 1
    skip = False
    for k, word in enumerate(words):
        if skip:
            skip = False
            continue
        pair = f"{word} {grammar.strip_particle(words[k + 1], known=known)}" if k + 1 < len(words) else None
        if pair and pair in ix.sigungu:  # 「수원시 장안구」: one 시·군·구 in two words
            found.sigungu.append(ix.sigungu[pair])
            skip = True
            continue
        for form in _word_forms(word, known):
            if form in ix.landmarks:
                found.landmark.append(ix.landmarks[form])
                break
            if form in ix.sido and form in ix.sigungu:
                found.sido_or_sigungu.append((ix.sido[form], ix.sigungu[form]))
                break
            if form in ix.sido:
                found.sido.append(ix.sido[form])
                break
            if form in ix.sigungu:
                found.sigungu.append(ix.sigungu[form])
                break
            if form in ix.dong:
                found.dong.append(ix.dong[form])
                break
        else:
            # A word that starts with a 시·도's name (부산대병원, 서울시청역): that 시·도.
            for name, code in ix.sido.items():
                if len(name) >= 2 and len(word) > len(name) and word.startswith(name):
                    found.sido.append(code)
                    break
    return found


@lru_cache(maxsize=4096)
def find_region(text: str) -> Region | None:
    """The region ``text`` names, resolved as far as its names agree, or None."""
    if not text:
        return None
    ix = _index()
    m = _mentions(text)
    sido = m.sido[0] if m.sido else None
    for own, codes in m.sido_or_sigungu:
        fitting = [c for c in codes if sido is not None and c.startswith(sido)]
        if fitting:
            m.sigungu.insert(0, fitting)  # 「경기 광주시」: the 시 of the named 도
        elif sido is None:
            sido = own  # 「광주시」 alone: the 시·도 citizens mean by it
            inside = [c for c in codes if c.startswith(own)]
            if inside:
                m.sigungu.insert(0, inside)  # 「제주시」: the 시 of 제주특별자치도, which it names too
    sigungu: str | None = None
    for codes in m.sigungu:
        fitting = [c for c in codes if sido is None or c.startswith(sido)]
        # A 시 with 구 and its own code (수원시 41110 and 장안구 41111): the most precise one named.
        if len(fitting) == 1:
            sigungu = fitting[0]
            break
        if fitting and len({c[:2] for c in fitting}) == 1 and sido is None:
            sido = fitting[0][:2]  # 중구 in 부산 and nowhere else named: at least the 시·도 is known
    dong = None
    for codes in m.dong:
        fitting = [c for c in codes if (sido is None or c.startswith(sido)) and (sigungu is None or c.startswith(sigungu))]
        if len(fitting) == 1:
            dong = fitting[0]
            break
    landmark = None
    for lm_sido, lm_sigungu, name in m.landmark:
        if sido is None or lm_sido == sido:
            landmark = (lm_sido, lm_sigungu, name)
            break
    if dong is not None:
        sido = sido or dong[:2]
        if sigungu is None:
            sigungu = _sigungu_of(dong)
    if landmark is not None:
        sido = sido or landmark[0]
        if sigungu is None and landmark[1] and landmark[0] == sido:
            sigungu = landmark[1]
    if sigungu is not None and sido is None:
        sido = sigungu[:2]
    if sido is None or sido not in ix.meta:
        return None
    if sigungu is None:
        only = [c for c in ix.sigungu_name if c.startswith(sido) and ix.sigungu_name[c][1]]
        if len(only) == 1:
            sigungu = only[0]  # 세종특별자치시 has one 시·군·구 code of its own (36110)
    s = ix.meta[sido]
    sigungu_full: str | None = None
    current = True
    if sigungu:
        sigungu_full, current = ix.sigungu_name.get(sigungu, (None, True))
    dong_name = None
    if dong is not None:
        dong_name = next((n for n, codes in ix.dong.items() if dong in codes), None)
    return Region(sido, s["name"], s["short"], s["en"], tuple(s.get("old", [])), _centre(s),
                  sigungu_full, sigungu, dong_name, dong, landmark[2] if landmark else None, current)


def sigungu_name_in(text: str) -> str | None:
    """The 시·군·구 a request names by its name even when the name alone does not say which 시·도
    (「중구 응급실」 → 중구): the name, to keep until the 시·도 is known."""
    ix = _index()
    known = known_names()
    for word in grammar.eojeols(text):
        for form in _word_forms(word, known):
            codes = ix.sigungu.get(form)
            if codes and form not in ix.sido:
                names = {ix.sigungu_name[c][0].split(" ")[-1] for c in codes}
                if len(names) == 1:
                    return names.pop()
    return None


def _sigungu_of(dong_code: str) -> str | None:
    """The most precise 시·군·구 code a 동 code belongs to (a 구 of a 시 first)."""
    ix = _index()
    code = dong_code[:5]
    if code in ix.sigungu_name:
        return code
    return None


def sido_centre(short_or_code: str) -> tuple[float, float] | None:
    ix = _index()
    code = short_or_code if short_or_code in ix.meta else ix.sido.get(short_or_code)
    return _centre(ix.meta[code]) if code is not None and code in ix.meta else None


def sidos() -> list[dict[str, Any]]:
    """Every 시·도: {code, name, short, en, old, centre}."""
    ix = _index()
    return [{**v, "code": k} for k, v in sorted(ix.meta.items())]


def is_region_name(text: str) -> bool:
    """The text is only region names (시·도, 시·군·구 — not a 동, not a landmark): 「부산 사하구」."""
    ix = _index()
    words = [grammar.strip_particle(w, known=known_names()) for w in grammar.eojeols(text)]
    return bool(words) and all(w in ix.sido or w in ix.sigungu or w.lower() in ix.sido_en for w in words)


__all__ = ["Region", "find_region", "is_region_name", "known_names", "sido_centre", "sidos"]
