"""Stage 2, retrieve: the narrowed candidates, widened with the locate adapters that can fill
what the top candidates require (declared by ``requires``/``provides``), so a planner can chain
locate → find. No candidate at all stops the turn (``no_adapter``)."""

from __future__ import annotations

from typing import Any

from ummaya.model.manifest import Manifest

from .. import compose as ans
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
                                 context_slots=frozenset(ctx.session.slots) | typed_slots(ctx.request))
        ranked = [c.model_dump() if hasattr(c, "model_dump") else dict(c) for c in found]
    if not ranked and (ctx.frame is None or ctx.frame.kind in ("new", "switch")):
        # A name no vocabulary knows held against the request: its scope is the rest (scope.py).
        ranked = _names_aside(retriever, ctx, req, log)
    if ctx.frame is None or ctx.frame.kind in ("new", "switch") or not ranked:
        # A follow-up or an answer keeps the intent the dialogue pinned.
        ranked = prefer_named_values(ranked, catalog, ctx.request)
        ranked = prefer_runnable(ranked, catalog, ctx.request, ctx.language, frozenset(ctx.slots) | frozenset(ctx.session.slots))
    ranked = for_emergency(ranked, retriever, ctx, req)
    ranked = prefer_proximity(ranked, catalog, ctx.request, ctx.language)
    manifests = widen(catalog, [catalog.get(c["adapter_id"]) for c in ranked], widen_providers)
    widened = [m.id for m in manifests[len(ranked):]]
    log.emit("candidates", "retrieve", candidates=ranked, widened=widened)
    if not manifests:
        # Nothing in the registry fits: the scope decision's way out (scope.py).
        from .scope import abstain

        raise abstain(ctx, log)
    return Candidates(ranked, manifests, widened, named_coverage=float(getattr(retriever, "named_service", 0.4)))


def _names_aside(retriever: Any, ctx: TurnContext, req: TurnRequest, log: TurnLog) -> list[dict[str, Any]]:
    """Retrieval on the request with its unknown names set aside (scope.names_aside), or []."""
    from .scope import names_aside

    view = names_aside(retrieval_view(ctx.request))
    if view is None:
        return []
    found = retriever.search(view, top_k=req.top_k, filters=req.filters,
                             context_slots=frozenset(ctx.session.slots) | typed_slots(ctx.request))
    ranked = [c.model_dump() if hasattr(c, "model_dump") else dict(c) for c in found]
    if not ranked:  # the kind may be a value of a slot vocabulary (신경외과, a specialty's label)
        ranked = prefer_named_values([], ctx.catalog, view) if ctx.catalog is not None else []
    if ranked:
        log.emit("check", "retrieve", check="names_aside", adapter_id="", field="", reason="read_again",
                 why="names_aside", message=f"read again without the names it holds: {view}", missing=[])
    return [{**c, "names_aside": view} for c in ranked]


def typed_slots(request: str) -> frozenset[str]:
    """Slot types the request itself fills without a locate step: coordinates it types (the
    coordinates-class slot types of the table). Retrieval weighs them like carried ones."""
    from ..understand import table
    from ..understand.numbers import coordinates_in

    return table.slot_table().of_class("coordinates") if coordinates_in(request) is not None else frozenset()


def _candidate(m: Manifest, strong: bool = True) -> dict[str, Any]:
    # vocabulary: the request names a product or a term of the adapter's own vocabulary (strong
    # evidence, never a weak near miss); a code's label alone (a specialty) is not.
    return {"adapter_id": m.id, "primitive": m.primitive, "tier": m.tier, "score": 0.0, "domain": m.domain,
            "agency": m.agency.code, "coverage": 0.0, "text_score": 0.0, "vocabulary": strong}


