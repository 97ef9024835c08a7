"""Right adapter, or an honest way out: a call goes ahead only for a service the request names.

Retrieval ranks by shared words, so a request for a service the registry does not have can land on
the nearest one: 「여권 재발급 신청해줘」 on the welfare application (both "apply"), 「실업급여」 on
the housing benefit (both "…급여"). This check runs in the engine before the gate, for every
planner, on each proposed call (and on the adapter a question is asked for):

- the request names the adapter's service (its ``service_words``, or the words the build derived
  from its hints and title minus the generic words of registry/_intents/) → it goes ahead;
- it continues the conversation's pinned intent, or the citizen already consented to that adapter →
  it goes ahead (that choice was made, and checked, when the intent started);
- it names an official channel's service instead (registry/_channels/) → the turn stops with what
  UMMAYA cannot do and where the citizen can (``no_adapter``, layer ``gate``);
- it names nothing, and the adapter would ask for consent → the same stop with the general
  channel: a near miss never reaches another service's consent notice;
- it names nothing, and the request is an emergency whose services (its ``domains``) do not
  include the adapter → the emergency's own plain line (its number is already the first line);
- it names nothing on a new request, and retrieval kept the adapter on text evidence alone
  (coverage under its abstain threshold) → the general way out.

A locate adapter called on the way to another (「부산역 근처 응급실」 finds 부산역 first) counts
as named when a candidate it serves is named.
"""

from __future__ import annotations

from typing import Any

from ummaya.model.manifest import Manifest

from .. import compose as ans
from ..plan.protocol import ToolCall
from .log import TurnLog
from .values import Stop, TurnContext


def way_out(ctx: TurnContext, *, detail: str = "", layer: str | None = None) -> Stop:
    """The ``no_adapter`` stop: the channels the request names, else the general channel. An
    emergency request gets its own plain line instead (its number is already the first line)."""
    guidance = ctx.catalog.guidance if ctx.catalog is not None else None
    if guidance is None:
        return Stop("no_adapter", ans.compose_stop("no_adapter", ctx.language), detail, layer=layer)
    channels = guidance.channels_named(ctx.request)
    emergencies = guidance.emergencies_in(ctx.request)
    if emergencies and not channels:
        parts = [ans.Part("way_out", emergencies[0].cannot.get(ctx.language))]
    else:
        parts = ans.way_out_parts(channels, ctx.language, general=guidance.general,
                                  intent=guidance.intent_named(ctx.request))
    return Stop("no_adapter", ans.text_of(parts), detail, layer=layer, parts=parts)


# Retrieval keeps a candidate when it covers this share of the request's terms (the retriever's
# abstain_coverage, runtime/retrieve/retriever.py) *or* on strong text evidence alone. A candidate
# kept on text evidence alone whose service the request does not name is a near miss (「파이썬
# 코드 짜줘」 at the region codes, 「번역해줘」 at the address search on 「영어로」): nothing else
# says it fits.
WEAK_COVERAGE = 0.3
# Retrieval matched every content word of the request to the adapter's own text.
FULL_COVERAGE = 0.999


def check_scope(calls: list[ToolCall], cands: Any, ctx: TurnContext, book: Any, log: TurnLog) -> None:
    """Raise the way-out stop for the first call whose service the request does not name, when
    another service's channel is named, the call would ask for consent, or retrieval found it only
    weakly (module docstring)."""
    if ctx.catalog is None:
        return
    guidance = ctx.catalog.guidance
    candidates: list[Manifest] = cands.manifests
    ranked = {r.get("adapter_id"): r for r in getattr(cands, "ranked", []) or []}
    by_id = {m.id: m for m in candidates}
    for c in calls:
        m = by_id.get(c.adapter_id)  # a call outside the candidates is validation's to refuse
        if m is None or _chosen(m, ctx, book, candidates):
            continue
        named = _named(m, candidates, ctx, guidance)
        channels = guidance.channels_named(ctx.request)
        specific = [ch for ch in channels if not ch.general]
        if named and not _more_specific(specific, named, ctx, guidance):
            continue
        if named and specific and _answers_whole(ranked.get(m.id), m, candidates):
            # Retrieval ranked this adapter first on every word of the request: it exists for the
            # service the channel names (the channel registry holds what has no adapter).
            specific = []
            if m.permission.consent is None:
                continue
        why = ""
        if specific:
            why = f"it names {', '.join(ch.id for ch in specific)}"
        elif m.permission.consent is not None:
            why = "it would ask for consent"
        elif ctx.emergencies and not _serves_emergency(m, ctx):
            # after an emergency's number only a named service or the emergency's own (its
            # domains) goes on: a house fire is no question for the earthquake bulletin
            why = "an emergency goes on only with a service it names"
        elif _fresh(ctx) and not _serves_emergency(m, ctx) and _weak(ranked.get(m.id), m, candidates, ranked, ctx.request):
            why = f"retrieval found it only weakly (coverage < {WEAK_COVERAGE})"
        if why:
            log.emit("check", "gate", check="scope", adapter_id=m.id, field="", reason="no_adapter",
                     message=f"the request does not name this adapter's service; {why}", missing=[])
            raise way_out(ctx, detail=f"not_named:{m.id}", layer="gate")


