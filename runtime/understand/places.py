"""The words of a request that name a place, and nothing else.

「하단동인데 제일 가까운 응급실 어디야?」 → 하단동; 「효원로 25로 전입신고」 → 효원로 25; 「자갈치시장 계신데요」
→ 자갈치시장. What goes to a locate upstream is this span only: degree, time and request words,
pronouns and deixis, politeness, personal data and portal names are never part of it.

Korean is read word by word (어절). Going back from the anchor (근처, 주변, 가까운 …), words are
collected while they can be part of a place name; a word that ends a clause (「…인데」, 「…아파서」)
ends the span — a copula clause (「하단동인데」, 「부산역이고」) still contributes its noun; a building
number joins the road or 동 before it (효원로 25, 중앙동 123-4). Without an anchor, a short message that
is only a place (an answer to 「어디 기준으로 찾을까요?」, or 「광주는?」) is read the same way.

Every word class is registry data (function_words, place_words, portals, landmarks, regions);
particles come off only where the grammar allows (runtime/understand/grammar.py). No Kiwi: the
build compiled what it knows into the vocabularies and the known nouns.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from . import grammar, regions, table, vocab

MARK = "⟦⟧"  # where a removed value (personal data, a date) was: no span crosses it
_WORD_CHARS = re.compile(r"[^\w\-·.⟦⟧]+", re.U)
_NUMBER = r"\d{1,5}(?:-\d{1,5})?"
_DONG_GA = re.compile(r"\d가$")


class _Words:
    """The word classes the place reader uses, compiled once per generated folder."""

    def __init__(self) -> None:
        fw = vocab.fw
        self.anchors = fw("anchors")
        self.function = (fw("request") | fw("degree") | fw("pronouns") | fw("deixis") | fw("temporal") | fw("copula")
                         | fw("personal_labels") | fw("people") | fw("existence") | fw("adverbs") | self.anchors)
        self.existence = fw("existence")
        cal = vocab.calendar()
        calendar_words = {w for key in ("days", "weekdays", "months", "relative_months", "relative_years", "times_of_day",
                                        "weeks") for w in cal.get(key, {}) if len(w) >= 2}
        calendar_words |= {w for key in ("weekend", "now") for w in cal.get(key, [])}
        for h in (*cal.get("fixed_holidays", []), *cal.get("lunar_holidays", [])):
            calendar_words |= {n for n in (h["name"], *h.get("aliases", [])) if len(n) >= 2}
        self.function |= frozenset(calendar_words)  # 「화요일에」, 「오월」: when, never where
        self.counters = vocab.words("counters", "counters")
        self.labels = fw("personal_labels")
        self.value_labels = fw("value_labels")
        self.english = fw("english") | {w for w in fw("personal_labels") if w.isascii()}
        self.deixis = fw("deixis")
        self.deixis_en = tuple(sorted(fw("deixis_en"), key=len, reverse=True))
        self.deixis_en_rx = re.compile(r"\b(?:" + ("|".join(map(re.escape, self.deixis_en)) or "(?!)") + r")\b")
        anchors = sorted(fw("anchors"), key=len, reverse=True)
        self.anchor_rx = re.compile(r"(" + ("|".join(map(re.escape, anchors)) or "(?!)") + r")(?=\s|$|"
                                    + "|".join(map(re.escape, grammar.PARTICLES)) + r"|[?.!,])")
        suffixes = "|".join(map(re.escape, sorted(vocab.words("place_words", "number_suffixes"), key=len, reverse=True))) or "(?!)"
        self.building_number = re.compile(rf"^{_NUMBER}(?:{suffixes})?$")
        self.number_with_particle = re.compile(rf"^({_NUMBER}(?:{suffixes})?)(\S{{1,3}})$")
        self.deixis_nouns = fw("deixis_nouns")
        pw = "place_words"
        self.place_suffixes = tuple(sorted(vocab.words(pw, "place_suffixes") | vocab.words(pw, "admin_suffixes")
                                           | vocab.words(pw, "road_endings"), key=len, reverse=True))
        self.road_endings = tuple(sorted(vocab.words(pw, "road_endings"), key=len, reverse=True))
        self.coordinate_labels = vocab.words(pw, "latitude_labels") | vocab.words(pw, "longitude_labels")
        self.english_place_nouns = frozenset(w.lower() for w in vocab.words(pw, "english_place_nouns"))
        self.romanized_endings = tuple(sorted(vocab.words(pw, "romanized_endings"), key=len, reverse=True))
        self.portals: set[str] = set()
        for t in vocab.terms("portals"):
            self.portals |= {t["label"].lower(), *(w.lower() for w in t.get("ko", [])), *(w.lower() for w in t.get("en", []))}
        self.places = regions.known_names()
        self.nouns = vocab.nouns()
        self.place_nouns = vocab.words(pw, "place_nouns")
        self.asked_about = vocab.words(pw, "asked_about")
        self.known = self.places | self.nouns | frozenset(self.portals) | self.place_nouns
        self.landmarks_en: dict[str, str] = {}
        for p in vocab.places("landmarks"):
            for en in p.get("en", []):
                self.landmarks_en[en.lower()] = p["name"]
        for s in regions.sidos():
            for en in (s["en"], *s.get("en_aliases", [])):
                self.landmarks_en.setdefault(en.lower(), s["name"])


@lru_cache(maxsize=4)
def _words_for(generated: Path) -> _Words:
    return _Words()


def words() -> _Words:
    return _words_for(table.folder())


def known_places() -> frozenset[str]:
    return words().places


def has_place_suffix(word: str) -> bool:
    """The word ends in a place suffix after a name of its own: two syllables before a one-syllable
    suffix (첨성대, 금남로 — not 우산, 열이), one before a longer one (S공원)."""
    return any(word.endswith(s) and len(word) - len(s) >= (2 if len(s) == 1 else 1) for s in words().place_suffixes)


def looks_like_place(text: str) -> bool:
    """Some word of ``text`` is a known place or has a place's shape (a suffix, a building number)."""
    kw = words()
    for w in text.split():
        if w in kw.places or w in kw.place_nouns or has_place_suffix(w) or kw.building_number.match(w) or _DONG_GA.search(w):
            return True
    return False


