"""Right adapter, or an honest way out: the turn's one scope decision.

Retrieval ranks by shared words, so a request for a service the registry does not have can land on
the nearest one: 「여권 재발급 신청해줘」 on the welfare application (both "apply"), 「실업급여」 on
the housing benefit (both "…급여"). Whether the turn may act on an adapter is decided here, once,
for every planner: on the candidates retrieval found (none at all: the way out at once, layer
``retrieve``) and on each proposed call or question (layer ``gate``, before the consent gate).
Every way out is the same stop — ``no_adapter`` — with one ``check`` event (``check: scope``) whose
``why`` says which evidence was missing (:data:`WHY`).

The decision consumes retrieval's signals; it does not rank again. Retrieval already held the best
candidate to its abstention rule (coverage, or text evidence from two words of the request:
runtime/retrieve/retriever.py), so a candidate it kept *fits* — a paraphrase that names no service
word (「이번 선거 때 도장 찍으러 갈 장소」) is what that rule is for. What the engine adds is what
retrieval cannot see:

- the conversation already chose the adapter (its pinned intent continues, or the citizen
  consented to it) → it goes ahead;
- the request names an official channel's service (registry/_channels/) that the adapter does not
  answer → ``other_channel``: what UMMAYA cannot do, and where the citizen can. The adapter answers
  a channel's service when it declares the channel's phrase itself (its title, hints or service
  words: 「대전 1호선」 in the Daejeon metro's hints, 「행복주택」 in the rental notices'), names its
  own service at least as specifically, or covers the whole request;
- it would ask for consent and the request does not name its service → ``consent_unnamed``: a
  near miss never reaches another service's consent notice. Retrieval's first candidate covering
  every content word of the request (「how do I pay a speeding fine」 at the fine payment) is no near
  miss: the request is that service said in other words;
- after an emergency's number, an adapter outside the emergency's services → ``emergency_other``;
- on a new request, a candidate retrieval did not keep, offered only because the request names a
  citizen's word for a label of one of its code fields (a life stage in 「노트북 추천해줘 대학생용」,
  a country in "translate into Japanese") and not its service → ``label_only``. A product, a term
  of a keyword vocabulary (a known medicine) or one of the field's official labels named whole
  (「신경과 찾아줘」) is evidence of its own and goes ahead.

A locate adapter called on the way to another (「부산역 근처 응급실」 finds 부산역 first) is judged
by the candidates it serves, before its call: when none of them may go, neither does it. Retrieval
finding nothing is not always the end: a facility's own name (파라다이스호텔, 튼튼정형외과) is a name
no vocabulary can know, so the request is read again with the name standing as its kind
(:func:`names_aside`) before the way out.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ummaya.model.manifest import Manifest

from .. import compose as ans
from ..plan.protocol import ToolCall
from .log import TurnLog
from .values import Stop, TurnContext

# The stop every way out ends with, and what its check event's ``why`` may say.
REASON = "no_adapter"
WHY: dict[str, str] = {
    "retrieval_abstained": "retrieval found nothing in the registry that fits the request",
    "other_channel": "the request names another official channel's service",
    "consent_unnamed": "the adapter would ask for consent for a service the request does not name",
    "emergency_other": "after an emergency's number only a service it names, or its own, goes on",
    "label_only": "the request names only a label of the adapter's code field, not its service",
}


@dataclass(frozen=True)
class Verdict:
    """The scope decision on one adapter: ``go``, or the :data:`WHY` code of the way out."""

    go: bool
    why: str = ""
    channels: tuple[str, ...] = ()  # the channels the request names that the adapter does not answer


GO = Verdict(True)


def way_out(ctx: TurnContext, *, detail: str = "", layer: str | None = None) -> Stop:
    """The ``no_adapter`` stop: the channels the request names, else the general channel. An
    emergency request gets its own plain line instead (its number is already the first line)."""
    guidance = ctx.catalog.guidance if ctx.catalog is not None else None
    if guidance is None:
        return Stop(REASON, ans.compose_stop(REASON, ctx.language), detail, layer=layer)
    channels = guidance.channels_named(ctx.request)
    emergencies = guidance.emergencies_in(ctx.request)
    if emergencies and not channels:
        parts = [ans.Part("way_out", emergencies[0].cannot.get(ctx.language))]
    else:
        parts = ans.way_out_parts(channels, ctx.language, general=guidance.general,
                                  intent=guidance.intent_named(ctx.request))
    return Stop(REASON, ans.text_of(parts), detail, layer=layer, parts=parts)


def stop(ctx: TurnContext, log: TurnLog, verdict: Verdict, adapter_id: str = "", *, layer: str = "gate") -> Stop:
    """The way out for a verdict that does not go: its one check event, then the stop to raise."""
    message = WHY.get(verdict.why, verdict.why)
    if verdict.channels:
        message += f" ({', '.join(verdict.channels)})"
    log.emit("check", layer, check="scope", adapter_id=adapter_id, field="", reason=REASON, why=verdict.why,
             message=message, missing=[])
    return way_out(ctx, detail=f"{verdict.why}:{adapter_id}" if adapter_id else verdict.why, layer=layer)


def names_aside(request: str) -> str | None:
    """The request with the names of facilities it holds standing as their kind, or None when it
    holds none: 「해운대 파라다이스호텔 몇 성급이야?」 → 「해운대 호텔 …」, 「튼튼정형외과 몇 시까지 해?」 →
    「정형외과 …」; a complex named by its brand (「래미안 원베일리 청약 경쟁률」) → 「아파트 청약 경쟁률」
    (registry/_vocab/facility_names.yaml: the kinds' suffixes, and the word a kind's brands stand
    for). A name says *which* one, never *what* is asked: retrieval held its unknown words against
    the request's coverage, and the kind with the rest of the request is what decides its scope. A
    brand counts only at a word's start or end, and from three syllables (자이 of
    「자이언츠」, 현대 of 「현대자동차」 are other words)."""
    from ..understand import vocab
    from ..understand.facilities import facility_in

    text = request
    classes = vocab.load("facility_names").get("words") or {}
    for kind in [k[: -len("_suffixes")] for k in classes if k.endswith("_suffixes")]:
        suffixes = sorted(classes.get(f"{kind}_suffixes") or [], key=len, reverse=True)
        brands = [b for b in classes.get(f"{kind}_brands") or [] if len(b) >= 3]
        kind_word = " ".join(classes.get(f"{kind}_kind") or [])
        for _ in range(3):  # a request may name more than one
            name = facility_in(text, kind)
            if not name or name not in text:
                break
            glued = name.split(" ")[-1]
            if glued in suffixes:
                break  # a kind after a place word (해운대 호텔) names no one facility
            suffix = next((x for x in suffixes if glued.endswith(x) and len(glued) > len(x)), None)
            if suffix is not None:
                text = text.replace(glued, suffix)
            elif kind_word and _brand_word(name, brands):
                text = text.replace(name, kind_word)
            else:
                break
    text = " ".join(text.split())
    return text if text and text != " ".join(request.split()) else None


def _brand_word(name: str, brands: list[str]) -> bool:
    """``name`` holds one of ``brands`` as a word of its own, or at a word's start or end."""
    return any(w.startswith(b) or w.endswith(b) for w in name.split() for b in brands)


