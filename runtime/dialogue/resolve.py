"""Reading a message against the dialogue so far: answer, follow-up, topic switch, or new request.

One function, :func:`resolve`, runs in the turn's context stage. It decides what the message is:

- **answer** — the previous turn asked a question (``needs_input``); the message is first read as
  its answer. When it fills one of the missing slots the pending intent resumes. It becomes a new
  request only when it fills none *and* clearly names another service (topic words of its own,
  retrieval ranking another adapter far above the pending one).
- **followup** — an elliptical message that changes one thing (「광주는?」, 「모레는?」, "what about
  tomorrow?"): no topic words of its own, so the last intent is kept; what it names (a place, a
  time) replaces the carried value, everything else carries.
- **switch** — a new topic (「그럼 병원은?」, 「거기 날씨는?」) with the carried place, unless the
  message names its own.
- **new** — anything else: a request that stands on its own (the carried place still fills a
  location the request leaves open, as before).

Deixis (거기, 그 근처, 여기, there) always resolves to the carried place. The carried topic is a
retrieval signal — it wins a near tie — but never overrides a clear new request.

The result (:class:`Frame`) holds the candidates for the planner, the slots it may fill from,
hints (the place span the message gives, arguments carried from the last intent) and a short
``view`` for the trace.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal

from ..understand import dates, grammar, table, vocab
from ..understand.names import content_words
from ..understand.numbers import coordinates_in, count_in
from ..understand.places import bare_place, classify, find_place, has_deixis, has_place_suffix, known_places
from ..understand.places import MARK, without_personal, without_value_labels
from ..understand.readers import READERS, ReadRequest
from ..understand.regions import find_region
from .state import DialogueState

Kind = Literal["new", "answer", "followup", "switch", "decline", "ack"]


def _phrase_rx(words: frozenset[str] | set[str]) -> str:
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True)) or "(?!)"


def _reply_rx(cls: str) -> re.Pattern[str]:
    return re.compile(rf"^(?:(?:{_phrase_rx(vocab.words('replies', cls))})[\s.,!~?ㅎㅋ]*)+$", re.I)


def yes_or_no(text: str) -> str | None:
    """A bare yes or no (「네」, 「응 해줘」, "yes", 「아니」): only ever the answer to the engine's own
    question — never a request of its own, never a topic. The words are registry/_vocab/replies.yaml."""
    t = text.strip()
    for kind in ("thanks", "no", "yes"):
        if _reply_rx(kind).match(t):
            return kind
    return None


def _not_this() -> re.Pattern[str]:
    """「응급실 말고 약국」, "not the ER, a pharmacy": what the citizen turns away from is no topic."""
    ko = _phrase_rx(vocab.fw("rejection"))
    en = _phrase_rx(vocab.fw("rejection_en"))
    return re.compile(rf"\S+\s*(?:{ko})(?=\s|$)|\b(?:{en})\s+(?:the\s+|an?\s+)?\w+\b,?", re.I)


def drop_rejected(text: str) -> str:
    """The request without what a correction rejects: 「아니 서울 말고 부산」 → 「아니 부산」."""
    return re.sub(r"\s+", " ", _not_this().sub(" ", text)).strip() or text


def _fillers(text: str) -> str:
    ko = _phrase_rx(vocab.fw("fillers"))
    en = _phrase_rx(vocab.fw("fillers_en"))
    text = re.sub(rf"^(?:{ko})\s*", "", text)
    return re.sub(rf"^(?:{en})\b", "", text, flags=re.I).strip()


# A carried topic wins over the retrieval's top candidate when it scores at least this share of it.
NEAR_TIE = 0.85
# A pending intent yields to another adapter only when that one scores this many times higher.
CLEARLY_NEW = 2.0


@dataclass
class Hints:
    """What the planner may use besides the request text (PlanContext.dialogue)."""

    kind: Kind = "new"
    place: str | None = None  # a place the message gives without an anchor (「하단동」)
    carried: dict[str, Any] = field(default_factory=dict)  # field name -> value, from the last intent
    references: dict[str, str] = field(default_factory=dict)  # reusable names (service_name, drug_name …)
    pinned: str | None = None  # the adapter the dialogue points at (pending or last intent)


@dataclass
class Frame:
    kind: Kind
    candidates: list[dict[str, Any]]
    slots: dict[str, Any]
    hints: Hints
    new_place: bool = False
    new_time: bool = False
    deixis: bool = False
    topic_words: list[str] = field(default_factory=list)
    reason: str = ""

    def view(self) -> dict[str, Any]:
        return {
            "kind": self.kind, "pinned": self.hints.pinned, "place": self.hints.place,
            "new_place": self.new_place, "new_time": self.new_time, "deixis": self.deixis,
            "carried": sorted(self.hints.carried), "carried_slots": sorted(self.slots),
            "reason": self.reason,
        }


_vocab_cache: dict[int, tuple[Any, frozenset[str]]] = {}


def _words(text: str) -> list[str]:
    return [grammar.strip_particle(w, known=known_places()) for w in re.findall(r"[\w\-·.]+", text)]


def _topic_vocabulary(catalog: Any) -> frozenset[str]:
    """Words that name *what* a request is about, from every adapter's hints and title; place
    names and function words are left out (they say where or how, not what)."""
    where = table.folder()
    topic: set[str] = set()
    for m in catalog.adapters.values():
        for text in (*m.search_hints.ko, *m.search_hints.en, m.title.ko, m.title.en):
            topic |= _text_topics(where, text)
    return frozenset(topic)


@lru_cache(maxsize=1 << 16)
def _text_topics(where: Any, text: str) -> frozenset[str]:
    """The topic words of one hint or title under the vocabularies of ``where``: cached by text, so
    every catalog of the same registry (each release a server loads, each test's app) reuses them."""
    topic: set[str] = set()
    ws = _words(text)
    for i, w in enumerate(ws):
        lw = w.lower()
        if len(lw) == 1 and re.fullmatch(r"[가-힣]", lw) and i < len(ws) - 1:
            # A one-syllable noun before the predicate of a hint (「비 와?」, 「약 먹어도
            # 돼?」): Korean puts the verb last, so what comes before it is the topic.
            topic.add(lw)
            continue
        if len(lw) < 2 or lw in vocab.fw("request") or lw in vocab.fw("temporal"):
            continue
        kind, _ = classify(w)
        if kind == "skip":
            continue
        if w in known_places():
            continue
        topic.add(lw)
    return frozenset(topic)


def topic_vocabulary(catalog: Any) -> frozenset[str]:
    """Cached per catalog object (kept alive with its entry, so an id is never reused)."""
    hit = _vocab_cache.get(id(catalog))
    if hit is None or hit[0] is not catalog:
        if len(_vocab_cache) > 16:
            _vocab_cache.clear()
        hit = (catalog, _topic_vocabulary(catalog))
        _vocab_cache[id(catalog)] = hit
    return hit[1]


_adapter_vocab: dict[int, tuple[Any, frozenset[str]]] = {}


def adapter_vocabulary(m: Any) -> frozenset[str]:
    hit = _adapter_vocab.get(id(m))
    if hit is None or hit[0] is not m:
        from ..plan.offline import _vocabulary

        hit = (m, frozenset(_vocabulary(m)))
        _adapter_vocab[id(m)] = hit
    return hit[1]


def topic_words(text: str, vocabulary: frozenset[str]) -> list[str]:
    """The words of ``text`` that name a topic (a service, a thing) rather than a place or time."""
    out = []
    counters = vocab.words("counters", "counters")
    for raw in without_value_labels(without_personal(text).split(), lambda w: MARK in w):
        w = grammar.strip_particle(raw.strip(".,!?~"), known=known_places())
        lw = w.lower()
        if lw in counters or lw in grammar.NATIVE_NUMBERS or re.fullmatch(r"[\d.,\-]+", lw):
            continue  # 「두 곳만」: how many, never what
        if len(lw) < 2 and lw in vocabulary or _mono_topic(raw.strip(".,!?~").lower(), vocabulary):
            out.append(w)  # 「비」, 「비가」, 「눈이」: a one-syllable topic, alone or with its particle
            continue
        if len(lw) < 2 or lw in vocab.fw("temporal") or w in known_places() or lw in known_places():
            continue
        bare = raw.strip(".,!?~")
        if lw in vocab.fw("request") or bare.lower() in vocab.fw("request") or (
                bare == w and grammar.is_predicate(w) and w not in vocab.nouns()):
            continue  # 「다시 보여줘」: asking, never what
        if find_region(w) is not None and (lw not in vocabulary or w[:1].isupper()):
            continue  # a region's name says where, not what
        if in_vocabulary(lw, vocabulary):
            out.append(w)
    return out


def _mono_topic(word: str, vocabulary: frozenset[str] | set[str]) -> bool:
    """「비가」, 「눈이」: a one-syllable topic with its particle."""
    return len(word) == 2 and word[1] in grammar.PARTICLES and grammar.particle_fits(word[0], word[1]) and word[0] in vocabulary


def in_vocabulary(word: str, vocabulary: frozenset[str] | set[str]) -> bool:
    """The word, or a prefix of it of two or more characters, is in ``vocabulary`` (「병원은」 →
    병원): a lookup per prefix, not a scan of the vocabulary."""
    return any(word[:k] in vocabulary for k in range(len(word), 1, -1))


def _candidate(m: Any, score: float = 0.0) -> dict[str, Any]:
    return {"adapter_id": m.id, "primitive": m.primitive, "tier": m.tier, "score": round(score, 6),
            "domain": m.domain, "agency": m.agency.code, "coverage": 0.0, "text_score": 0.0,
            "carried": True}


def _pin(found: list[dict[str, Any]], m: Any, top_k: int) -> list[dict[str, Any]]:
    rest = [c for c in found if c["adapter_id"] != m.id]
    own = next((c for c in found if c["adapter_id"] == m.id), None)
    first = dict(own, carried=True) if own else _candidate(m)
    return [first, *rest][: max(top_k, 1)]


def _names_time(text: str, language: str) -> bool:
    from ..request_context import now_kst

    return dates.names_day(text, now_kst())


def _fills(missing: list[str], text: str, language: str, place: str | None, region: Any,
           deixis: bool, state: DialogueState) -> list[str]:
    """Which of the pending question's missing slots this message fills — each read by its slot
    type's own reader, so the dialogue and the planner never disagree about what a message says."""
    from ..request_context import now_kst

    out = []
    now = now_kst()
    for slot in missing:
        st = table.slot(slot)
        if slot == "request" or (st is not None and "where" in st.facets):
            if place or region is not None or coordinates_in(text) or (deixis and state.place):
                out.append(slot)
            continue
        if st is None:
            continue
        if st.class_ in ("date", "month", "year", "time") or st.personal or st.class_ in ("count", "number"):
            read = READERS.get(st.reader) if st.reader else None
            if read is not None and read(ReadRequest(text, now, {"type": "string"}, slot, language, {}, st)) is not None:
                out.append(slot)
        elif st.class_ in ("product", "keyword", "text", "code", "identifier"):
            if content_words(text):
                out.append(slot)
    return out


def resolve(
    query: str, language: str, state: DialogueState, catalog: Any, retriever: Any, *,
    view: str | None = None, top_k: int = 5, filters: dict | None = None,
) -> Frame:
    """Read ``query`` against ``state``; run retrieval; return what the planner should see."""
    text = _fillers(query.strip()) or query
    text = _not_this().sub(" ", text).strip() or text
    topic_vocab = topic_vocabulary(catalog)
    deixis = has_deixis(text)
    anchored = find_place(text, language, topic_vocab)
    region = find_region(text)
    topics = topic_words(dates.without_time_words(text), topic_vocab)
    new_time = _names_time(text, language)
    carried = state.carried_slots()

    # Retrieval on the message as written (personal data removed by the caller's view).
    context = frozenset(table.expand(set(carried)))
    if coordinates_in(text) is not None:  # the message types a point itself
        context |= table.slot_table().of_class("coordinates")
    view = (view or query).strip()
    view = _fillers(view) or view
    view = _not_this().sub(" ", view).strip() or view
    found_raw = retriever.search(view, top_k=top_k, filters=filters, context_slots=context)
    named_place = anchored
    if named_place is None and not deixis:
        named_place = bare_place(without_personal(dates.without_time_words(text)), language, topic_vocab)
        if named_place and not has_place_suffix(named_place.split()[0]):
            named_place = None  # only a word shaped as a place (…공원, …시장, …대) is read as one here
        elif named_place:
            named_place = named_place.split()[0]
    if not found_raw and named_place and named_place in view:
        # The place the message names is where, not what (「대왕암공원 주변 응급실 있어?」, 「모레 첨성대
        # 날씨」): a name no adapter's text holds counts against retrieval's coverage, so the request
        # is read again without the words that hold it; the planner still reads the place from the
        # message.
        rest = " ".join(w for w in view.split() if named_place not in w)
        if rest.strip():
            found_raw = retriever.search(rest, top_k=top_k, filters=filters, context_slots=context)
    if not found_raw and topics and (state.place is not None or state.last_intent is not None):
        # An elliptical new topic (「그 근처 병원은?」) read as the request it stands for: the
        # topic words at the carried place.
        found_raw = retriever.search("근처 " + " ".join(topics) if language == "ko" else " ".join(topics) + " nearby",
                                     top_k=top_k, filters=filters, context_slots=context)
    found = [c.model_dump() if hasattr(c, "model_dump") else dict(c) for c in found_raw]
    top = found[0] if found else None

    def score_of(adapter_id: str) -> float:
        return next((float(c["score"]) for c in found if c["adapter_id"] == adapter_id), 0.0)

    # ---- 0. a bare yes or no answers the engine's question (input or consent) and nothing else
    reply = yes_or_no(query)
    if reply is not None and (reply == "thanks" or state.pending is None):
        # Thanks, or a yes/no when nothing was asked: an acknowledgement, never a request to run
        # the last lookup again.
        return Frame("ack", [], dict(carried), Hints("ack"), reason="an acknowledgement")
    if reply is not None and state.pending is not None and state.pending.adapter_id in catalog.adapters:
        target = catalog.get(state.pending.adapter_id)
        if reply == "no":
            return Frame("decline", [_candidate(target)], dict(carried), Hints("decline", pinned=target.id),
                         reason="the citizen said no to the engine's question")
        hints = Hints("answer", carried=_usable(target, state.pending.arguments, drop_place=False, drop_time=False),
                      references=dict(state.references), pinned=target.id)
        return Frame("answer", _pin(found, target, top_k), dict(carried), hints,
                     reason="yes to the engine's question")

    # ---- 1. an answer to the engine's own question
    pending = state.pending if state.pending and state.pending.kind == "input" else None
    if pending and pending.adapter_id in catalog.adapters:
        target = catalog.get(pending.adapter_id)
        own_vocab = adapter_vocabulary(target) | topic_vocab
        place = anchored or (None if deixis else bare_place(without_personal(dates.without_time_words(text)), language, own_vocab))
        fills = _fills(pending.missing, text, language, place, region, deixis, state)
        own_topics = [w for w in topics if in_vocabulary(w.lower(), adapter_vocabulary(target))]
        other_better = (
            top is not None and top["adapter_id"] != target.id and bool(topics) and not own_topics
            and float(top["score"]) >= CLEARLY_NEW * max(score_of(target.id), 1e-9)
        )
        # A message that clearly asks for another service is a new request — unless it gives what
        # was asked for beyond a place (a name, a date, a drug): 「이름은 최현우, 1990-05-14」
        # answers the question even though 「이름」 is another service's word. A place alone given
        # with another service's request (「부산 기상특보 있어?」) answers that request.
        answers = [f for f in fills if not table.has_facet(f, "where") and f != "request"]
        if answers or not other_better:
            new_place = bool(place or region) and not deixis
            # 「울산이요」 answering 「어느 시·도요?」 after 「중구 응급실」: the answer completes the place
            # asked about, so what the request already said of it (중구) stays.
            completes = bool(pending.missing) and all(table.has_facet(s, "where") for s in pending.missing)
            slots = {} if new_place else dict(carried)
            hints = Hints("answer", place=place if new_place else (state.place.name if state.place and deixis else None),
                          carried=_usable(target, pending.arguments, drop_place=new_place and not completes, drop_time=False),
                          references=dict(state.references), pinned=target.id)
            return Frame("answer", _pin(found, target, top_k), slots, hints, new_place=new_place,
                         new_time=new_time, deixis=deixis, topic_words=topics,
                         reason=f"fills {fills}" if fills else "no other service fits better")

    last = state.last_intent if state.last_intent and state.last_intent.adapter_id in catalog.adapters else None
    place_named = bool(anchored or region) and not deixis
    if last is None:
        hints = Hints("new", place=None, references=dict(state.references))
        slots = {} if place_named else dict(carried)
        return Frame("new", found, slots, hints, new_place=place_named, new_time=new_time,
                     deixis=deixis, topic_words=topics, reason="no earlier intent")

    last_m = catalog.get(last.adapter_id)
    # ---- 2. an elliptical follow-up: nothing of its own says *what*, so the topic carries
    if not topics:
        # 「내일은?」 after a current observation: the topic carries, the adapter that serves days
        # takes over (a "now" service cannot answer another day; see ``_serves_days``).
        asked_m = last_m
        last_m = _for_another_day(text, last_m, found, catalog, language, context)
        bare = anchored or (None if deixis else bare_place(without_personal(dates.without_time_words(text)), language, topic_vocab | adapter_vocabulary(last_m)))
        content = _content_fields(last_m)
        # A bare name replaces the slot of the last intent it fits: a place where the intent has a
        # place (「광주는?」), else the thing asked about (「게보린은?」 after a drug question).
        new_value = bool(bare) and not anchored and region is None and bool(content) and (
            not _has_place(last_m) or not _looks_like_place(bare or ""))
        if not new_value and not bare and not anchored and region is None and not deixis and content:
            # 「경리는?」 after a job search, 「바리스타는?」: a noun with its topic particle is the
            # new value of what was asked about, even when no adapter's hints hold it.
            new_value = _names_new_value(text)
        new_place = bool(bare or region or coordinates_in(text)) and not deixis and not new_value
        # 「세 곳만 보여줘」 after a pharmacy search: a count for the last intent, nothing of its own.
        refines = count_in(text) is not None and _takes_class(last_m, "count")
        if new_place or new_value or new_time or deixis or refines or not found:
            slots = _kept_slots(carried, text) if new_place else dict(carried)
            usable = _usable(last_m, last.arguments, drop_place=new_place, drop_time=new_time, source=asked_m)
            if new_value:
                usable = {k: v for k, v in usable.items() if k not in content}
            hints = Hints("followup", place=bare if new_place else (state.place.name if state.place and deixis else None),
                          carried=usable, references=dict(state.references), pinned=last_m.id)
            return Frame("followup", _pin(found, last_m, top_k), slots, hints, new_place=new_place,
                         new_time=new_time, deixis=deixis, topic_words=topics,
                         reason="no topic words: the last intent carries")

    # ---- 3. a topic of its own: retrieval decides; the carried topic wins only a near tie
    if found and top is not None and top["adapter_id"] != last_m.id and score_of(last_m.id) >= NEAR_TIE * float(top["score"]) and not place_named:
        found = _pin(found, last_m, top_k)
        top = found[0]
    same = top is not None and top["adapter_id"] == last_m.id
    slots = _kept_slots(carried, text) if place_named else dict(carried)
    hint_place = None
    if not place_named and state.place is not None and (deixis or not anchored):
        hint_place = state.place.name or _region_text(state.place)
    if same:
        hints = Hints("followup", place=hint_place if not place_named else None,
                      carried=_usable(last_m, last.arguments, drop_place=place_named, drop_time=new_time,
                                      drop_topic=True),
                      references=dict(state.references), pinned=last_m.id)
        return Frame("followup", found, slots, hints, new_place=place_named, new_time=new_time,
                     deixis=deixis, topic_words=topics, reason="same service as the last intent")
    kind: Kind = "switch" if (deixis or not place_named) and found else "new"
    # The time the last question named carries to the new topic, by slot type (its month is the
    # new service's month), unless the message names another: a switch keeps it, a new request
    # only when it points back at it (「같은 달」, 「그 해」). A switch keeps the carried slot types
    # too (where it is about), unless the message names its own place.
    keep_time = top is not None and not new_time and (kind == "switch" or _points_back_in_time(text))
    keep_where = top is not None and kind == "switch" and not place_named
    hints = Hints(kind, place=hint_place if kind == "switch" and deixis else None,
                  carried=_time_for(last_m, last.arguments, catalog.get(top["adapter_id"]), when=keep_time,
                                    where=keep_where) if top is not None else {},
                  references=dict(state.references))
    return Frame(kind, found, slots, hints, new_place=place_named, new_time=new_time, deixis=deixis,
                 topic_words=topics, reason="a topic of its own")


def _names_new_value(text: str) -> bool:
    """The message ends in a noun with its topic particle that is a content word (no time, no
    place, no request word): 「경리는?」, 「그럼 바리스타는?」 — never 「내일은?」 or 「그건?」."""
    ws = grammar.eojeols(dates.without_time_words(text))
    if not ws:
        return False
    noun = grammar.clause_final_topic(ws[-1])
    return noun is not None and noun in content_words(" ".join(ws))


def _takes_class(m: Any, cls: str) -> bool:
    """Some input field of ``m`` has a slot type of class ``cls`` (registry/_slots)."""
    return any(isinstance(p, dict) and (st := table.slot_of(p)) is not None and st.class_ == cls
               for p in m.input_schema.get("properties", {}).values())


def _serves_days(m: Any) -> bool:
    """The adapter answers for a chosen day: it takes a date, or its rows are day-indexed (x-day)."""
    from ..understand.days_asked import day_fields

    props = m.input_schema.get("properties", {})
    return any(isinstance(p, dict) and (st := table.slot(p.get("x-slot"))) is not None and st.class_ == "date"
               for p in props.values()) or day_fields(m)[0] is not None


def _for_another_day(text: str, m: Any, found: list[dict[str, Any]], catalog: Any,
                     language: str = "ko", carried: frozenset[str] = frozenset()) -> Any:
    """``m``, or — when the message names a day other than today and ``m`` cannot serve one — the
    adapter of the same domain and primitive that can. Retrieval's picks come first; among the
    rest, one that can run on what the conversation carries (runtime/retrieve/runnable.py) and
    that is located as ``m`` is (the same ``requires``: a point stays a point) goes before one that
    would first ask for another kind of place: 「내일은?」 after a reading near a station asks for
    the forecast at that point, not for a region-wide service that asks which 시·도."""
    from ..request_context import now_kst
    from ..retrieve.runnable import lacks
    from ..understand.days_asked import asked_days

    now = now_kst()
    if _serves_days(m) or not [d for d in asked_days(text, now) if d != now.date()]:
        return m
    ranked = [c["adapter_id"] for c in found] + sorted(catalog.adapters)
    serving = []
    for aid in dict.fromkeys(ranked):
        other = catalog.adapters.get(aid)
        if other is not None and other.id != m.id and other.domain == m.domain and other.primitive == m.primitive \
                and set(other.requires) <= set(m.requires) | {"coordinates"} and _serves_days(other):
            serving.append(other)
    if not serving:
        return m
    picked = {c["adapter_id"] for c in found}
    return min(serving, key=lambda o: (o.id not in picked, bool(lacks(o, catalog, text, language, carried)),
                                       set(o.requires) != set(m.requires)))  # min is stable: first wins ties


def _content_fields(m: Any) -> set[str]:
    """Fields holding *what* is asked about in the citizen's own words (a drug, a keyword)."""
    props = m.input_schema.get("properties", {})
    return {f for f, p in props.items() if table.has_facet(p.get("x-slot"), "subject") and not table.has_facet(p.get("x-slot"), "where")}


def _has_place(m: Any) -> bool:
    props = m.input_schema.get("properties", {})
    where = table.names_with("where")
    return bool(set(m.requires) & where) or any(p.get("x-slot") in where for p in props.values())


def _looks_like_place(text: str) -> bool:
    return any(w in known_places() or has_place_suffix(w) for w in text.split()) or find_region(text) is not None


def _region_text(place: Any) -> str | None:
    full = place.region_value("full")
    if full:
        return str(full)
    sido = place.region_value("sido")
    if sido:
        region = find_region(str(sido))
        return region.sido_full if region else str(sido)
    return None


def _kept_slots(carried: dict[str, Any], text: str) -> dict[str, Any]:
    """What of the carried place a message naming a new place keeps: the 시·도, when the new place
    is only a 시·군·구 name several 시·도 have (「동구는?」 after 울산 남구 is 울산 동구)."""
    from ..understand.regions import is_region_name

    words = " ".join(w for w in grammar.eojeols(text) if is_region_name(w))
    if not words or find_region(words) is not None:
        return {}
    return {k: v for k, v in carried.items() if (st := table.slot(k)) is not None and st.region_level == "sido"}


def _points_back_in_time(text: str) -> bool:
    low = text.lower()
    return any(w in low for w in vocab.fw("time_pointers"))


def _time_for(last_m: Any, arguments: dict[str, Any], target: Any, *, when: bool = True,
              where: bool = False) -> dict[str, Any]:
    """The last intent's arguments a new topic keeps, under the fields of ``target`` that have the
    same slot type: its time (date, month, year … — the same month for another service) and every
    slot type the session carries (the region of a job search for the training courses after it),
    each in its slot's own spelling (a coded value as its label, ``_canonical``) so the new
    field's reader writes it in its own code."""
    if target is None:
        return {}
    last_props = last_m.input_schema.get("properties", {})
    by_slot: dict[str, Any] = {}
    for name, value in (arguments or {}).items():
        slot = last_props.get(name, {}).get("x-slot")
        st = table.slot(slot)
        if st is None or st.personal or not ((when and "when" in st.facets) or (where and st.carried)):
            continue
        by_slot.setdefault(slot, _canonical(last_props.get(name, {}), value))
    out = {}
    for name, prop in target.input_schema.get("properties", {}).items():
        slot = prop.get("x-slot") if isinstance(prop, dict) else None
        if slot in by_slot:
            out[name] = by_slot[slot]
    return out


def _usable(m: Any, arguments: dict[str, Any], *, drop_place: bool, drop_time: bool,
            drop_topic: bool = False, source: Any = None) -> dict[str, Any]:
    """The last intent's arguments a follow-up may reuse: never personal ones; place ones only
    when the place is unchanged, time ones only when the time is; with ``drop_topic`` (the message
    restates the topic in its own words) only place and time carry. ``source``: the adapter the
    arguments were sent to, when the follow-up goes to another (``m``): its fields say what they
    mean and how its codes read."""
    props = (source or m).input_schema.get("properties", {})
    out = {}
    for name, value in (arguments or {}).items():
        slot = props.get(name, {}).get("x-slot", name)
        if table.is_personal(slot):
            continue
        where, when = table.has_facet(slot, "where"), table.has_facet(slot, "when")
        if where and drop_place:
            continue
        if when and drop_time:
            continue
        if drop_topic and not where and not when:
            continue
        out[name] = _canonical(props.get(name, {}), value)
    return out


def _canonical(prop: dict[str, Any], value: Any) -> Any:
    """A carried value in its slot's own spelling, not one upstream's code: a code the field's
    x-enum-labels names carries as its label (work24's 「11000」 and HRD's 「11」 are both
    서울특별시), and the next adapter's field reads the label back into its own code through the
    slot type's reader (runtime/plan/offline.py)."""
    labels = prop.get("x-enum-labels") if isinstance(prop, dict) else None
    if isinstance(labels, dict) and not isinstance(value, bool) and str(value) in {str(k) for k in labels}:
        return next(str(v) for k, v in labels.items() if str(k) == str(value))
    return value


__all__ = ["Frame", "Hints", "resolve", "topic_words", "topic_vocabulary"]
