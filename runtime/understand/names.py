"""Names a request asks about: a product (a medicine), a keyword, a stop, the citizen's own name.

A name is taken whole and only the name: particles come off only where the grammar allows
(게보린이 → 게보린, 판콜에이 keeps its 이), and the words around it — what is asked about it (먹어도
돼?, 부작용), dosage forms (시럽, 연고), who it is for (어린이가), times (식후에), request words and
politeness — are vocabulary (registry/_vocab/products.yaml, function_words.yaml) and never become the
name. Product names the vocabulary knows are read whole wherever they appear, and an English name
is mapped to the Korean one (Tylenol → 타이레놀).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path
from typing import Any

from . import grammar, table, vocab
from .labels import named_terms
from .places import MARK, is_function, known_places, without_personal


class _Classes:
    def __init__(self) -> None:
        fw = vocab.fw
        self.pointers = fw("pointers")
        self.deixis = fw("deixis")
        self.labels = fw("personal_labels")
        self.value_labels = fw("value_labels")
        self.birth_labels = tuple(sorted(fw("birth_labels"), key=len, reverse=True))
        self.temporal = fw("temporal")
        self.request = fw("request")
        self.ask_about = vocab.words("products", "ask_about")
        self.dosage = vocab.words("products", "dosage_forms")
        self.not_products = vocab.words("products", "not_products")
        self.people = fw("people")
        self.kind_nouns = fw("kind_nouns")
        self.stop_suffixes = tuple(sorted(vocab.words("place_words", "stop_suffixes"), key=len, reverse=True))
        self.known = vocab.nouns() | known_places()
        product_words: set[str] = set()
        for t in vocab.terms("products"):
            product_words |= {t["label"], *t.get("ko", [])}
        self.products = frozenset(product_words)
        term_words: set[str] = set()
        for name, _file in table.slot_table().vocabularies.items():
            if name != "products":
                for t in vocab.terms(name):
                    term_words |= {t["label"], *t.get("ko", [])}
        self.terms = frozenset(term_words)
        self.known |= self.products | self.terms | vocab.fw("people")


@lru_cache(maxsize=4)
def _classes_for(generated: Path) -> _Classes:
    return _Classes()


def classes() -> _Classes:
    return _classes_for(table.folder())


def clean(word: str) -> str:
    """A word without the punctuation and the particle around it (grammar decides the particle)."""
    c = classes()
    w = word.strip(".,!?~…\"'()[]「」『』")
    return grammar.strip_particle(w, known=c.known)


def points_back(text: str) -> bool:
    """「그거 어린이도 먹어도 돼?」, 「그 약」, "it": the message points at what was already named."""
    return _pointer_rx(table.folder()).search(text) is not None


@lru_cache(maxsize=4)
def _pointer_rx(generated: Path) -> re.Pattern[str]:
    c = classes()
    en = "|".join(re.escape(p) for p in sorted(c.pointers, key=len, reverse=True) if p.isascii()) or "(?!)"
    ko = "|".join(re.escape(p) for p in sorted(c.pointers, key=len, reverse=True) if not p.isascii()) or "(?!)"
    return re.compile(rf"(?i:\b(?:{en})\b)|(?:^|\s)(?:{ko})(?=$|\s|[은는이가을를도로에의?.!,])")


def _not_a_name(word: str, vocabulary: frozenset[str] | set[str] = frozenset(), keyword: bool = False) -> bool:
    """Not the thing asked for. ``not_products`` (who or when a medicine question is about) never
    names a product, but a search word may be a term of another vocabulary (「노인 관련 혜택」 → 노인)."""
    c = classes()
    low = word.lower()
    if keyword and word in c.terms and (low in c.not_products or low in c.people):
        return False  # a who-word a vocabulary knows (노인, 어르신): what a benefit search is about
    return (
        not word or MARK in word or low in c.request or low in c.temporal or low in c.pointers or low in c.deixis
        or low in c.labels or is_function(word) or low in c.ask_about or low in c.dosage
        or (low in c.not_products and not (keyword and word in c.terms))
        or bool(re.fullmatch(r"[\d.\-]+", word)) or (grammar.is_predicate(word) and word not in known_places())
        or (low in vocabulary) or any(low.startswith(v) for v in vocabulary if len(v) >= 2)
        or (keyword and _part_of_service_word(low, vocabulary))
    )


def _part_of_service_word(word: str, vocabulary: frozenset[str] | set[str]) -> bool:
    """A search word that is one half of a compound of the service's own words (「훈련」 of 훈련과정
    and 직업훈련, 「교육」 of 재취업교육): it names the service, never what to search in it."""
    if len(word) < 2 or not grammar.is_hangul(word[:1]):
        return False
    return any(len(v) - len(word) >= 2 and (v.startswith(word) or v.endswith(word)) for v in vocabulary)


def content_words(text: str, vocabulary: frozenset[str] | set[str] = frozenset(), keyword: bool = False) -> list[str]:
    """Words left once function words, time words and the adapter's own vocabulary are removed:
    the adapter's hints say what the request is about (응급실, 약, 버스); what remains is what it is
    about specifically (타이레놀, 부산역) — the argument."""
    out = []
    ws = grammar.eojeols(without_personal(text))
    for i, raw in enumerate(ws):
        w = clean(raw)
        if len(w) < 2 and grammar.is_hangul(w[:1]):
            continue
        # 「경리는?」: the last word topic-marked is a noun with its particle, not a verb form.
        topic = grammar.clause_final_topic(raw) if i == len(ws) - 1 else None
        if topic is not None and topic not in known_places():
            if not _not_a_name(topic, vocabulary, keyword):
                out.append(topic)
            continue
        if _not_a_name(w, vocabulary, keyword) or _not_a_name(raw.lower(), vocabulary, keyword):
            continue
        out.append(w)
    return out


def _without_dosage_form(word: str) -> str:
    """「부루펜시럽」 → 부루펜: a dosage form glued to the name (two syllables or more)."""
    for form in sorted(classes().dosage, key=len, reverse=True):
        if len(form) >= 2 and word.endswith(form) and len(word) - len(form) >= 2 and not form.isascii():
            return word[: -len(form)]
    return word


def product_in(text: str, vocabulary: frozenset[str] | set[str] = frozenset(), language: str = "ko") -> str | None:
    """The product a request asks about, whole, in the vocabulary's spelling when it knows it."""
    c = classes()
    found = _whole_product(text)
    if found:
        return found
    ws = grammar.eojeols(without_personal(text))
    # The word before what is asked about it: 「타이레놀 먹어도 돼?」, 「게보린 부작용」.
    for i, raw in enumerate(ws):
        low = raw.lower().strip(".,!?~")
        if low in c.ask_about or any(low.startswith(a) for a in c.ask_about if len(a) >= 2 and not a.isascii()):
            known_word = None
            for j in range(0, i):  # the topic comes first (「이가탄은 잇몸 붓는 데 먹는 약이야?」)
                w = _without_dosage_form(clean(ws[j]))
                if w.lower() in c.dosage or _not_a_name(clean(ws[j])) or _not_a_name(w, vocabulary) or len(w) < 2:
                    continue
                if w in c.known and w not in c.products:
                    known_word = known_word or w  # 「잇몸」, 「중학생」: a word the registry knows is seldom the brand
                    continue
                return w
            if known_word:
                return known_word
    unknown = [w for w in (_without_dosage_form(x) for x in content_words(text, vocabulary))
               if not _not_a_name(w, vocabulary) and len(w) >= 2 and (language == "ko" or w[:1].isupper())]
    for w in unknown:
        if w not in c.known or w in c.products:
            return w
    for w in content_words(text, vocabulary):
        w = _without_dosage_form(w)
        if not _not_a_name(w, vocabulary) and len(w) >= 2:
            if language != "ko" and not w[:1].isupper():
                continue
            return w
    return None


