"""The embedded offline planner: deterministic, no model server, no network.

It reads only the narrowed candidates and the manifests' declarations: ``x-slot`` on input fields
picks the slot type (registry/_slots/) and so its shared reader (runtime/understand/readers.py), ``requires``/``provides`` chain ``locate`` → ``find``, and when a
required slot can be filled neither from the request, the session nor a locate adapter, it asks
(``needs_input``) instead of guessing. There are no per-adapter rules in this file.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from typing import Any

from ummaya.model.manifest import Manifest

from ..request_context import now_kst
from ummaya.wire.schemas import validator
from ..understand import names as nm
from ..understand import places as pl
from ..understand import table as slot_table
from ..understand.cues import implied_by, personal_given, takes_class, unasked_step, values_named
from ..understand.labels import typed
from ..understand.numbers import coordinates_in
from ..understand.readers import READERS, ReadRequest
from ..understand.regions import find_region
from ..understand.regions import is_region_name as find_region_only
from .protocol import Action, PlanContext, ToolCall


_vocab_cache: dict[int, tuple[Manifest, set[str]]] = {}


def _vocabulary(m: Manifest) -> set[str]:
    hit = _vocab_cache.get(id(m))
    if hit is None or hit[0] is not m:
        hit = (m, _build_vocabulary(m))
        _vocab_cache[id(m)] = hit
    return hit[1]


def _build_vocabulary(m: Manifest) -> set[str]:
    vocab: set[str] = set()
    for text in (*m.search_hints.ko, *m.search_hints.en, m.title.ko, m.title.en):
        for w in text.split():
            w = nm.clean(w)
            if len(w) >= 2:
                vocab.add(w.lower())
    return vocab


class Reading:
    """What every reader of this turn shares: the place span, the region, typed coordinates, the
    services the candidates name, the dialogue's carried arguments and references."""

    def __init__(self, ctx: PlanContext, text: str):
        hints = ctx.dialogue
        services = frozenset().union(*(_vocabulary(m) for m in ctx.candidates)) if ctx.candidates else frozenset()
        # A word a candidate's closed vocabulary reads (신경과 → a specialty) is that field's value,
        # never the place a locate step searches (「신경과 어디 있어 근처」 names no place).
        services = services | _code_words(ctx.candidates, text)
        self.services: frozenset[str] = frozenset(services)  # words naming the candidate services: never a place
        # 「동구는?」 after a turn about 울산: the 시·군·구 is read inside the region the conversation is in.
        self.region = pl.region_within(text, ctx.slots)
        self.region_fields = False  # set per adapter by SlotFiller.fill
        self.place = pl.find_place(text, ctx.language, services) or (hints.place if hints is not None else None)
        if self.region is None and self.place and hints is not None and hints.place == self.place:
            self.region = find_region(self.place)
        self.coords = coordinates_in(text)
        self.carried_args: dict[str, Any] = dict(hints.carried) if hints is not None else {}
        self.references: dict[str, str] = dict(hints.references) if hints is not None else {}
        self.vocab: set[str] = set()