def abstain(ctx: TurnContext, log: TurnLog) -> Stop:
    """Retrieval found no candidate at all (and nothing the request names offered one)."""
    return stop(ctx, log, Verdict(False, "retrieval_abstained"), layer="retrieve")


def narrow(cands: Any, ctx: TurnContext, book: Any, log: TurnLog) -> Any:
    """The candidates the planner sees, without the protected ones the decision would turn away
    (``consent_unnamed``) below retrieval's best: 「Has the playground … passed its safety check?」
    keeps the playground check and loses the identity check that shares "check". Retrieval's best
    candidate stays whatever it is — the call on it is where the turn goes out."""
    if ctx.catalog is None or not getattr(cands, "ranked", None):
        return cands
    ranked = {r.get("adapter_id"): r for r in cands.ranked}
    best = max(cands.ranked, key=lambda r: float(r.get("score") or 0.0)).get("adapter_id")
    drop = [m.id for m in cands.manifests
            if m.id in ranked and m.id != best and m.permission.consent is not None
            and decide(m, cands.manifests, ranked, ctx, book, cands.named_coverage).why == "consent_unnamed"]
    if not drop:
        return cands
    log.emit("check", "retrieve", check="scope_candidates", adapter_id=",".join(drop), field="", reason="dropped",
             why="consent_unnamed", message=WHY["consent_unnamed"], missing=[])
    return replace(cands, ranked=[r for r in cands.ranked if r.get("adapter_id") not in drop],
                   manifests=[m for m in cands.manifests if m.id not in drop])


