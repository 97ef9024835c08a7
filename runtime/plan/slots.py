"""Slot extractors: one per slot type, shared by every adapter.

An input field declares ``x-slot``; the offline planner fills it with the extractor for that slot
type, from the request text, the carried session slots, or earlier evidence. A field with ``enum``
(optionally ``x-enum-labels``: code → label) is resolved declaratively: the extractor finds the
concept (a region, a specialty), the field's own vocabulary picks the spelling the upstream wants.
A new adapter therefore needs no planner code.

No Kiwi here: cold ``ummaya ask`` must stay under 1.5 s and Kiwi takes seconds to load.
"""

from __future__ import annotations

import datetime as dt
import re
from functools import lru_cache
from dataclasses import dataclass
from typing import Any

from . import lexicon as lx

_COORD = re.compile(r"(?<![\d.])(3[3-9]\.\d{2,})\s*[,/ ]\s*(12[4-9]\.\d{2,}|13[0-2]\.\d{2,})(?![\d.])")
_WORD = re.compile(r"[\w\-·.]+", re.U)


@dataclass(frozen=True)
class Region:
    sido_full: str
    sido_short: str
    sido_legacy: str | None
    sido_en: str
    sigungu: str | None
    centroid: tuple[float, float]

    def names(self) -> list[str]:
        out = [self.sido_full, self.sido_short, self.sido_en]
        if self.sido_legacy:
            out.append(self.sido_legacy)
        return out


def _strip_particle(word: str) -> str:
    if len(word) >= 3:
        for p in lx.PARTICLES:
            if word.endswith(p) and len(word) - len(p) >= 2:
                return word[: -len(p)]
    return word


def words(text: str) -> list[str]:
    return [_strip_particle(w) for w in _WORD.findall(text)]


@lru_cache(maxsize=4096)
def find_region(text: str) -> Region | None:
    low = text.lower()
    for full, short, legacy, en, centre in lx.SIDO:
        for name in (full, legacy, en.lower()):
            if name and name in (text if name != en.lower() else low):
                return Region(full, short, legacy, en, _find_sigungu(text), centre)
    # Short names are two syllables: require them as a word start to avoid 「부산역」-style
    # false hits being read as anything but Busan (they are Busan anyway) or 「대구」 inside words.
    for full, short, legacy, en, centre in lx.SIDO:
        if re.search(rf"(?:^|\s){short}", text):
            return Region(full, short, legacy, en, _find_sigungu(text), centre)
    for word in words(text):
        for key, (sido_short, sigungu) in lx.DISTRICTS.items():
            if word == key or word.startswith(key):
                row = next(r for r in lx.SIDO if r[1] == sido_short)
                return Region(row[0], row[1], row[2], row[3], sigungu, row[4])
    return None


def _find_sigungu(text: str) -> str | None:
    m = re.search(r"([가-힣]{1,5}(?:구|군|시))(?=\s|$|에|의|에서)", text)
    if m and not any(m.group(1) == r[0] for r in lx.SIDO):
        return m.group(1)
    return None


def find_coordinates(text: str) -> tuple[float, float] | None:
    m = _COORD.search(text)
    return (float(m.group(1)), float(m.group(2))) if m else None


def find_place(text: str, language: str, exclude: frozenset[str] = frozenset()) -> str | None:
    """The place phrase a citizen anchors a request on: 「동아대 승학캠퍼스 근처 …」 → 동아대 승학캠퍼스.

    Only the place span (runtime/plan/place.py): degree, time and request words and personal
    data are never part of it (「하단동인데 제일 가까운 …」 → 하단동)."""
    from .place import place_span

    return place_span(_without_personal(text), language, exclude)


def _without_personal(text: str) -> str:
    """``text`` with personal data replaced by a mark no place can span across."""
    if not text or ("@" not in text and not any(ch.isdigit() for ch in text)):
        return text
    from ..guard.personal import find_personal

    for f in sorted(find_personal(text), key=lambda f: f.start, reverse=True):
        # Glued to what follows (「⟦⟧이고」, 「⟦⟧로」): the particle goes with the value, not the place.
        text = text[: f.start] + "⟦⟧" + text[f.end:]
    return text


def _points_or_labels(word: str) -> bool:
    from .place import DEIXIS, PERSONAL_LABELS, PRONOUNS, _strip_particle

    stem = _strip_particle(word)
    return any(w in DEIXIS or w in PRONOUNS or w in PERSONAL_LABELS or w in _POINTERS for w in (word, stem))


# Words that point back at a thing already talked about (「그거」, 「그 약」's 그): never its name.
_POINTERS = frozenset("그거 그것 이거 이것 저거 저것 그게 이게 저게 걔 it that this".split())