def is_function(word: str) -> bool:
    w = words()
    low = word.lower()
    if low in w.function or low in w.english and word.isascii() or low in w.coordinate_labels:
        return True
    if low.endswith("요") and len(low) > 2 and low[:-1] in w.function:
        return True
    return False


def is_portal(word: str) -> bool:
    w = words()
    low = word.lower()
    return low in w.portals or grammar.strip_particle(low, known=w.known) in w.portals


def _stem(word: str) -> str:
    w = words()
    return grammar.strip_particle(word, known=w.known, roads=True)


def classify(word: str, *, before_number_or_anchor: bool = False) -> tuple[str, str]:
    """(kind, text) for one 어절: ``place`` (part of a name), ``place_end`` (a noun that ends its
    clause: 「하단동인데」), ``number`` (a building or lot number), ``skip`` (a function word) or
    ``stop`` (ends the span). ``before_number_or_anchor``: the next word is a building number or a
    place anchor, where the directional particle (으)로 never stands — a road ending there is the
    road's (해운대로 25, 해운대로 근처), even when the word before it is a known place."""
    w = word.strip(".,!?~…\"'()[]「」『』")
    if not w or MARK in w or "[" in word:
        return "stop", ""
    kw = words()
    if before_number_or_anchor and _road_name(w, kw):
        return "place", w
    if kw.building_number.match(w):
        return "number", w
    numeric = kw.number_with_particle.match(w)
    if numeric and numeric.group(2) in grammar.PARTICLES:  # 「2130의」, 「1411-5로」: the number, its particle off
        return "number", numeric.group(1)
    if re.fullmatch(r"[\d\-]+|\d+\.\d+", w) or grammar.DATE_AMOUNT.match(w):
        return "stop", ""  # a long number that is no building number, a coordinate, 「3일」
    if is_portal(w):
        return "stop", ""
    if w in kw.asked_about and w not in kw.places:
        return "stop", ""  # 「불국사 날씨」: what is asked about the place ends it
    if w in kw.places or w in kw.place_nouns or _DONG_GA.search(w):
        return "place", w
    if is_function(w) or is_function(grammar.strip_particle(w, known=kw.known)):
        return "skip", ""
    one = grammar.strip_particle(w, min_stem=1)
    if len(one) == 1 and grammar.is_hangul(one) or one in kw.counters or w in grammar.NATIVE_NUMBERS:
        return "skip", ""  # 「곳만」, 「두」, 「약은」: a counter, a numeral, one syllable with its particle
    noun = grammar.copula_noun(w)
    if noun and is_function(noun):
        return "skip", ""
    if noun and len(noun) >= 2 and not is_function(noun) and not w.endswith(("으로", "로")):
        if noun in kw.places or has_place_suffix(noun) or not (grammar.is_predicate(noun) or grammar.POLITE_END.search(w)):
            return "place_end", noun
    stem = _stem(w)
    if stem in kw.places or stem in kw.place_nouns:
        return "place", stem
    if stem == w and grammar.hearsay(w):
        return "stop", ""  # 「온대」: a verb, though it ends like a campus (…대)
    if has_place_suffix(stem):
        return "place", stem
    if grammar.is_predicate(w):
        return "stop", ""
    if len(stem) < 2 and grammar.is_hangul(stem[:1]):
        return "skip", ""  # a lone syllable (「로」 left by a removed value) names nothing
    if _adverb(stem, kw):
        return "stop", ""
    return "place", stem