def _answers_whole(row: dict[str, Any] | None, m: Manifest, candidates: list[Manifest]) -> bool:
    """``m`` is retrieval's first candidate and covers the whole request."""
    if row is None or row.get("coverage") is None or not candidates or candidates[0].id != m.id:
        return False
    return float(row["coverage"]) >= FULL_COVERAGE


def _fresh(ctx: TurnContext) -> bool:
    """A request that starts anew: a reply, follow-up or topic switch (「거기 지금 몇 도야?」) leans on
    the conversation, so retrieval's coverage of its few words says little."""
    return ctx.frame is None or ctx.frame.kind == "new"


def _serves_emergency(m: Manifest, ctx: TurnContext) -> bool:
    """The request describes an emergency whose services (its ``domains``) include this adapter's,
    or that this adapter finds the way to (a locate step)."""
    domains = {d for e in ctx.emergencies for d in getattr(e, "domains", [])}
    return bool(domains) and (m.domain in domains or m.primitive == "locate")


def _weak(row: dict[str, Any] | None, m: Manifest, candidates: list[Manifest], ranked: dict[str, Any],
          request: str = "") -> bool:
    """Retrieval's own evidence for ``m`` is weak. A locate adapter asked where a place is
    (「부산역 어디야」: the name is words no adapter knows, so coverage says nothing) is not; one
    widened in for a candidate it serves is judged by that candidate; a carried candidate (the
    conversation's) is never weak."""
    from ..retrieve.retriever import PLACE_LOOKUP_CUE
    from ..understand.cues import names_value

    if m.primitive == "locate" and PLACE_LOOKUP_CUE.search(request):
        return False
    if request and names_value(m, request):
        # the request names a value of the adapter's own vocabulary (a known medicine, a holiday
        # its month field reads, a programme its keyword field knows): evidence of its own
        return False
    if row is None and m.primitive == "locate":
        served = [ranked.get(t.id) for t in candidates if t.id != m.id and set(t.requires) & _provided(m)]
        rows = [r for r in served if r is not None]
        return bool(rows) and all(_weak(r, m, [], {}) for r in rows)
    if row is None or row.get("carried") or row.get("vocabulary") or row.get("coverage") is None:
        # a retriever that reports no coverage gives no evidence of a near miss, and a candidate
        # offered because the request names a value of its vocabulary (a known medicine) is
        # evidence of its own, not a weak text match
        return False
    return float(row["coverage"]) < WEAK_COVERAGE


def _more_specific(channels: list[Any], named: int, ctx: TurnContext, guidance: Any) -> bool:
    """A channel's service is named more specifically than the adapter's: "national health
    insurance premium" names the insurance service, not the national holidays. A tie goes to the
    adapter: one that exists answers its own service (the channel registry holds what has none)."""
    from ..guidance_reader import Text, longest_in

    text = Text.of(ctx.request)
    return any(longest_in(ch.words.all(), text) > named for ch in channels)


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
    served = [t for t in candidates if t.id != m.id and t.primitive != "locate" and set(t.requires) & _provided(m)]
    return max((guidance.service_match(t, words) for t in served), default=0)


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
