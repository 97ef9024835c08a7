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
        ranked = frame.candidates
    else:
        found = retriever.search(retrieval_view(ctx.request), top_k=req.top_k, filters=req.filters,
                                 context_slots=frozenset(ctx.session.slots))
        ranked = [c.model_dump() if hasattr(c, "model_dump") else dict(c) for c in found]
    manifests = widen(catalog, [catalog.get(c["adapter_id"]) for c in ranked], widen_providers)
    widened = [m.id for m in manifests[len(ranked):]]
    log.emit("candidates", "retrieve", candidates=ranked, widened=widened)
    if not manifests:
        raise Stop("no_adapter", ans.compose_stop("no_adapter", ctx.language))
    return Candidates(ranked, manifests, widened)


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