def _road_name(word: str, kw: _Words) -> bool:
    """A word shaped like a road name: a road ending (로, 대로, 길 …) after a name of its own, where
    that ending could also be read as the directional particle (해운대로, 대학로)."""
    return (grammar.ends_like_directional(word) and any(word.endswith(e) for e in kw.road_endings)
            and not is_function(word) and not grammar.is_predicate(word))


def _adverb(word: str, kw: _Words) -> bool:
    """An adverbial form (빨갛게, 천천히) of three syllables or more that no vocabulary knows."""
    return len(word) >= 3 and word not in kw.known and word.endswith(("게", "히")) and grammar.is_hangul(word[-1])


def _carries_particle(word: str) -> bool:
    """The word ends in a case particle (「아버지가」, 「역에서」): inside a multi-word name no word does."""
    w = word.strip(".,!?~…\"'()[]「」『』")
    return bool(grammar.split_particle(w, known=words().known, roads=True)[1])


def _span_backwards(ws: list[str], max_words: int = 4, exclude: frozenset[str] = frozenset()) -> str | None:
    picked: list[str] = []
    pending_number: str | None = None
    kw = words()
    for index, word in enumerate(reversed(ws)):
        if not picked and pending_number is None and index == 0 and word.strip(".,!?~") in kw.existence:
            continue  # 「광장시장에 계신데요 근처」: being somewhere — the place is the word before
        kind, text = classify(word, before_number_or_anchor=(not picked and (index == 0 or pending_number is not None)))
        if picked and kind in ("place", "place_end") and _carries_particle(word):
            break  # 「아버지가 대전역에」: a word with its own particle is another phrase
        if kind in ("place", "place_end") and _is_service_word(text, exclude):
            # 「응급실 가야 돼 근처에」: the service asked for is not where it is asked for.
            kind = "stop" if picked else "skip"
        if kind == "number":
            if picked or pending_number:
                break
            pending_number = text  # joins the road or 동 before it, else it is no place
            continue
        if pending_number is not None:
            if kind not in ("place", "place_end") or not (has_place_suffix(text) or text in known_places()):
                pending_number = None
                if kind == "skip":
                    break
            else:
                picked.append(pending_number)
                pending_number = None
        if kind == "skip":
            if picked:
                break
            continue
        if kind == "stop":
            break
        if kind == "place_end":
            if picked:
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


def split_words(text: str) -> list[str]:
    return _mask_labelled([w for w in _WORD_CHARS.sub(" ", text).split() if w])


def _mask_labelled(ws: list[str]) -> list[str]:
    """The value after a word-valued label (「이름은 홍길동이고」 → the name) is personal data."""
    labels = words().value_labels
    out = list(ws)
    for i, w in enumerate(ws[:-1]):
        stem = grammar.strip_particle(w.strip(".,!?~").lower())
        if stem in labels or w.lower() in labels:
            out[i + 1] = MARK
    return out