class SlotFiller:
    """Fills one adapter's arguments from the request, carried slots and evidence."""

    def __init__(self, ctx: PlanContext, now: dt.datetime):
        self.ctx = ctx
        self.text = ctx.request
        self.now = now
        self.reading = Reading(ctx, self.text)
        self.region = self.reading.region
        self.place = self.reading.place
        self.services = self.reading.services
        self.carried = self.reading.carried_args
        self.references = self.reading.references

    def fill(self, m: Manifest, *, chain: bool = False) -> tuple[dict[str, Any], list[str]]:
        """``chain``: filling a locate adapter only as the means to another adapter's end; its
        place then has to be one the citizen actually named, never leftover words."""
        props: dict[str, Any] = m.input_schema.get("properties", {})
        required = set(m.input_schema.get("required", []))
        # Fields one of which must be present (anyOf/oneOf alternatives) are worth a guess too.
        wanted = required | {
            f for key in ("anyOf", "oneOf") for alt in m.input_schema.get(key, []) for f in alt.get("required", [])
        }
        args: dict[str, Any] = {}
        missing: list[str] = []
        self.reading.vocab = _vocabulary(m)
        # Whether this adapter takes the region the request names in fields of its own: then the
        # region's words are that field's, never its keyword's (runtime/understand/names.py).
        self.reading.region_fields = any(
            (st := slot_table.slot_of(p)) is not None and st.class_ == "region" for p in props.values()
        )
        for name, prop in props.items():
            st = slot_table.slot_of(prop, "free_text")
            if st is None:
                continue  # undeclared (the build refuses it): nothing reads it
            if name not in wanted and st.fill_optional == "never" and not prop.get("enum"):
                # A value the citizen quotes is said on purpose: a search word, or a free-text
                # field's sentence (「신고 내용은 '신호등이 고장났어요'야」).
                said = (nm.quoted(self.text) if st.class_ == "keyword"
                        else nm.quoted(self.text, int(prop.get("maxLength") or 500)) if st.class_ == "text" else None)
                carried = fit(prop, said) if said is not None else self.carried_value(st, name, prop)
                if carried is not None:  # a word the citizen quoted, or the filter the last intent used
                    args[name] = carried
                continue
            if chain and "span" in st.facets and st.class_ != "stop":
                value = self.named_place()
            else:
                value = self.extract(st, name, prop, name in wanted)
            value = fit(prop, value)
            if value is None and name in self.carried:
                # Kept from the last intent (a follow-up changes only what it names).
                value = self.carried_value(st, name, prop)
            if value is None and name in self.references and "where" not in st.facets:
                # A name an earlier step resolved (the benefit just checked, the drug asked about).
                value = fit(prop, self.references[name])
            if value is not None:
                args[name] = value
            elif name in required:
                missing.append(name)
        if not missing:
            # Alternatives the fields alone cannot express (anyOf): ask for the first unmet one.
            if not _validator(m.input_schema).is_valid(args):
                # In the order the schema declares the alternatives (a title before an ISBN).
                alternatives = [f for key in ("anyOf", "oneOf") for alt in m.input_schema.get(key, [])
                                for f in alt.get("required", [])]
                unmet = [f for f in dict.fromkeys(alternatives) if f not in required and f not in args]
                missing.extend(unmet[:1] or ["request"])
        return args, missing

    def carried_value(self, st: Any, name: str, prop: dict[str, Any]) -> Any:
        """The last intent's value of ``name`` in this field's form. The dialogue carries a coded
        value as its label (runtime/dialogue/resolve.py): the field's own x-enum-labels, else the
        slot type's reader reading the label, give this upstream's code (서울특별시 → 11 or 11000)."""
        value = self.carried.get(name)
        got = fit(prop, value)
        if got is not None or not isinstance(value, str) or not value:
            return got
        labels = prop.get("x-enum-labels") or {}
        code = next((k for k, v in labels.items() if str(v) == value), None)
        if code is not None:
            return fit(prop, typed(code, prop.get("enum") or []))
        read = READERS.get(st.reader) if st is not None and st.reader else None
        if read is None or st.class_ in ("keyword", "text", "product", "personal"):
            return None
        try:
            return fit(prop, read(ReadRequest(value, self.now, prop, name, self.ctx.language, {}, st, None, False)))
        except Exception:  # a reader that cannot read the label says nothing
            return None

    def extract(self, st: Any, name: str, prop: dict[str, Any], wanted: bool = False) -> Any:
        """The field's value from its slot type's shared reader (registry/_slots/ names it)."""
        if prop.get("enum") and st.fill_optional == "never":
            return self._enum_in_text(prop)
        read = READERS.get(st.reader) if st.reader else None
        if read is None:  # a derived slot with no reader: the session or a locate step only
            return self.ctx.slots.get(st.name)
        return read(ReadRequest(self.text, self.now, prop, name, self.ctx.language, dict(self.ctx.slots), st,
                                self.reading, wanted))

    def named_place(self) -> str | None:
        """The place a chain starts from: the anchored span, else the place words of the message
        (「첨성대 내일 비 와?」 → 첨성대), else the region it names."""
        if self.place:
            if (self.region is not None and self.region.sigungu and find_region_only(self.place)
                    and self.place in self.region.text() and self.place != self.region.text()):
                return self.region.text()  # 「동구는?」 in a conversation about 울산: 울산광역시 동구
            return self.place
        bare = pl.bare_place(pl.without_personal(self.text), self.ctx.language, self.services)
        if bare and find_region_only(bare) and (self.region is None or self.region.text() == bare):
            return None if self.region is None else self.region.text()  # 「중구」 alone: which 시·도? ask
        if bare and pl.looks_like_place(bare) and (self.region is None or not find_region_only(bare)):
            return bare
        if self.region:
            return self.region.text()
        return None

    def _enum_in_text(self, prop: dict[str, Any]) -> Any:
        """A closed vocabulary named in the request: the value, its label, or a word the value
        starts with (「카카오 인증」 → 카카오톡)."""
        low = self.text.lower()
        words = {nm.clean(w).lower() for w in self.text.split()}
        labels = {str(k): str(v) for k, v in (prop.get("x-enum-labels") or {}).items()}
        named, longest = None, 0
        for value in prop["enum"]:
            for n in (str(value).lower(), labels.get(str(value), "").lower()):
                # A code of digits names itself only as a whole word (「200명」 does not say 「2」), and
                # the longest name said wins (「외부업체 화장」 over 「화장」).
                if n and (n in words if n.isdigit() else n in low) and len(n) > longest:
                    named, longest = value, len(n)
        if named is not None:
            return named
        for w in self.text.split():
            w = nm.clean(w)
            if len(w) >= 2:
                for value in prop["enum"]:
                    if str(value).lower().startswith(w.lower()):
                        return typed(value, prop["enum"])
        return None


