"""Numbers a request states: result counts, coordinates, amounts of money.

The counter words (곳, 군데, 개 …) and coordinate labels (위도, 경도, lat, lon) are vocabulary
(registry/_vocab/counters.yaml, place_words.yaml); the numerals (한, 두, 세, 다섯 …) are grammar.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from . import grammar, table, vocab

# A bare WGS84 pair inside Korea (35.17, 129.07), or longitude first (129.07, 35.17); hemisphere
# letters (N35.17 E129.07) are notation, read the same way.
_PAIR = re.compile(r"(?<![\d.])(3[3-9]\.\d{2,})\s*[,/ ]\s*(12[4-9]\.\d{2,}|13[0-2]\.\d{2,})(?![\d.])")
_PAIR_LON_FIRST = re.compile(r"(?<![\d.])(12[4-9]\.\d{2,}|13[0-2]\.\d{2,})\s*[,/ ]\s*(3[3-9]\.\d{2,})(?![\d.])")
_HEMISPHERES = re.compile(r"(?<![A-Za-z])N\s*(\d{2}(?:\.\d+)?)\s*°?\s*,?\s*E\s*(\d{3}(?:\.\d+)?)|(\d{2}(?:\.\d+)?)\s*°?\s*N\s*,?\s*(\d{3}(?:\.\d+)?)\s*°?\s*E(?![A-Za-z])")
_NUMBER = r"(-?\d{1,3}(?:\.\d+)?)"


@lru_cache(maxsize=4)
def _labels(generated: Path) -> tuple[re.Pattern[str], re.Pattern[str]]:
    def rx(cls: str) -> re.Pattern[str]:
        words = sorted(vocab.words("place_words", cls), key=len, reverse=True)
        alt = "|".join(re.escape(w) for w in words) or "(?!)"
        particles = "|".join(map(re.escape, grammar.TOPIC_PARTICLES))
        return re.compile(rf"(?<![A-Za-z가-힣])(?:{alt})(?![A-Za-z])\s*(?:[:=]|{particles})?\s*{_NUMBER}", re.I)
    return rx("latitude_labels"), rx("longitude_labels")


def coordinates_in(text: str) -> tuple[float, float] | None:
    """(latitude, longitude) the citizen typed: labelled in either order (위도 35.17 경도 129.07,
    lat 35.17 lon 129.07) or a bare pair inside Korea (35.17, 129.07)."""
    lat_rx, lon_rx = _labels(table.folder())
    lat, lon = lat_rx.search(text), lon_rx.search(text)
    if lat and lon:
        la, lo = float(lat.group(1)), float(lon.group(1))
        if -90 <= la <= 90 and -180 <= lo <= 180:
            return la, lo
    m = _HEMISPHERES.search(text)
    if m:
        # either 35.17N 129.07E (groups 1, 2) or N35.17 E129.07 (groups 3, 4)
        first = 1 if m.group(1) else 3
        return float(m.group(first)), float(m.group(first + 1))
    m = _PAIR.search(text)
    if m:
        return float(m.group(1)), float(m.group(2))
    m = _PAIR_LON_FIRST.search(text)
    return (float(m.group(2)), float(m.group(1))) if m else None


def without_coordinates(text: str) -> str:
    """``text`` without the coordinates it types (labels included: 「위도 35.17 경도 129.07」)."""
    lat_rx, lon_rx = _labels(table.folder())
    for rx in (lat_rx, lon_rx, _HEMISPHERES, _PAIR, _PAIR_LON_FIRST):
        text = rx.sub(" ", text)
    return text


@lru_cache(maxsize=4)
def _count_rx(generated: Path) -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    counters = sorted(vocab.words("counters", "counters"), key=len, reverse=True)
    alt = "|".join(re.escape(c) for c in counters) or "(?!)"
    native = "|".join(sorted(grammar.NATIVE_NUMBERS, key=len, reverse=True))
    digits = re.compile(rf"(?<![\d.:-])(\d{{1,2}})\s*(?:{alt})(?![가-힣]*{grammar.TIME_UNITS})")
    spelled = re.compile(rf"(?:^|(?<=\s))({native})\s*(?:{alt})(?=$|\s|{grammar.ONE_SYLLABLE_PARTICLE}|[?!.,])")
    english = sorted(vocab.words("counters", "english"), key=len, reverse=True)
    en_alt = "|".join(re.escape(w) for w in english) or "(?!)"
    en_num = "|".join(sorted(grammar.EN_NUMBERS, key=len, reverse=True))
    en = re.compile(rf"\b(?:top|first|nearest|closest|just|only|show me|give me)\s+(\d{{1,2}}|{en_num})\b"
                    rf"|\b(\d{{1,2}}|{en_num})\s+(?:of them|nearest\s+|closest\s+)?(?:{en_alt}|of them)\b", re.I)
    return digits, spelled, en


def count_in(text: str) -> int | None:
    """How many results the citizen asks for: 「3곳만」, 「가까운 5개」, 「세 군데」, "top 3"."""
    digits, spelled, en = _count_rx(table.folder())
    m = digits.search(text)
    if m:
        n = int(m.group(1))
        return n if n > 0 else None
    m = spelled.search(text)
    if m:
        return grammar.NATIVE_NUMBERS[m.group(1)]
    m = en.search(text)
    if m:
        word = (m.group(1) or m.group(2)).lower()
        n = int(word) if word.isdigit() else grammar.EN_NUMBERS.get(word, 0)
        return n if n > 0 else None
    return None


_AMOUNT = re.compile(r"(?<![\d.])(\d[\d,]*(?:\.\d+)?)\s*(" + "|".join(grammar.NUMBER_SCALES) + r")?\s*원")


def amount_in(text: str) -> int | None:
    """An amount in won: 「40,000원」, 「3만 원」, 「1억원」."""
    m = _AMOUNT.search(text)
    if not m:
        return None
    value = float(m.group(1).replace(",", ""))
    scale = grammar.NUMBER_SCALES.get(m.group(2) or "", 1)
    return int(value * scale)


@lru_cache(maxsize=4)
def _quantity_rx(generated: Path) -> re.Pattern[str]:
    """A number and a counter of the counters vocabulary's ``quantity`` class (people, days …)."""
    counters = sorted(vocab.words("counters", "quantity"), key=len, reverse=True)
    scales = "|".join(grammar.NUMBER_SCALES)
    alt = "|".join(re.escape(c) for c in counters) or "(?!)"
    return re.compile(rf"(?<![\d.,:/-])(\d[\d,]*)\s*({scales})?\s*({alt})")


def quantity_in(text: str, unit: str | None = None) -> int | None:
    """A quantity the request is about: 「조문객 200명」 → 200, 「3일장」 → 3, 「2천 명」 → 2000;
    with ``unit`` (the field's x-unit), only a number counted in it."""
    for m in _quantity_rx(table.folder()).finditer(text):
        counter = m.group(3)
        if unit is not None and not (counter == unit or counter.startswith(unit)):
            continue
        if unit is None and grammar.DATE_MD.search(text[max(0, m.start() - 6):m.end()]):
            continue  # 「5월 3일」 is a date, not three days
        value = int(m.group(1).replace(",", "")) * grammar.NUMBER_SCALES.get(m.group(2) or "", 1)
        if value > 0:
            return value
    if unit is None:
        return None
    spelled = "|".join(sorted(grammar.NATIVE_NUMBERS, key=len, reverse=True))
    native = re.search(rf"(?:^|(?<=\s))({spelled})\s*{re.escape(unit)}", text)
    return grammar.NATIVE_NUMBERS[native.group(1)] if native else None


__all__ = ["amount_in", "coordinates_in", "count_in", "quantity_in"]