def _anchor_split(text: str) -> tuple[str, str] | None:
    """(before, after) the first place anchor, or None."""
    for m in words().anchor_rx.finditer(text):
        before = text[: m.start()]
        # 「앞」「옆」「쪽」 only after a word (「역 앞」), never inside one (「앞으로」 is time).
        if len(m.group(1)) == 1 and (not before or not before[-1].isspace()):
            if not before or not re.search(r"[가-힣A-Za-z0-9]$", before):
                continue
        return before, text[m.end():]
    return None


_EN_ANCHOR = re.compile(
    r"\b(?:near|around|close to|nearby|by|at|in|for|(?:nearest|closest)\s+\w+\s+to)\s+(?P<place>[A-Za-z0-9 .'\-가-힣]+?)(?=\s*(?:[,?!.]|$|\b(?:today|tomorrow|tonight|now|right now|this|please|open|that|which|with|and|then)\b))",
    re.I,
)
_EN_NAME_VALUE = re.compile(r"\b(?:name|called)\s*(?:is|'s|:)?\s+[^,.;!?]+", re.I)


def english_place_shaped(place: str) -> bool:
    """An English phrase has a place's shape: a capitalised word (a proper name: Seomyeon, Busan
    Station), a romanized administrative or road ending (haeundae-gu, hyowon-ro 25), or a last word
    that names a kind of place (the subway station) — registry/_vocab/place_words.yaml. A common
    noun (「calories in a banana」), a number alone (「in 2022」) or a technology (「in css」) is none."""
    kw = words()
    ws = [w.strip(".,'\"") for w in place.split()]
    ws = [w for w in ws if w]
    if not ws:
        return False
    if any(w[:1].isupper() and any(c.islower() for c in w[1:]) for w in ws):
        return True
    low = [w.lower() for w in ws]
    if any("-" in w and w.rsplit("-", 1)[1] in kw.romanized_endings for w in low):
        return True
    return low[-1] in kw.english_place_nouns or low[-1].rstrip("s") in kw.english_place_nouns


def english_to_korean(place: str) -> str:
    """An English place name the vocabularies map (Busan Station → 부산역), else as written."""
    return words().landmarks_en.get(place.lower().strip(" .'-"), place)


def place_span(text: str, language: str = "ko", exclude: frozenset[str] = frozenset()) -> str | None:
    """The place a request anchors on (「X 근처」, "near X"), or None. ``exclude``: words that
    name services (lower-case), which are never the place."""
    if language != "ko":
        m = _EN_ANCHOR.search(text)
        if not m:
            return None
        kw = words()
        ws = [w for w in m.group("place").split() if w.lower() not in kw.english and MARK not in w]
        place = " ".join(ws).strip(" .'-")
        if re.search(r"[가-힣]", place):  # a Korean name inside an English request: read as Korean
            return bare_place(place, "ko") or place
        if not place:
            return None
        known = english_to_korean(place)
        return known if known != place or english_place_shaped(place) else None
    split = _anchor_split(text)
    if split is None:
        return None
    return _span_backwards(split_words(split[0].rstrip()), exclude=exclude)