_stripped: dict[int, tuple[Any, Any]] = {}


def _validator(schema: dict[str, Any]) -> Any:
    """A cached validator for a schema without its x-* annotations (keyed by the schema object)."""
    hit = _stripped.get(id(schema))
    if hit is None or hit[0] is not schema:
        hit = (schema, validator(_schema_only(schema)))
        _stripped[id(schema)] = hit
    return hit[1]


def _schema_only(schema: Any) -> Any:
    """A JSON Schema without the x-* annotations (the planner's own vocabulary)."""
    if isinstance(schema, dict):
        return {k: _schema_only(v) for k, v in schema.items() if not k.startswith("x-")}
    if isinstance(schema, list):
        return [_schema_only(v) for v in schema]
    return schema


def fit(prop: dict[str, Any], value: Any) -> Any:
    """The value in the form this field accepts, or None — a planner never proposes arguments it
    can see are invalid. Administrative codes are hierarchical (2-digit 시도, 5-digit 시군구,
    10-digit 법정동), so a field may declare ``x-code-slice: [start, end]`` to take its part of a
    longer code a locate adapter resolved."""
    if value is None:
        return None
    check = _validator(prop)
    if check.is_valid(value):
        return value
    cut = prop.get("x-code-slice")
    if cut and isinstance(value, str) and value.isdigit():
        part = value[cut[0]:cut[1]]
        if check.is_valid(part):
            return part
    if isinstance(value, str) and prop.get("format") == "date":
        digits = re.sub(r"\D", "", value)
        if len(digits) == 8:
            iso = f"{digits[:4]}-{digits[4:6]}-{digits[6:]}"
            if check.is_valid(iso):
                return iso
    if prop.get("type") == "integer" and isinstance(value, str) and value.isdigit():
        return fit({k: v for k, v in prop.items() if k != "x-code-slice"}, int(value))
    if prop.get("type") == "integer" and isinstance(value, int) and not isinstance(value, bool):
        # A count above the field's maximum asks for as many as the upstream gives.
        top = prop.get("maximum")
        if isinstance(top, int) and value > top and check.is_valid(top):
            return top
    return None