def content_words(text: str, vocabulary: set[str]) -> list[str]:
    """Words left once function words, time words and the adapter's own vocabulary are removed.

    The adapter's hints say what the request is *about* (응급실, 약, 버스); what remains is what it
    is about *specifically* (타이레놀, 부산역) — the argument.
    """
    out = []
    for w in words(_without_personal(text)):
        if "⟦⟧" in w:
            continue
        lw = w.lower()
        if lw in lx.STOPWORDS or w in lx.TEMPORAL_WORDS or lw in lx.TEMPORAL_WORDS:
            continue
        if _points_or_labels(lw):
            continue  # 「거기」, 「그거」, 「제」, 「전화」: they point at or label a value, they are none
        if lw in vocabulary or any(lw.startswith(v) for v in vocabulary if len(v) >= 2):
            continue
        if re.fullmatch(r"[\d.]+", w):
            continue
        out.append(w)
    return out


_WEEKDAYS_KO = {"월요일": 0, "화요일": 1, "수요일": 2, "목요일": 3, "금요일": 4, "토요일": 5, "일요일": 6}
_WEEKDAYS_EN = {d: i for i, d in enumerate(("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"))}


def find_date(text: str, now: dt.datetime) -> dt.date | None:
    low = text.lower()
    today = now.date()
    table = (
        (("글피",), 3), (("모레", "day after tomorrow"), 2), (("내일", "tomorrow"), 1),
        (("오늘", "today", "tonight", "지금", "now"), 0),
    )
    for keys, offset in table:
        if any(k in low for k in keys):
            return today + dt.timedelta(days=offset)
    if "주말" in text or "weekend" in low:
        days = (5 - today.weekday()) % 7
        return today + dt.timedelta(days=days)
    for names in (_WEEKDAYS_KO, _WEEKDAYS_EN):
        for name, wd in names.items():
            if name in low:
                return today + dt.timedelta(days=(wd - today.weekday()) % 7)
    m = re.search(r"(\d{1,2})월\s*(\d{1,2})일", text)
    if m:
        try:
            d = dt.date(today.year, int(m.group(1)), int(m.group(2)))
        except ValueError:
            return None
        return d if d >= today else d.replace(year=today.year + 1)
    return None


def find_time(text: str, now: dt.datetime) -> dt.time | None:
    low = text.lower()
    m = re.search(r"(오전|오후|아침|저녁|밤)?\s*(\d{1,2})\s*시(?:\s*(\d{1,2})\s*분)?", text)
    if m:
        hour = int(m.group(2)) % 24
        if m.group(1) in ("오후", "저녁", "밤") and hour < 12:
            hour += 12
        return dt.time(hour, int(m.group(3) or 0))
    m = re.search(r"\b(\d{1,2})(?::(\d{2}))?\s*(am|pm)\b", low)
    if m:
        hour = int(m.group(1)) % 12 + (12 if m.group(3) == "pm" else 0)
        return dt.time(hour, int(m.group(2) or 0))
    for keys, hour in ((("새벽",), 5), (("아침", "morning"), 9), (("점심", "noon"), 12),
                       (("오후", "afternoon"), 15), (("저녁", "evening"), 18), (("밤", "tonight", "night"), 21)):
        if any(k in low for k in keys):
            return dt.time(hour, 0)
    if any(k in low for k in ("지금", "현재", "now", "right now", "currently")):
        return now.time().replace(second=0, microsecond=0)
    return None


def match_labels(text: str, labels: dict[str, str], synonyms: dict[str, tuple[str, ...]]) -> str | None:
    """Pick the code whose label (or a citizen's synonym for that label) the text mentions."""
    low = text.lower()
    best: tuple[int, str] | None = None
    for code, label in labels.items():
        terms = {label.lower(), *(s.lower() for s in synonyms.get(label, ()))}
        for syn_label, syns in synonyms.items():
            if syn_label in label or label in syn_label:
                terms |= {s.lower() for s in syns}
        for term in terms:
            if term and term in low and (best is None or len(term) > best[0]):
                best = (len(term), code)
    return best[1] if best else None


def resolve_enum(prop: dict[str, Any], candidates: list[str]) -> Any | None:
    """Choose the field's own spelling for a concept found under several names."""
    enum = prop.get("enum")
    labels = prop.get("x-enum-labels") or {}
    if not enum:
        return candidates[0] if candidates else None
    for name in candidates:
        if name in enum:
            return name
        for code, label in labels.items():
            if label == name or (len(name) >= 2 and label.startswith(name)):
                return _typed(code, enum)
    return None


def _typed(code: str, enum: list[Any]) -> Any:
    for value in enum:
        if str(value) == str(code):
            return value
    return code