def bare_place(text: str, language: str = "ko", vocabulary: frozenset[str] | set[str] = frozenset()) -> str | None:
    """A message that is only a place (「하단동」, 「부산역이요」, 「광주는?」, "Haeundae"), or the place
    words of a short elliptical message once function words and the topic's own vocabulary
    (``vocabulary``, lower-case) are set aside."""
    if language != "ko" and re.search(r"[가-힣]", text):
        korean = " ".join(w for w in text.split() if re.search(r"[가-힣0-9]", w) and not w.isascii() or re.fullmatch(r"\d[\d\-]*[?.!,]?", w))
        return bare_place(korean, "ko", vocabulary)
    if language != "ko":
        kw = words()
        text = _EN_NAME_VALUE.sub(" ", text)
        ws = [w.strip(".,!?'\"") for w in text.split()]
        kept = [w for w in ws if w and w.lower() not in kw.english and w.lower() not in vocabulary
                and w.lower().rstrip(":") not in kw.labels and MARK not in w and not re.fullmatch(r"[\d\-+().]+", w)
                and w.lower() not in ("what", "about", "how", "then", "so", "ok", "okay")]
        kept = [w for w in kept if w[:1].isupper() or any(c.isdigit() for c in w)]
        return english_to_korean(" ".join(kept)) if kept else None
    picked: list[str] = []
    pending_number: str | None = None
    ws = split_words(text)
    for i, word in enumerate(ws):
        following = ws[i + 1] if i + 1 < len(ws) else ""
        kind, value = classify(word, before_number_or_anchor=bool(following) and (
            classify(following)[0] == "number" or bool(words().anchor_rx.match(following))))
        if kind == "number":
            if picked and (has_place_suffix(picked[-1]) or picked[-1] in known_places()):
                picked.append(value)  # 효원로 25, 중앙동 123-4: an address ends at its number
                break
            continue
        if kind in ("skip", "stop") or not value:
            if picked and kind == "stop":
                break
            continue
        low = value.lower()
        road = value == word.strip(".,!?~…\"'()[]「」『』") and _road_name(value, words())
        if value not in known_places() and not road and any(low[:k] in vocabulary for k in range(len(low), 1, -1)):
            continue  # a word of the topic's own (「영문주소」); a road name before its number is no such word
        picked.append(value)
        if kind == "place_end" or len(picked) >= 4:
            break
    del pending_number
    return " ".join(picked) or None


def has_deixis(text: str) -> bool:
    """「거기」「그 근처」「여기」 "there": the message points at the place already talked about."""
    kw = words()
    low = text.lower()
    if kw.deixis_en_rx.search(low):
        return True
    ws = grammar.eojeols(text)
    for i, w in enumerate(ws):
        stem = grammar.strip_particle(w, min_stem=1)
        if len(w) >= 2 and (w in kw.deixis or stem in kw.deixis) and not w.isascii():
            return True
        if w in ("그", "이") and i + 1 < len(ws) and grammar.strip_particle(ws[i + 1], min_stem=1) in kw.deixis_nouns:
            return True
        if len(w) >= 3 and w[0] in "그이" and w[1:] in kw.deixis_nouns | {grammar.strip_particle(x, min_stem=1) for x in (w[1:],)}:
            return True
    return False


def without_personal(text: str) -> str:
    """``text`` with personal data and stated times replaced by a mark no place can span across."""
    from ummaya.wire.redact import find_personal  # the shared detector, below the guard
    from .dates import spans

    cuts: list[tuple[int, int]] = []
    if text and ("@" in text or any(ch.isdigit() for ch in text)):
        cuts += [(f.start, f.end) for f in find_personal(text)]
    cuts += spans(text)
    for start, end in sorted(set(cuts), reverse=True):
        if any(s <= start and end <= e and (s, e) != (start, end) for s, e in cuts):
            continue
        # Glued to what follows (「⟦⟧이고」): the particle goes with the value, not the place.
        text = text[:start] + MARK + text[end:]
    return text


def without_value_labels(words: list[str], is_value: Any) -> list[str]:
    """``words`` without the label words that introduce a removed personal value (「제 주민번호는
    ⟦⟧」, 「my phone number is ⟦⟧」): they name the citizen's own data, never a service or a topic
    (registry/_vocab/function_words.yaml personal_labels; function words and copulas may stand
    between a label and its value)."""
    labels = vocab.fw("personal_labels")
    bridges = (vocab.fw("english") | vocab.fw("copula")) - labels
    drop: set[int] = set()
    for i, w in enumerate(words):
        if not is_value(w):
            continue
        j, first = i - 1, None
        while j >= 0:
            low = words[j].lower()
            if low.rstrip("은는이가:") in labels:
                first = j  # 「phone number is」: every label of the value goes
            elif low.rstrip(":") not in bridges:
                break
            j -= 1
        if first is not None:
            drop.update(range(first, i))
    return [w for i, w in enumerate(words) if i not in drop]