def check_scope(calls: list[ToolCall], cands: Any, ctx: TurnContext, book: Any, log: TurnLog) -> None:
    """Raise the way out for the first call the scope decision does not let go ahead."""
    if ctx.catalog is None:
        return
    candidates: list[Manifest] = cands.manifests
    ranked = {r.get("adapter_id"): r for r in getattr(cands, "ranked", []) or []}
    by_id = {m.id: m for m in candidates}
    for c in calls:
        m = by_id.get(c.adapter_id)  # a call outside the candidates is validation's to refuse
        if m is None:
            continue
        verdict = decide(m, candidates, ranked, ctx, book, getattr(cands, "named_coverage", 0.4))
        if not verdict.go:
            raise stop(ctx, log, verdict, m.id)


def decide(m: Manifest, candidates: list[Manifest], ranked: dict[str, Any], ctx: TurnContext, book: Any,
           named_coverage: float = 0.4) -> Verdict:
    """May the turn act on ``m``? (module docstring: the rules in order)."""
    if ctx.catalog is None or _chosen(m, ctx, book, candidates):
        return GO
    served = _served(m, candidates)
    if served and candidates[0].id != m.id:
        # A locate step on the way to a find is spent only for a find that may then go: the
        # decision is taken before the upstream call, not after it (「Book a table at a restaurant
        # in Gangnam」 looked Gangnam up, then stopped at the tour search's label-only verdict).
        verdicts = [decide(t, candidates, ranked, ctx, book, named_coverage) for t in served]
        if not any(v.go for v in verdicts):
            return verdicts[0]
    guidance = ctx.catalog.guidance
    named = _named(m, candidates, ctx, guidance)
    unanswered = [ch for ch in guidance.channels_named(_without_place(ctx))
                  if not ch.general and not _answers_channel(ch, m, named, candidates, ranked, ctx, guidance,
                                                             named_coverage)]
    if unanswered:
        return Verdict(False, "other_channel", tuple(ch.id for ch in unanswered))
    if named:
        return GO
    if m.permission.consent is not None and not _answers_whole(ranked.get(m.id), m, candidates):
        return Verdict(False, "consent_unnamed")
    serves = _serves_emergency(m, ctx)
    if ctx.emergencies and not serves:
        return Verdict(False, "emergency_other")
    if _fresh(ctx) and not serves and _label_only(ranked.get(m.id), m, candidates, ranked, ctx.request):
        return Verdict(False, "label_only")
    return GO