def read_product_value(req: Any) -> Any:
    ctx = req.context
    if points_back(req.text) and ctx is not None and (getattr(ctx, "carried_args", None) or getattr(ctx, "references", None)):
        return None
    vocabulary = frozenset(getattr(ctx, "vocab", ()) or ()) if ctx is not None else frozenset()
    return product_in(req.text, vocabulary, req.language)


def quoted(text: str, longest: int = 30) -> str | None:
    """A word the citizen quotes (「'튼튼' 들어간」, "named “Sunshine”"): said on purpose, never a guess.
    ``longest``: a search word is a few words; a free-text field (a report's description) takes a
    quoted sentence."""
    m = re.search(r"['\"‘“「『]([^'\"’”」』]{1,%d})['\"’”」』]" % max(1, longest), text)
    return m.group(1).strip() if m else None


def labelled_value(text: str, labels: Iterable[str], longest: int = 100) -> str | None:
    """The value the citizen states after one of ``labels`` (a slot vocabulary's label words):
    「제출할 곳은 신한은행이야.」 → 신한은행, 「용도: 은행 대출」 → 은행 대출. The value runs to the end
    of its clause; a copula ending it (이야, 입니다, 이고) is taken off. Said on purpose, never a guess:
    no label, no value."""
    low = text.lower()
    for label in sorted(labels, key=len, reverse=True):
        start = 0
        while (i := low.find(label.lower(), start)) >= 0:
            start = i + 1
            if i > 0 and low[i - 1].isalnum():
                continue  # inside a longer word
            glue = grammar.LABEL_GLUE.match(text, i + len(label))
            if glue is None:
                continue
            rest = text[glue.end():]
            end = grammar.CLAUSE_END.search(rest)
            words: list[str] = []
            for w in (rest[: end.start()] if end else rest).split():
                noun = grammar.copula_noun(w)
                if noun:  # 「은행 대출이고 …」: the copula ends the value
                    words.append(noun)
                    break
                if grammar.is_predicate(w):
                    break  # 「용도는 대출 받으려고」: the verb is no part of the value
                words.append(w)
            value = " ".join(words).strip("'\"“”‘’「」")
            if 2 <= len(value) <= longest:
                return value
    return None