class OfflinePlanner:
    name = "offline"

    def __init__(self, clock: Callable[[], dt.datetime] = now_kst):
        self.clock = clock

    async def plan(self, ctx: PlanContext, on_delta: Callable[[str], None] | None = None) -> Action:
        if not ctx.candidates:
            return Action(kind="ask", text="", missing=["request"])
        target = self.choose_target(ctx)
        done = {e.adapter_id: e for e in ctx.evidence}
        if target.id in done:
            return Action(kind="answer")
        filler = SlotFiller(ctx, self.clock())
        target = self.for_the_category(target, ctx, filler)
        target = self.for_the_topic(target, ctx, filler)
        if target.id in done:
            return Action(kind="answer")
        args, missing = filler.fill(target)
        if not missing:
            return Action(kind="call", calls=[ToolCall(f"call_{ctx.step}_0", target.id, args)])
        for provider in self.providers_for(target, missing, ctx, done):
            pargs, pmissing = filler.fill(provider, chain=True)
            if not pmissing:
                return Action(kind="call", calls=[ToolCall(f"call_{ctx.step}_0", provider.id, pargs)])
        runnable = self.runnable_instead(target, ctx, filler, done)
        if runnable is not None:
            if runnable[0].id in done:
                return Action(kind="answer")
            return Action(kind="call", calls=[ToolCall(f"call_{ctx.step}_0", runnable[0].id, runnable[1])])
        props = target.input_schema.get("properties", {})
        slots = sorted({slot_table.asked_as(props.get(f, {}).get("x-slot", f)) for f in missing})
        return Action(kind="ask", missing=slots, calls=[ToolCall("", target.id, args)])

    @staticmethod
    def choose_target(ctx: PlanContext) -> Manifest:
        top = ctx.candidates[0]
        given = personal_given(top, ctx.request, language=ctx.language)
        if not given:
            # The citizen gives their own data (a name and a date of birth) that a close candidate
            # takes and the first does not: that candidate is the service they mean. A submission
            # only when the request asks to submit (신청, apply — the retriever's intent cues);
            # otherwise a check, never a step more protected than asked for.
            implied = implied_by(ctx.request)
            for m in ctx.candidates[1:4]:
                if m.primitive == "send" and "send" not in implied:
                    continue
                if len(personal_given(m, ctx.request, language=ctx.language)) >= 2:
                    return m
        if unasked_step(top, ctx.request) and len(given) < 2:
            # The first candidate is a protected step the request does not ask for (an application
            # for 「첫만남이용권은 어떤 제도야?」), nor gives it the citizen's own data: a close plain
            # candidate that reads the value the request names answers it.
            for m in ctx.candidates[1:3]:
                if (not unasked_step(m, ctx.request) and m.permission.consent is None
                        and values_named(m, ctx.request, codes=False)):
                    return m
        if top.primitive != "locate" and not values_named(top, ctx.request, codes=False):
            # The request names a value of a close candidate's own vocabulary (에너지바우처 for the
            # welfare search) and none of the first one's: that candidate is what it asks for.
            # Never a step more protected than the first (a consent notice, a submission): a
            # value named is no request to apply (「교육급여 조건」 is no application).
            # A first candidate with a field of the value's own class (a keyword) reads it itself.
            for m in ctx.candidates[1:3]:
                if m.primitive == top.primitive and m.permission.consent is None:
                    named = values_named(m, ctx.request, codes=False)
                    if named and (not takes_class(top, named)
                                  or (not _vocabulary_fields(top, named) and not _names_hint(top, ctx.request))):
                        # The first one reads that class only as a word of no vocabulary, and the
                        # request asks none of its own questions (「부모급여가 어떤 제도야?」 names
                        # no document or application step of the benefit detail): the service
                        # whose declared vocabulary holds the term is the one asked about.
                        return m
        if top.primitive == "locate" and coordinates_in(ctx.request) is not None and not top.requires:
            # Coordinates typed: a find that needs them is the end, no place to look up first.
            for m in ctx.candidates[1:4]:
                if m.primitive != "locate" and set(m.requires) & _provided(top):
                    return m
        if top.primitive != "locate" or not pl.find_place(ctx.request, ctx.language):
            return top
        # 「X 근처 Y」: a locate adapter ranked first is the means, the find that needs its
        # output is the end.
        for m in ctx.candidates[1:3]:
            if m.primitive != "locate" and set(m.requires) & _provided(top):
                return m
        return top

    @staticmethod
    def for_the_category(target: Manifest, ctx: PlanContext, filler: SlotFiller) -> Manifest:
        """The first candidate would search its free keyword for nothing but a word that a close
        candidate's closed vocabulary declares as one of its categories' official labels
        (x-enum-labels: 「청년 지원 정책 뭐 있어?」 → 청년 is the 생애주기 청년): that candidate
        files the request under the category the upstream itself keeps, instead of a name search
        for the word. A synonym (노인, 어르신) is no official label: it stays a search word."""
        from ..understand.labels import named_terms, names_official_label

        if target.primitive == "locate" or target.id != (ctx.candidates[0].id if ctx.candidates else None):
            return target
        props = target.input_schema.get("properties") or {}
        free = [n for n, p in props.items()
                if (st := slot_table.slot_of(p)) is not None and st.class_ == "keyword" and not st.vocabulary]
        if len(free) != 1 or free[0] not in set(target.input_schema.get("required", [])):
            return target
        args, _missing = filler.fill(target)
        said = args.get(free[0])
        if not isinstance(said, str) or " " in said or _named_as_topic(ctx.request, said):
            return target
        for m in ctx.candidates[1:3]:
            if m.primitive != target.primitive or m.permission.consent is not None or unasked_step(m, ctx.request):
                continue
            for prop in (m.input_schema.get("properties") or {}).values():
                st = slot_table.slot_of(prop)
                if st is None or st.class_ != "code" or not st.vocabulary:
                    continue
                if any(label.lower() == said.lower() and names_official_label(ctx.request, prop, label)
                       for _n, label in named_terms(ctx.request, st.vocabulary)):
                    return m
        return target

    @staticmethod
    def for_the_topic(target: Manifest, ctx: PlanContext, filler: SlotFiller) -> Manifest:
        """The converse of ``for_the_category``: the first candidate files the request under a
        category a word of the request stands for, but the citizen names that word as the topic
        to search for (「어르신 관련 정부 지원금」, topic_markers), and a close candidate searches
        exactly that word by name: the name search is what was asked."""
        if target.primitive == "locate" or target.id != (ctx.candidates[0].id if ctx.candidates else None):
            return target
        if _free_keyword(target) is not None:
            return target
        for m in ctx.candidates[1:3]:
            if m.primitive != target.primitive or m.permission.consent is not None or unasked_step(m, ctx.request):
                continue
            field = _free_keyword(m)
            if field is None or field not in set(m.input_schema.get("required", [])):
                continue
            args, missing = filler.fill(m)
            said = args.get(field)
            if not missing and isinstance(said, str) and " " not in said and _named_as_topic(ctx.request, said):
                return m
        return target

    @staticmethod
    def runnable_instead(
        target: Manifest, ctx: PlanContext, filler: SlotFiller, done: dict[str, Any]
    ) -> tuple[Manifest, dict[str, Any]] | None:
        """The first candidate cannot run on what the request, the session and the locate steps
        give, and a close candidate of the same service runs on the very values the citizen typed
        (「일요일에 여는 약국 위도 33.49 경도 126.53」: the day's pharmacy list wants a 시·도 nobody
        named, the nearby one takes the coordinates): that one answers instead of a question. Only
        a plain lookup of the same primitive and domain, never a protected step, and only when every
        field it requires comes from the citizen's own words (a structured value typed: coordinates)."""
        if not coordinates_in(ctx.request):
            return None
        for m in ctx.candidates[1:3]:
            if (m.primitive != target.primitive or m.domain != target.domain
                    or m.permission.consent is not None or unasked_step(m, ctx.request)):
                continue
            required = m.input_schema.get("required", [])
            props = m.input_schema.get("properties", {})
            if not required or not all(
                    (st := slot_table.slot_of(props.get(f, {}))) is not None and st.class_ == "coordinates"
                    for f in required):
                continue
            args, missing = filler.fill(m)
            if not missing:
                return m, args
        return None

    @staticmethod
    def providers_for(
        target: Manifest, missing: list[str], ctx: PlanContext, done: dict[str, Any]
    ) -> list[Manifest]:
        """Locate adapters among the candidates that provide a missing slot, not yet called."""
        props = target.input_schema["properties"]
        wanted = {props[f].get("x-slot", f) for f in missing}
        wanted |= {w for s in wanted if (w := slot_table.whole_of(s))}
        return [
            m for m in ctx.candidates
            if m.primitive == "locate" and m.id not in done and wanted & _provided(m)
        ]