def find_place(text: str, language: str, exclude: frozenset[str] = frozenset()) -> str | None:
    """The place phrase a citizen anchors a request on: 「동아대 승학캠퍼스 근처 …」 → 동아대 승학캠퍼스.
    A span that is only a kind of place (시청, 역, 터미널: a place suffix with no name of its own,
    and no known place) names none: every city has one, so the engine asks which."""
    span = place_span(without_personal(text), language, exclude)
    if span is not None and is_only_a_kind(span):
        return None
    return span


def is_only_a_kind(span: str) -> bool:
    """``span`` is a place suffix alone (시청, 정류장), not a name (부산시청, 시청역 are known places)."""
    kw = words()
    return span in kw.place_suffixes and span not in kw.places


# -- the readers' side ---------------------------------------------------------------------------


def read_place_value(req: Any) -> Any:
    """A place field: the anchored place span (or the dialogue's), else a message that is only a
    place; a region name only when the message names nothing more precise than a region."""
    ctx = req.context
    if ctx is not None and getattr(ctx, "place", None):
        return ctx.place
    vocabulary = frozenset(getattr(ctx, "vocab", ()) or ()) | frozenset(getattr(ctx, "services", ()) or ())
    bare = bare_place(without_personal(req.text), req.language, vocabulary)
    if bare and req.language == "ko" and not looks_like_place(bare):
        bare = None  # 「늦었나」: a word that is no place by any shape the vocabularies know
    region = getattr(ctx, "region", None) if ctx is not None else regions.find_region(req.text)
    if region is not None and (not bare or regions.is_region_name(bare)):
        return region.text()
    return bare


def read_region_value(req: Any) -> Any:
    """A region field, at the slot type's level (region_level) or in the field's enum spelling; a
    derived code from the session or a locate step, corrected by the official code table when the
    citizen named the region and the code belongs to another place."""
    from .labels import resolve_enum

    ctx = req.context
    region = getattr(ctx, "region", None) if ctx is not None else regions.find_region(req.text)
    slot = req.slot
    level = slot.region_level if slot is not None else None
    carried = req.carried or {}
    own = carried.get(slot.name) if slot is not None else None
    if slot is not None and slot.derived and level == "code":
        if own is None:
            return None
        return official_code(region, own)
    if region is None and req.prop.get("enum") and (named := _enum_word(req) or _label_word(req)) is not None:
        # 「전국 미세먼지」: a value of the field's own list, named as it is; 「전국 기상특보」: a word
        # of one of its labels (전국 (기상청) → 108), the code the manifest declares for it.
        return named
    if region is None:
        if level == "sigungu" and not req.prop.get("enum") and (named := regions.sigungu_name_in(req.text)):
            return named  # 「중구 응급실」: kept while the engine asks which 시·도
        if own is not None:
            return resolve_enum(req.prop, [str(own)]) if req.prop.get("enum") else own
        sido_name = carried.get(_sido_slot()) if _sido_slot() else None
        if sido_name and req.prop.get("enum"):
            other = regions.find_region(str(sido_name))
            return resolve_enum(req.prop, other.names()) if other else None
        return None
    if req.prop.get("enum"):
        named = _enum_word(req)
        if named is not None:
            return named
        names = ([region.sigungu, region.sigungu.split(" ")[0]] if region.sigungu else []) + region.names()
        found = resolve_enum(req.prop, names)
        if found is None and region.sigungu:
            found = resolve_enum(req.prop, region.names())
        return found
    if level == "sido":
        return region.sido_full
    if level == "sigungu":
        return region.sigungu or regions.sigungu_name_in(req.text)
    if level == "code":
        return region.code
    return region.text()


def _enum_word(req: Any) -> Any:
    """A value of the field's enum (two characters or more) the request names as a word of its own."""
    for value in req.prop.get("enum") or []:
        v = str(value)
        if len(v) >= 2 and not v.isdigit() and any(grammar.strip_particle(w) == v or w == v for w in grammar.eojeols(req.text)):
            return value
    return None