def programme_named(text: str, vocabulary: str, service: frozenset[str] = frozenset()) -> str | None:
    """A programme no term of the vocabulary knows, named by what it is (「기저귀 지원」 → 기저귀,
    「청년내일저축계좌」 → itself): the vocabulary's ``programme_heads`` end the name. A word of the
    adapter's own hints (``service``, lower-case: 복지서비스) names the service, not a programme."""
    heads = vocab.words(vocabulary, "programme_heads")
    if not heads:
        return None
    c = classes()
    ws = [clean(w) for w in grammar.eojeols(without_personal(text))]
    for i, w in enumerate(ws):
        glued = next((h for h in heads if w.endswith(h) and len(w) - len(h) >= 2), None)
        if glued and w not in c.terms and not _not_a_name(w) and w.lower() not in service:
            return w
        if w in heads and i > 0:
            before: list[str] = []
            for prev in reversed(ws[:i]):
                if (_not_a_name(prev) or prev in c.terms or prev in c.not_products or len(prev) < 2 or prev in heads
                        or not _may_be_keyword(prev) or prev.lower() in service):
                    break
                before.insert(0, prev)
            if before:
                return " ".join(before)
    return None


def read_keyword_value(req: Any) -> Any:
    """With a vocabulary, the term of it the request names (한부모, 긴급복지); else, for a field that
    needs one, the content words of the request."""
    ctx = req.context
    translating = req.slot is not None and req.slot.vocabulary_for == "english"
    if req.vocabulary and not (translating and req.language == "ko"):
        found = named_terms(req.text, req.vocabulary)
        enum = req.prop.get("enum")
        if found and enum:
            # The field's own spelling of the term (긴급복지 → 「긴급복지 생계지원」), or nothing.
            for _n, label in found:
                for value in enum:
                    v = str(value)
                    if v == label or v.startswith(label) or label in v.split():
                        return value
            return None
        if found:
            return found[0][1]
        if enum:
            return None
        hints = frozenset(getattr(ctx, "vocab", ()) or ()) if ctx is not None else frozenset()
        named = programme_named(req.text, req.vocabulary, hints)
        if named:
            return named
        if req.slot is not None and req.slot.fill_optional == "vocabulary" and not req.required:
            return None
    if points_back(req.text) and ctx is not None and (getattr(ctx, "carried_args", None) or getattr(ctx, "references", None)):
        return None
    vocabulary = frozenset(getattr(ctx, "vocab", ()) or ()) if ctx is not None else frozenset()
    content = [w for w in content_words(_after_kind_noun(req.text), vocabulary, keyword=True) if _may_be_keyword(w)]
    content = _without_predicate_noun(req.text, content)
    place = getattr(ctx, "place", None) if ctx is not None else None
    ws = [w for w in content if w not in place.split()] if place else content
    region = getattr(ctx, "region", None) if ctx is not None else None
    if region is not None and getattr(ctx, "region_fields", False):
        # A region the request names fills the adapter's region fields (「부산 수영구 청년 월세」 →
        # 부산광역시, 수영구), never the words searched for — its 동 and 시·군·구 too; a word that only
        # contains one (부산중앙고등학교) stays.
        region_words = {*region.names(), *(region.sigungu or "").split(), region.dong or ""} - {""}
        ws = [w for w in ws if clean(w) not in region_words]
    from .regions import is_region_name

    # The region is its own field when the adapter has one: 「부산 하단온누리약국」 searches
    # 하단온누리약국 with sido 부산; an adapter without region fields keeps 「부산 소상공인」 whole, or
    # the region the citizen named would be lost.
    region_fields = bool(getattr(ctx, "region_fields", False))
    kept = [w for w in ws if not is_region_name(w)] if region_fields else ws
    if not req.required and req.language != "ko":
        # An optional filter of a Korean upstream gets no English words no vocabulary mapped
        # ("care worker" would match no posting): every result is better than none.
        kept = [w for w in kept if not w.isascii()]
        ws = [w for w in ws if not w.isascii()]
    if kept:
        return " ".join(kept[:3])
    if not req.required:
        return None if not ws else " ".join(ws[:3])
    # Only a place was named — the answer to 「which one?」 (「자갈치」) or a name that is also a
    # 시·군·구 (「해운대 공영주차장」): it is the search word, unless it is only the 시·도.
    rest = [w for w in content if not _is_sido(w)]
    if region_fields and region is not None:
        # The region is this adapter's region fields' (「사하구 도서관에 책 있어?」: district 사하구),
        # never also its search word: no word left, the engine asks for it.
        rest = [w for w in rest if clean(w) not in region_words and not is_region_name(w)]
    return " ".join(rest[:3]) if rest else None