def _answers_channel(ch: Any, m: Manifest, named: int, candidates: list[Manifest], ranked: dict[str, Any],
                     ctx: TurnContext, guidance: Any, named_coverage: float) -> bool:
    """``m`` answers the service channel ``ch`` names (the channel registry holds what has no
    adapter): each phrase of the channel the request holds is inside a longer word of the request
    that ``m`` declares as its own (「전기차」 holds 기차, 「1호선」 holds 호선); or ``m`` declares the
    phrase itself and retrieval found the request covered by it as far as a request that names a
    service in other words (the retriever's ``named_service``: 「행복주택 공고」 at the rental
    notices); or the request names ``m``'s own service at least as specifically, or retrieval
    ranked it first on every word of the request. A locate step declares what a candidate it
    serves declares."""
    from ..guidance_reader import Text, longest_in, phrase_in

    text = Text.of(ctx.request)
    said = [p for p in ch.words.all() if phrase_in(p, text)]
    owners = [m, *_served(m, candidates)]
    if said and all(any(_inside_own_word(p, ctx.request, own, guidance) for own in owners) for p in said):
        return True
    row = ranked.get(m.id) or next((ranked.get(t.id) for t in owners[1:] if ranked.get(t.id)), None)
    covered = row is not None and float(row.get("coverage") or 0.0) >= named_coverage
    if covered and any(_declares(own, p, guidance) for own in owners for p in said):
        return True
    if named and longest_in(said, text) <= named:
        return True
    return bool(named) and _answers_whole(ranked.get(m.id), m, candidates) and m.permission.consent is None


def _without_place(ctx: TurnContext) -> str:
    """The request without the place it anchors on (runtime/understand/places.py find_place): a
    channel's phrase inside the place is where, never a service asked for ("AED near the subway
    station" asks for no metro timetable, 「지하철역 근처 약국」 for no metro fare)."""
    from ..understand.places import find_place

    span = find_place(ctx.request, ctx.language)
    if not span:
        return ctx.request
    words = {w.lower() for w in span.split()}
    return " ".join(w for w in ctx.request.split() if w.lower().strip(".,!?") not in words) or ctx.request


def _own_text(m: Manifest, guidance: Any) -> Any:
    """What the adapter says of itself: its title, search hints and service words (never its
    negative examples)."""
    from ..guidance_reader import Text

    return Text.of(" / ".join([m.title.ko, m.title.en, *m.search_hints.ko, *m.search_hints.en,
                               *guidance.service_words(m)]))


def _declares(m: Manifest, phrase: str, guidance: Any) -> bool:
    """The phrase is the adapter's own (a phrase of several words: each of them)."""
    from ..guidance_reader import phrase_in

    own = _own_text(m, guidance)
    return phrase_in(phrase, own) or (len(phrase.split()) > 1 and all(phrase_in(p, own) for p in phrase.split()))


def _inside_own_word(phrase: str, request: str, m: Manifest, guidance: Any) -> bool:
    """Every word of the request that holds the (Korean, one-word) phrase holds it inside a longer
    run of letters that the adapter declares: the request's word is the adapter's, not the
    channel's (「전기차」 is no 기차)."""
    p = "".join(phrase.lower().split())
    if not p or len(phrase.split()) > 1 or not any("\uac00" <= ch <= "\ud7a3" for ch in p):
        return False
    own = _own_text(m, guidance).squashed
    holders = [w.lower() for w in request.split() if p in w.lower()]
    if not holders:
        return False
    for w in holders:
        at = w.find(p)
        runs = {w[i:j] for i in range(0, at + 1) for j in range(at + len(p), len(w) + 1) if j - i > len(p)}
        if not any(r in own for r in runs):
            return False
    return True


# Retrieval matched every content word of the request to the adapter's own text.
FULL_COVERAGE = 0.999


def _answers_whole(row: dict[str, Any] | None, m: Manifest, candidates: list[Manifest]) -> bool:
    """``m`` is retrieval's first candidate and covers the whole request."""
    if row is None or row.get("coverage") is None or not candidates or candidates[0].id != m.id:
        return False
    return float(row["coverage"]) >= FULL_COVERAGE


def _fresh(ctx: TurnContext) -> bool:
    """A request that starts anew: a reply, follow-up or topic switch (「거기 지금 몇 도야?」) leans on
    the conversation, so what its few words name says little."""
    return ctx.frame is None or ctx.frame.kind == "new"


def _serves_emergency(m: Manifest, ctx: TurnContext) -> bool:
    """The request describes an emergency whose services (its ``domains``) include this adapter's,
    or that this adapter finds the way to (a locate step)."""
    domains = {d for e in ctx.emergencies for d in getattr(e, "domains", [])}
    return bool(domains) and (m.domain in domains or m.primitive == "locate")