def _label_word(req: Any) -> Any:
    """The code whose label (x-enum-labels), or one part of it (「전국 (기상청)」 → 전국, 기상청),
    the request names as a word of its own — read only when the request names no region, so a
    region's own reading (its names against the labels) is never overridden."""
    from .labels import typed

    enum = req.prop.get("enum") or []
    words = {w for e in grammar.eojeols(req.text) for w in (e, grammar.strip_particle(e))}
    for code, label in (req.prop.get("x-enum-labels") or {}).items():
        parts = {p for p in re.split(r"[·,/()\s]+", str(label)) if len(p) >= 2}
        if parts & words:
            return typed(code, enum)
    return None


def _sido_slot() -> str | None:
    """The slot type whose region_level is the 시·도 (the dialogue carries it)."""
    return next((n for n, s in table.slot_table().slots.items() if s.region_level == "sido"), None)


def carried_sido(slots: dict[str, Any]) -> str | None:
    """The 시·도 the conversation is in, from whichever region slot it carries: a 시·도 name, a
    region name (울산광역시 남구), a 시·군·구 name, or a 법정동 code (its first two digits)."""
    by_level: dict[str, str] = {}
    for name, value in (slots or {}).items():
        st = table.slot(name)
        if st is not None and st.region_level is not None and isinstance(value, str) and value:
            by_level.setdefault(st.region_level, value)
    if "sido" in by_level:
        return by_level["sido"]
    for level in ("full", "sigungu"):
        if level in by_level:
            region = regions.find_region(by_level[level])
            if region is not None:
                return region.sido_short
    code = by_level.get("code", "")
    if code[:2].isdigit():
        return next((s["short"] for s in regions.sidos() if s["code"] == code[:2]), None)
    return None


def region_within(text: str, slots: dict[str, Any] | None) -> Any:
    """The region ``text`` names, with a 시·군·구 name several 시·도 have (중구, 동구, 서구) read
    inside the 시·도 the conversation carries: 「중구는?」 after 대구 수성구 is 대구 중구. A text
    naming its own 시·도 keeps it. Every reader of a region in a conversation uses this one."""
    region = regions.find_region(text)
    if region is not None and region.sigungu is not None:
        return region
    sido = carried_sido(slots or {})
    if sido:
        within = regions.find_region(f"{sido} {text}")
        if within is not None and within.sigungu is not None and (region is None or within.sido_code == region.sido_code):
            return within
    return region


def consistent_region_slots(slots: dict[str, Any], request: str,
                            carried: dict[str, Any] | None = None) -> dict[str, Any]:
    """``slots`` a locate step returned, with its region slots replaced by the official names and
    code of the region the citizen named when the step answered for another 시·군·구 or 시·도
    (the request read inside the conversation's 시·도, ``carried``: 「동구는?」 after 울산 남구)."""
    region = region_within(request, carried)
    if region is None or not region.current:
        return slots
    table_ = table.slot_table()
    out = dict(slots)
    for name, value in slots.items():
        st = table_.get(name)
        if st is None or st.region_level is None or value is None:
            continue
        if st.region_level == "code":
            out[name] = official_code(region, value)
            continue
        other = regions.find_region(str(value))
        if other is not None and (other.sido_code != region.sido_code or (
                region.sigungu_code and other.sigungu_code and other.sigungu_code != region.sigungu_code)):
            out[name] = {"sido": region.sido_full, "sigungu": region.sigungu, "full": region.text()}.get(st.region_level, value)
            if out[name] is None:
                out.pop(name)
    return out


def official_code(region: Any, code: Any) -> Any:
    """``code`` (from a locate step or the session), or the official code of the region the citizen
    named when ``code`` belongs to another 시·군·구 (a Mock replay recorded elsewhere, a fuzzy match)."""
    if region is None or not isinstance(code, str) or not code.isdigit() or not region.current:
        return code
    want = region.sigungu_code or region.sido_code
    if code.startswith(want):
        return code
    return region.code


__all__ = ["MARK", "bare_place", "classify", "english_place_shaped", "english_to_korean", "find_place", "has_deixis", "has_place_suffix",
           "is_function", "is_portal", "known_places", "official_code", "place_span", "read_place_value",
           "read_region_value", "split_words", "without_personal", "words"]