def _without_predicate_noun(text: str, content: list[str]) -> list[str]:
    """The request's last word a copula form (「부모급여가 어떤 제도야?」, 「이게 무슨 약이에요?」): its noun
    is what is said of the topic, not the topic, so it is no search word when another word is."""
    ws = grammar.eojeols(text)
    if len(content) < 2 or not ws:
        return content
    last = ws[-1].strip(".,!?~…\"'")
    noun = grammar.copula_noun(last)
    if noun is None or noun == last:
        return content
    drop = {last, clean(last), noun}
    return [w for w in content if w not in drop] or content


def _after_kind_noun(text: str) -> str:
    """What follows the last noun saying what kind of thing a name is (「이번에 옮긴 직장 대성산업
    가입돼 있어?」 → 「대성산업 가입돼 있어?」): the name comes after it, its modifiers before it."""
    ws = grammar.eojeols(text)
    kinds = classes().kind_nouns
    for i in range(len(ws) - 2, -1, -1):
        if clean(ws[i]) in kinds:
            after = " ".join(ws[i + 1:])
            # 「한빛정밀 가입 사업장 맞아?」: the kind noun is the head of the name before it, nothing after.
            return after if any(_may_be_keyword(w) for w in content_words(after, keyword=True)) else text
    return text


def _may_be_keyword(word: str) -> bool:
    """Not what is asked about a thing (영업시간, 관련) and not a verb form whose stem is one
    syllable (「받을」, 「할」 of 「받을 수 있는」)."""
    if word.lower() in vocab.fw("not_keywords"):
        return False
    stem, particle = grammar.split_particle(word, min_stem=1)
    return not (particle and len(stem) == 1 and word not in classes().known)


def _is_sido(word: str) -> bool:
    from .regions import sidos

    low = word.lower()
    return any(low in (s["name"], s["short"], s["en"].lower()) for s in sidos())