def _free_keyword(m: Manifest) -> str | None:
    """The one field of ``m`` that takes a keyword of no declared vocabulary, if it has one."""
    free = [n for n, p in (m.input_schema.get("properties") or {}).items()
            if (st := slot_table.slot_of(p)) is not None and st.class_ == "keyword" and not st.vocabulary]
    return free[0] if len(free) == 1 else None


def _named_as_topic(text: str, word: str) -> bool:
    """``word`` is followed by a topic marker (「청년 관련 지원」, 「노인에 대한 혜택」): the citizen names
    it as what to search for (function_words.yaml topic_markers)."""
    from ..understand.vocab import fw

    markers = fw("topic_markers")
    ws = text.split()
    for i, w in enumerate(ws[:-1]):
        if nm.clean(w).lower() == word.lower() and ws[i + 1].strip(".,!?").lower() in markers:
            return True
    return False


def _code_words(candidates: list[Manifest], text: str) -> frozenset[str]:
    """The request's words (particles off, lower-case) that are a term of a closed vocabulary
    (class code) one of the candidates' fields reads, and no place the vocabularies know."""
    from ..understand.labels import terms_of

    vocabularies = {st.vocabulary for m in candidates for p in (m.input_schema.get("properties") or {}).values()
                    if (st := slot_table.slot_of(p)) is not None and st.class_ == "code" and st.vocabulary}
    if not vocabularies:
        return frozenset()
    said = {nm.clean(w).lower() for w in text.split()} - {""}
    names = {n.lower() for v in sorted(vocabularies) for label, ns in terms_of(v) for n in (label, *ns)}
    known = pl.known_places()
    return frozenset(w for w in said & names if w not in known)  # 해운대 (an ocean station) stays a place


def _vocabulary_fields(m: Manifest, classes: set[str]) -> bool:
    """Some field of ``m`` of one of ``classes`` reads a declared vocabulary."""
    return any((st := slot_table.slot_of(p)) is not None and st.class_ in classes and st.vocabulary
               for p in (m.input_schema.get("properties") or {}).values())


def _names_hint(m: Manifest, text: str) -> bool:
    """The request names one of ``m``'s own search hints, whole or every word of it (「정부 혜택」,
    「구비서류」, 「우리 동네 ⋯ 지원」 for 우리 동네 지원)."""
    low = re.sub(r"\s+", "", text.lower())
    said = {w.lower() for w in text.split()} | {nm.clean(w).lower() for w in text.split()}
    for hint in (*m.search_hints.ko, *m.search_hints.en):
        h = re.sub(r"\s+", "", hint.lower())
        if len(h) >= 2 and h in low:
            return True
        words = [nm.clean(w).lower() for w in hint.split()]
        if len(words) > 1 and all(w in said for w in words):
            return True
    return False


def _provided(m: Manifest) -> set[str]:
    return slot_table.expand(set(m.provides))