def _label_only(row: dict[str, Any] | None, m: Manifest, candidates: list[Manifest], ranked: dict[str, Any],
                request: str = "") -> bool:
    """Retrieval did not keep ``m``: it was offered (runtime/turn/retrieve.py ``prefer_named_values``)
    only because the request names a citizen's word for a label of one of its code fields
    (``vocabulary`` false) — not a product, a term of its own vocabulary, or one of the field's
    official labels (``x-enum-labels``) as a whole word: 「신경과 찾아줘」 names the category the
    hospital search goes by; 「대학생용」 is no welfare life stage, "Japanese" no country. A locate
    step widened in is judged by the candidates it serves; a carried candidate (the
    conversation's) never is label-only."""
    if row is None and m.primitive == "locate":
        served = _served(m, candidates)
        pairs = [(r, t) for t in served if (r := ranked.get(t.id)) is not None]
        return bool(pairs) and all(_label_only(r, t, [], {}, request) for r, t in pairs)
    if row is None or row.get("carried"):
        return False
    # A candidate found with a facility's name set aside (「사직바른신경외과 MRI 있나요」 read as
    # 「신경외과 …」) names the label as that reading says it.
    return row.get("vocabulary") is False and not _names_official_label(m, str(row.get("names_aside") or request))


def _names_official_label(m: Manifest, request: str) -> bool:
    """The request names one of the official labels of ``m``'s code fields, as a whole word."""
    from ..understand import table
    from ..understand.labels import named_terms, names_official_label

    for prop in (m.input_schema.get("properties") or {}).values():
        st = table.slot_of(prop)
        if st is not None and st.class_ == "code" and st.vocabulary and any(
                names_official_label(request, prop, label) for _n, label in named_terms(request, st.vocabulary)):
            return True
    return False


def conversation_words(ctx: TurnContext) -> str:
    """The request, and — when it continues the conversation rather than starting anew (「그럼
    신청해줘」 after a 주거급여 check) — the names the conversation established (its references:
    a benefit, a drug; never personal data)."""
    frame, state = ctx.frame, ctx.dialogue
    if frame is None or state is None or frame.kind == "new":
        return ctx.request
    return " ".join([ctx.request, *(str(v) for v in (state.references or {}).values())])


def _named(m: Manifest, candidates: list[Manifest], ctx: TurnContext, guidance: Any) -> int:
    """How specifically the request (with the conversation's names) names ``m``'s service (0:
    not at all); a locate step counts as named as specifically as a candidate it serves."""
    words = conversation_words(ctx)
    own = guidance.service_match(m, words)
    if own or m.primitive != "locate":
        return own
    return max((guidance.service_match(t, words) for t in _served(m, candidates)), default=0)


def _served(m: Manifest, candidates: list[Manifest]) -> list[Manifest]:
    """The candidates a locate step fills an input of (none for any other adapter)."""
    if m.primitive != "locate":
        return []
    provided = _provided(m)
    return [t for t in candidates if t.id != m.id and t.primitive != "locate" and set(t.requires) & provided]


def _chosen(m: Manifest, ctx: TurnContext, book: Any, candidates: list[Manifest] | None = None) -> bool:
    """The conversation already chose this adapter: its pinned intent continues (or, for a locate
    step, the pinned intent it finds the place for), or the citizen consented to it."""
    frame = ctx.frame
    if frame is not None and frame.kind in ("answer", "followup") and frame.hints.pinned:
        if frame.hints.pinned == m.id:
            return True
        target = next((t for t in candidates or [] if t.id == frame.hints.pinned), None)
        if m.primitive == "locate" and target is not None and set(target.requires) & _provided(m):
            return True
    if m.id in ctx.consents:
        return True
    return m.permission.consent is not None and book is not None and book.has_consent(ctx.session.session_id, m.id)


def _provided(m: Manifest) -> set[str]:
    out = set(m.provides)
    if "coordinates" in out:
        out |= {"latitude", "longitude"}
    return out