def read_stop_value(req: Any) -> Any:
    c = classes()
    ctx = req.context
    if points_back(req.text) and ctx is not None and (getattr(ctx, "carried_args", None) or getattr(ctx, "references", None)):
        return None
    alt = "|".join(re.escape(s) for s in c.stop_suffixes)
    m = re.search(rf"([가-힣A-Za-z0-9]+?)\s*(?:{alt})", req.text)
    if m:
        name = clean(m.group(1))
        if len(name) >= 2 and not _not_a_name(name) and name.lower() not in ("버스", "bus"):
            return name
    place = getattr(ctx, "place", None) if ctx is not None else None
    if place:
        return place
    vocabulary = frozenset(getattr(ctx, "vocab", ()) or ()) if ctx is not None else frozenset()
    ws = content_words(req.text, vocabulary)
    return ws[0] if ws else None


def person_name_in(text: str) -> str | None:
    """A name only when stated as one (「이름은 홍길동」, "my name is Kim Minji", 「홍길동 1990-01-01」)."""
    c = classes()
    labels = "|".join(re.escape(w) for w in sorted(c.value_labels, key=len, reverse=True) if not w.isascii())
    particles = "|".join(re.escape(p) for p in grammar.TOPIC_PARTICLES)
    m = re.search(rf"(?:(?:{labels})(?:{particles})?\s*:?\s*|name is\s+)(?:([가-힣]{{2,4}}){grammar.NAME_END}|([A-Z][a-z]+(?: [A-Z][a-z]+)?))", text)
    if m:
        return m.group(1) or m.group(2)
    pronouns = "|".join(re.escape(p) for p in sorted(vocab.fw("pronouns"), key=len, reverse=True) if not p.isascii())
    m = (re.search(rf"(?:^|\s)([가-힣]{{2,4}}?){grammar.SELF_CALLED}", text)
         or re.search(rf"(?:^|\s)(?:{pronouns})\s+([가-힣]{{2,4}}){grammar.POLITE_COPULA}", text))
    if m and not is_function(m.group(1)) and m.group(1) not in c.terms and m.group(1) not in known_places():
        return m.group(1)  # 「홍길동이라고 합니다」, 「저는 김민지입니다」
    return _names_before_dates(text) or _english_name(text)


__all__ = ["clean", "content_words", "person_name_in", "points_back", "product_in", "read_keyword_value",
           "read_product_value", "read_stop_value"]


def _names_before_dates(text: str) -> str | None:
    """A name right before a date of birth or a phone number (「김하은, 1992년 3월 4일생」, 「박지은
    880719」, 「우리 엄마 이순자 1956년 …」, "Park Jieun, born 19 July 1988"): a name stated as one. The
    labels that introduce a date of birth (birth_labels: 생년월일, born, DOB …) may stand between."""
    from .dates import birth_spans, english_dates

    c = classes()
    starts = [s for s, _e in birth_spans(text)]
    starts += [s for _m, _d, year, s, _e in english_dates(text) if year is not None]
    for start in sorted(set(starts)):
        before = _without_birth_label(text[:start], c)
        last = before.split()[-1] if before.split() else ""
        noun = grammar.copula_noun(last)  # 「김민지입니다 1993년 …」: the name before its copula
        if noun and 2 <= len(noun) <= 4:
            before = before[: len(before) - len(last)] + noun
        m = re.search(r"([가-힣]{2,4})$", before)
        if not m:
            if (en := _ENGLISH_FULL_NAME.search(before)) and not any(
                    w.lower() in c.labels or is_function(w) for w in en.group(1).split()) and not _english_place(en.group(1)):
                return en.group(1)
            continue
        word = m.group(1)
        if word.lower() in c.labels or is_function(word) or word in c.terms or word in known_places():
            continue
        if before[: m.start()] and re.search(r"[가-힣]$", before[: m.start()]):
            continue  # the end of a longer word, not a name
        return word
    return None


# A name written in Latin letters, given and family name capitalised ("Park Jieun", "Kim Min-ji").
_ENGLISH_FULL_NAME = re.compile(r"(?:^|[\s:,(—–-])([A-Z][a-z]+(?:-[a-z]+)?(?:\s+[A-Z][a-z]+(?:-[a-z]+)?){1,2})$")


def _english_place(name: str) -> bool:
    """"Busan Station", "Seoul": a place the vocabularies know by its English name, never a person."""
    from .places import words

    return name.lower() in words().landmarks_en