def _named_code_first(ranked: list[dict[str, Any]], catalog: Catalog, request: str) -> list[dict[str, Any]]:
    """Among the top candidates, a find that takes the closed vocabulary the request names (정신과 →
    a specialty) goes before finds that take nothing the request names (「정신과 상담받을 곳 근처」 is
    no pharmacy question). A synonym counts from three syllables (아이, 허리 say too little); one
    of the field's official labels, as its manifest declares them (x-enum-labels: 청년, 다자녀),
    counts at any length, as a whole word."""
    from ..understand import table
    from ..understand.labels import named_terms, names_official_label

    def named(m: Manifest) -> bool:
        for prop in (m.input_schema.get("properties") or {}).values():
            st = table.slot_of(prop)
            if st is not None and st.class_ == "code" and st.vocabulary and any(
                    n >= 3 or names_official_label(request, prop, label)
                    for n, label in named_terms(request, st.vocabulary)):
                return True
        return False

    if ranked and ranked[0].get("carried"):
        return ranked  # the conversation pins its intent (a follow-up): not re-ranked here
    # The first four answering candidates: locate steps (a place search that the request's 「어디
    # 있어」 ranks first) are helpers of a find, not its rivals, so they do not use up the window —
    # with 159 adapters two of them pushed hira_hospitals out of it for 「신경과 어디 있어 … 근처」.
    finds = [i for i, c in enumerate(ranked)
             if (m := catalog.adapters.get(c["adapter_id"])) is not None and m.primitive != "locate"][:4]
    hit = next((i for i in finds if named(catalog.adapters[ranked[i]["adapter_id"]])), None)
    if hit is None:
        return ranked
    first_find = finds[0]
    if first_find < hit and _covers_the_request(ranked[first_find]) and not _covers_the_request(ranked[hit]):
        # Retrieval matched every word of the request to the first find (「한부모가족 아동양육비
        # 선정기준 자세히」 → the detail adapter): a code the request also names does not outrank it.
        return ranked
    if first_find < hit:
        ranked = list(ranked)
        ranked.insert(first_find, ranked.pop(hit))
    return ranked


def _covers_the_request(candidate: dict[str, Any]) -> bool:
    return float(candidate.get("coverage") or 0.0) >= 0.9


def prefer_named_values(ranked: list[dict[str, Any]], catalog: Catalog, request: str) -> list[dict[str, Any]]:
    """Adapters whose slot vocabularies the request names a value of (runtime/understand/cues.py):
    offered when retrieval abstains (「탁센에 카페인 들어 있어?」), and a product question goes to an
    adapter that takes a product when the top candidate takes none (「낙센 먹고 운전해도 돼?」)."""
    from ..understand.cues import evidence, takes_product
    from ..understand.names import product_cue

    if ranked and not product_cue(request):
        return _named_code_first(ranked, catalog, request)
    found = evidence(list(catalog.adapters.values()), request)
    if not found:
        return ranked
    found = sorted(found, key=lambda f: (not f[2], _service_order(f[0], catalog, request)))  # stable
    if not ranked:
        best = found[0][2]
        return [_candidate(m, strong) for m, _hits, strong in found if strong == best][:3]
    top = catalog.adapters.get(ranked[0]["adapter_id"])
    product = [m for m, _h, strong in found if strong and takes_product(m)]
    if product and top is not None and not takes_product(top):
        ids = {m.id for m in product}
        return [_candidate(m) for m in product] + [c for c in ranked if c["adapter_id"] not in ids]
    if top is not None and takes_product(top):
        # Several ranked adapters take the medicine: a narrower declared service the request does
        # not name (a pregnancy check for 「판콜에이 먹어도 돼?」) does not lead on shared words.
        takers = [c for c in ranked if (m := catalog.adapters.get(c["adapter_id"])) is not None and takes_product(m)]
        order = sorted(takers, key=lambda c: _service_order(catalog.adapters[c["adapter_id"]], catalog, request))
        slots = iter(order)
        return [next(slots) if c in takers else c for c in ranked]
    return ranked


def _service_order(m: Manifest, catalog: Catalog, request: str) -> tuple[int, bool]:
    """Among adapters a named value fits equally, one whose declared service words the request
    names comes first, then those that declare none (the general service: drug information for a
    drug named alone), and one declaring a service the request does not name (a pregnancy check)
    last: a value alone does not ask for a narrower service."""
    declared = bool(m.service_words.ko or m.service_words.en)
    if not declared:
        return (0, False)
    named = catalog.guidance.service_match(m, request)
    return (-named, not named)


def for_emergency(ranked: list[dict[str, Any]], retriever: Any, ctx: TurnContext, req: TurnRequest) -> list[dict[str, Any]]:
    """After an emergency's number, the turn goes on with the services its entry names
    (registry/_emergency: ``domains``): 「물에 빠졌다 나왔는데 의식이 없어」 at a beach is the
    nearest ER, not a bathhouse that shares the word. Retrieval is asked again within those domains
    when it ranked another first — the candidates of those domains first when it has some, else a
    search within them (with the emergency's ``search`` words when the request's find nothing);
    nothing found there keeps its own ranking."""
    domains = sorted({d for e in ctx.emergencies for d in getattr(e, "domains", [])})
    if not domains or (req.filters and "domain" in req.filters) or (ranked and ranked[0].get("domain") in domains):
        return ranked
    within = [c for c in ranked if c.get("domain") in domains]
    if within:  # already among the candidates: they go first
        return within + [c for c in ranked if c.get("domain") not in domains]
    found = _search_within(retriever, ctx.request, domains, ctx, req)
    if not found:
        # the request's words find nothing there (「물에 빠졌다 나왔는데 의식이 없어」 names no ER):
        # the emergency's own words for the service the citizen needs next (its ``search``)
        said = [e.search.get(ctx.language) for e in ctx.emergencies if getattr(e, "search", None) is not None]
        if said:
            found = _search_within(retriever, " ".join([ctx.request, *said]), domains, ctx, req)
    return found or ranked


