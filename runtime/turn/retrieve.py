"""Stage 2, retrieve: the narrowed candidates, widened with the locate adapters that can fill
what the top candidates require (declared by ``requires``/``provides``), so a planner can chain
locate → find. No candidate at all stops the turn (``no_adapter``)."""

from __future__ import annotations

from typing import Any

from ummaya.codegen.manifest import Manifest

from .. import answer as ans
from ..catalog import Catalog
from .context import retrieval_view
from .log import TurnLog
from .values import Candidates, Stop, TurnContext, TurnRequest


def retrieve(
    retriever: Any, catalog: Catalog, ctx: TurnContext, req: TurnRequest, log: TurnLog,
    *, widen_providers: int = 2,
) -> Candidates:
    log.stage = "retrieve"
    if ctx.dialogue is not None:
        # A conversation: the message is read against what the session carries (an answer to the
        # engine's question, a follow-up, a new topic at the same place), retrieval included.
        from ..dialogue import resolve

        frame = resolve(ctx.request, ctx.language, ctx.dialogue, catalog, retriever,
                        view=retrieval_view(ctx.request), top_k=req.top_k, filters=req.filters)
        ctx.frame, ctx.slots = frame, dict(frame.slots)
        log.emit("dialogue", "context", loaded=ctx.dialogue.view(), frame=frame.view(), policy=ctx.policy)
        if frame.kind in ("decline", "ack"):
            # 「아니」 to the engine's question, or thanks: nothing to look up, nothing run again.
            text = ans.compose_declined(ctx.language) if frame.kind == "decline" else ans.compose_ack(ctx.language)
            raise Stop("needs_input", text, frame.kind, layer="context")
        ranked = frame.candidates
    else:
        found = retriever.search(retrieval_view(ctx.request), top_k=req.top_k, filters=req.filters,
                                 context_slots=frozenset(ctx.session.slots))
        ranked = [c.model_dump() if hasattr(c, "model_dump") else dict(c) for c in found]
    ranked = prefer_proximity(ranked, catalog, ctx.request, ctx.language)
    manifests = widen(catalog, [catalog.get(c["adapter_id"]) for c in ranked], widen_providers)
    widened = [m.id for m in manifests[len(ranked):]]
    log.emit("candidates", "retrieve", candidates=ranked, widened=widened)
    if not manifests:
        raise Stop("no_adapter", ans.compose_stop("no_adapter", ctx.language))
    return Candidates(ranked, manifests, widened)


# A find that answers by distance from a point wins a near tie (within this share of the top
# score) over one that answers by region, when the request anchors on a place (「부산역 근처」).
PROXIMITY_TIE = 0.85


def prefer_proximity(ranked: list[dict[str, Any]], catalog: Catalog, request: str, language: str) -> list[dict[str, Any]]:
    """「부산역 근처 응급실」 asks what is near a point: a region-wide list (beds per city) that
    scores a little higher only because the place's name starts with a city's does not answer
    it. A clear lead (「부산역 근처 응급실 자리 있어?」) is left alone."""
    if len(ranked) < 2:
        return ranked
    from ..plan.slots import find_place

    top = catalog.adapters.get(ranked[0]["adapter_id"])
    if top is None or top.primitive != "find" or "coordinates" in top.requires:
        return ranked
    best = float(ranked[0].get("score") or 0.0)
    for i, c in enumerate(ranked[1:3], 1):
        m = catalog.adapters.get(c["adapter_id"])
        if m is None or m.primitive != "find" or "coordinates" not in m.requires:
            continue
        if float(c.get("score") or 0.0) >= PROXIMITY_TIE * best and find_place(request, language):
            return [ranked[i], *ranked[:i], *ranked[i + 1:]]
        break
    return ranked


def widen(catalog: Catalog, cands: list[Manifest], limit: int) -> list[Manifest]:
    """Add up to ``limit`` locate adapters that provide what the top three candidates require."""
    have = {m.id for m in cands}
    needed = {s for m in cands[:3] for s in m.requires}
    if not needed:
        return cands

    def inputs_need(m: Manifest) -> set[str]:
        props = m.input_schema.get("properties", {})
        return {props[f].get("x-slot", f) for f in m.input_schema.get("required", [])}

    providers = [
        m for m in catalog.adapters.values()
        if m.id not in have and m.primitive == "locate" and needed & set(m.provides)
    ]
    # A provider that itself needs coordinates cannot start a chain from text; prefer those
    # that cover more of what is needed, live before mock, then by id for stable order.
    providers.sort(key=lambda m: (
        bool(inputs_need(m) & {"latitude", "longitude", "coordinates"}),
        -len(needed & set(m.provides)), m.tier != "live", m.id,
    ))
    return cands + providers[:limit]