def _without_birth_label(before: str, c: _Classes) -> str:
    """``before`` (the text up to a date of birth) without the label that introduces the date and
    the separators around it: 「홍길동 생년월일:」 → 「홍길동」, "Kim Minji, born" → "Kim Minji"."""
    out = before.rstrip(" ,/:")
    changed = True
    while changed:
        changed = False
        for label in c.birth_labels:
            if out.lower().endswith(label) and (len(out) == len(label) or not out[-len(label) - 1].isalnum()):
                out = out[: -len(label)].rstrip(" ,/:")
                changed = True
                break
    return out


def _english_name(text: str) -> str | None:
    """"I'm Lee Youngsoo", "my name is Kim Minji": capitalised words after the phrase only."""
    for m in re.finditer(r"\b(?i:i'm|i am|my name is|name:)\s+([A-Z][a-z]+(?:\s+[A-Z][a-z]+){0,2})\b", text):
        return m.group(1)
    return None


def _whole_product(text: str) -> str | None:
    """A product the vocabulary knows, named as a whole word (「판피린큐」 is not 판피린): its label."""
    names = _product_names(table.folder())
    for raw in grammar.eojeols(text):
        w = clean(raw)
        if w in names:
            return names[w]
    low = text.lower()
    for name, label in names.items():
        if name.isascii() and " " in name and re.search(rf"\b{re.escape(name)}\b", low):
            return label
    for raw in low.split():
        w = raw.strip(".,!?'\"")
        if w in names:
            return names[w]
    return None