def _search_within(retriever: Any, text: str, domains: list[str], ctx: TurnContext, req: TurnRequest) -> list[dict[str, Any]]:
    found = retriever.search(retrieval_view(text), top_k=req.top_k, filters={**(req.filters or {}), "domain": domains},
                             context_slots=frozenset(ctx.slots) | typed_slots(ctx.request))
    return [c.model_dump() if hasattr(c, "model_dump") else dict(c) for c in found]


def prefer_runnable(ranked: list[dict[str, Any]], catalog: Catalog, request: str, language: str,
                    carried: frozenset[str]) -> list[dict[str, Any]]:
    """The retriever's rule (runtime/retrieve/runnable.py) on candidates the dialogue ranked."""
    from ..retrieve.runnable import prefer_runnable as rule

    return rule(ranked, catalog, request, language, carried)


# A find that answers by distance from a point wins a near tie (within this share of the top
# score) over one that answers by region, when the request anchors on a place (「부산역 근처」).
PROXIMITY_TIE = 0.85


def prefer_proximity(ranked: list[dict[str, Any]], catalog: Catalog, request: str, language: str) -> list[dict[str, Any]]:
    """「부산역 근처 응급실」 asks what is near a point: a region-wide list (beds per city) that
    scores a little higher only because the place's name starts with a city's does not answer
    it. Typed coordinates name a point as well as a place does (「24시간 하는 응급실 위도 36.01 경도
    129.34」 is no question about one hospital's details). A named place anchors only a request
    that asks what is near or where (:func:`_asks_near`). A clear lead (「부산역 근처 응급실 자리
    있어?」) is left alone."""
    if len(ranked) < 2:
        return ranked
    from ..understand.numbers import coordinates_in
    from ..understand.places import find_place

    top = catalog.adapters.get(ranked[0]["adapter_id"])
    if top is None or top.primitive != "find" or "coordinates" in top.requires:
        return ranked
    best = float(ranked[0].get("score") or 0.0)
    for i, c in enumerate(ranked[1:3], 1):
        m = catalog.adapters.get(c["adapter_id"])
        if m is None or m.primitive != "find" or "coordinates" not in m.requires:
            continue
        if float(c.get("score") or 0.0) >= PROXIMITY_TIE * best and (
                coordinates_in(request) is not None or (_asks_near(request) and find_place(request, language))):
            return [ranked[i], *ranked[:i], *ranked[i + 1:]]
        break
    return ranked


def _asks_near(request: str) -> bool:
    """The request asks what is near or where (the retriever's location cues: 근처, 가까운, near …):
    a place named only as the top candidate's own argument (「bus arrivals at 공업탑 stop」) is no
    point to search around."""
    from ..retrieve.retriever import INTENT_CUES

    return any("locate" in prims and pattern.search(request) for pattern, prims in INTENT_CUES)


def widen(catalog: Catalog, cands: list[Manifest], limit: int) -> list[Manifest]:
    """Add up to ``limit`` locate adapters that provide what the top three candidates require."""
    have = {m.id for m in cands}
    needed = {s for m in cands[:3] for s in m.requires}
    if not needed:
        return cands

    def inputs_need(m: Manifest) -> set[str]:
        props = m.input_schema.get("properties", {})
        return {props[f].get("x-slot", f) for f in m.input_schema.get("required", [])}

    # Only the providers of the needed slots are read (Catalog.locate_providers), not every adapter.
    index = catalog.locate_providers
    providers = list({
        m.id: m for slot in sorted(needed) for m in index.get(slot, ()) if m.id not in have
    }.values())
    # A provider that itself needs coordinates cannot start a chain from text; prefer those
    # that cover more of what is needed, live before mock, then by id for stable order.
    providers.sort(key=lambda m: (
        bool(inputs_need(m) & {"latitude", "longitude", "coordinates"}),
        -len(needed & set(m.provides)), m.tier != "live", m.id,
    ))
    return cands + providers[:limit]