@lru_cache(maxsize=4)
def _product_names(generated: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for t in vocab.terms("products"):
        for n in (t["label"], *t.get("ko", []), *(e.lower() for e in t.get("en", []))):
            out.setdefault(n, t["label"])
    return out


def product_cue(text: str) -> bool:
    """The request asks about a product it names: a word no vocabulary knows before what is asked
    about a medicine (「낙센 먹고」, 「써스펜 좌약 열날 때 써도 돼?」), or a product the vocabulary knows."""
    if _whole_product(text):
        return True
    c = classes()
    ws = grammar.eojeols(without_personal(text))
    for i, raw in enumerate(ws[1:], 1):
        low = raw.lower().strip(".,!?~")
        if low in c.ask_about or any(low.startswith(a) for a in c.ask_about if len(a) >= 2 and not a.isascii()):
            for j in range(i - 1, max(-1, i - 7), -1):
                w = _without_dosage_form(clean(ws[j]))
                if w.lower() in c.dosage or _not_a_name(w) or len(w) < 2:
                    continue
                if w not in c.known and grammar.is_hangul(w[:1]):
                    return True
                break
    return False


# -- titles ---------------------------------------------------------------------------------------

_SENTENCE_END = re.compile(r"[?!.。]$")


def _adnominal_or_plain(word: str) -> bool:
    """A verb form a title holds (「불편한 편의점」, 「소년이 온다」, 「나는 나로 살기로 했다」): the
    adnominal (a final ㄴ/ㄹ, -는, -던) or the plain declarative -다 — never the conversational endings
    a request ends with (있어?, 알려줘, 가능해요?)."""
    last = word[-1:]
    if not grammar.is_hangul(last):
        return False
    return last in "다는던" or grammar.final_consonant(last) in (4, 8)


def _title_stop(token: str, final: bool, following: str = "") -> bool:
    """A word no title of a request holds: a request or function word, a pointer, a place, a
    region, a word with a locative particle (「도서관에」, 「도서관에서」), a time, a number, or a
    conversational predicate (「확인해줘」, 「있어?」) — unless another predicate follows it in the
    same breath (「작별하지 않는다」, a title's own auxiliary)."""
    from .regions import is_region_name

    w = token.strip(".,!?~…\"'()[]「」『』")
    c = classes()
    low = w.lower()
    if not w or low in c.request or low in c.deixis or low in c.pointers or low in c.temporal or is_function(w):
        return True
    if low in vocab.fw("pronouns") or low in vocab.fw("deixis_nouns") or low in vocab.fw("existence"):
        return True
    if re.fullmatch(r"[\d\-]+", w) or w in known_places() or is_region_name(w):
        return True
    stem, particle = grammar.split_particle(w, known=known_places())
    if particle in grammar.LOCATIVE and stem != w:
        return True
    if grammar.POLITE_END.search(w):
        return True
    if not grammar.is_predicate(w) or _adnominal_or_plain(w):
        return False
    nxt = following.strip(".,!?~…\"'()[]「」『』")
    return final or bool(_SENTENCE_END.search(token)) or not (nxt and grammar.is_predicate(nxt))


def title_in(text: str, vocabulary: str = "titles", longest: int = 100) -> str | None:
    """A title, whole — a book's 「소년이 온다」 although it holds a verb: the quoted or bracketed span;
    else the words before a word saying what kind of work it is (the vocabulary's ``markers``:
    책, 소설 …) or asking about it (``about``: 누가 쓴, 출판사, 대출 …), back to the word that ends
    the span (a place, a request word, the sentence's own predicate). None when the request marks
    no title so (the keyword reader then reads its content words)."""
    said = quoted(text, longest)
    if said:
        return said
    markers = vocab.words(vocabulary, "markers")
    about = vocab.words(vocabulary, "about")
    tokens = [t for t in text.split() if t.strip(".,!?~…\"'()[]「」『』")]
    pronouns = vocab.fw("pronouns")
    runs: list[tuple[list[str], str]] = []
    cur: list[str] = []
    marked = False

    def close(kind: str) -> None:
        if cur:
            runs.append((list(cur), kind))
            cur.clear()
        elif kind in ("marker", "about") and runs and runs[-1][1] in ("about", "marker"):
            pass  # 「소년이 온다 누가 쓴 책이야」: the marker after the about-words closes the same run

    for i, raw in enumerate(tokens):
        w = raw.strip(".,!?~…\"'()[]「」『』")
        low = w.lower()
        base = clean(w).lower()
        noun = grammar.copula_noun(w)
        if low in markers or base in markers or (noun is not None and noun.lower() in markers):
            marked = True
            close("marker")
            continue
        if low in about or base in about or any(low.startswith(a) for a in about if len(a) >= 2 and not a.isascii()):
            close("about")
            continue
        following = tokens[i + 1] if i + 1 < len(tokens) else ""
        if _title_stop(raw, i == len(tokens) - 1, following):
            if low in pronouns and following and not _title_stop(following, i + 1 == len(tokens) - 1) \
                    and following.strip(".,!?~…\"'").lower() not in markers | about:
                cur.append(w)  # 「나는 나로 살기로 했다」: a pronoun that starts a title's clause
                continue
            close("stop")
            continue
        cur.append(w)
    close("end")
    # The run a kind-of-work word ends (「한강이 쓴 소년이 온다 책」), else one an about-word ends.
    # An unquoted title is Korean ("Who wrote the book 채식주의자?"): English words around a Korean
    # upstream's title are the request's, never the title ("Book details for ISBN …").
    runs = [(ws, kind) for ws, kind in runs if any(grammar.is_hangul(ch) for w in ws for ch in w)]
    before_marker = next((ws for ws, kind in runs if kind == "marker"), None)
    picked = before_marker or next((ws for ws, kind in runs if kind == "about"), None)
    if picked is None and marked and runs:
        picked = max((ws for ws, _ in runs), key=len)  # 「이 책 … 있어? 소년이 온다」
    if not picked:
        return None
    last = grammar.strip_particle(picked[-1], known=known_places())
    value = " ".join([*picked[:-1], last]).strip()
    # One syllable is a title only right before the word saying it is one (「흰 책」).
    return value[:longest] if len(value) >= 2 or (picked is before_marker and grammar.is_hangul(value)) else None


def read_title_value(req: Any) -> Any:
    """The title slot: the title whole (``title_in``), else what the keyword reader reads."""
    ctx = req.context
    if points_back(req.text) and ctx is not None and (getattr(ctx, "carried_args", None) or getattr(ctx, "references", None)):
        said = quoted(req.text, int(req.prop.get("maxLength") or 100))
        if said is None:
            return None
    value = title_in(req.text, req.vocabulary or "titles", int(req.prop.get("maxLength") or 100))
    return value if value is not None else read_keyword_value(req)
