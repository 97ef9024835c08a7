"""Order the retrieval pool once and bound what reaches the planner (S03).

The retriever returns a *pool* (the policy's ``rerank.pool``, wider than ``top_k``). Its score is
already the whole per-adapter judgement: the text (BM25F), the primitive the request implies
(the shared cue table), the tier prior, the region a request names, the slots the session already
knows (``requires`` known ×1.10, a ``locate`` whose ``provides`` are known ×0.90), the refutation,
redirect and runnable passes (runtime/retrieve/retriever.py). Reranking does not count any of
that a second time. It used to restart from the pure text score and multiply a subset back in
(intent, tier, known slots, and ×0.90 when no adapter *in the pool* provides what a candidate
requires); run on every surface, that lost the retriever's other passes and moved requests to
worse adapters — ``ummaya eval conversations`` 0.959 → 0.885, ``eval arguments`` 0.932 → 0.902,
``eval turns`` 1.000 → 0.985. The pool-level signal alone still cost 0.959 → 0.893: the turn
widens a candidate with locate adapters from the whole catalog (turn/retrieve.py ``widen``), so
"nobody in the pool provides it" is no reason to demote it.

So: order = the retriever's score descending, then adapter id ascending (stable ranks, ties by
id); ``signals`` reports the retriever's non-text factor (score ÷ text score). Then the
**budget**: at most ``min(top_k, max_candidates)`` candidates, and candidates are dropped from
the tail while the estimated tokens of their tool schemas exceed ``max_tool_tokens`` (the first
one always stays). Everything dropped is reported (``dropped``) in the retrieve response and the
trace.

``RerankingRetriever`` applies this to any retriever. It sits here, beside the retriever, so
that every surface ranks the same way: ``TurnService.load`` (runtime/service.py) wraps the
retriever of the compiled catalog with the policy's budget, the server wraps a release's with
that release's policy when it loads it, and the server only *observes* (``observing``: its
request states and the rerank report of its trace) — no surface can pick another adapter for
the same request.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from .policy import RerankBudget


@dataclass(frozen=True)
class AdapterFacts:
    adapter_id: str
    primitive: str
    tier: str
    requires: frozenset[str]
    provides: frozenset[str]
    tool_tokens: int


@dataclass(frozen=True)
class Ranked:
    adapter_id: str
    rank: int
    score: float
    text_score: float
    signals: dict[str, float]
    candidate: dict[str, Any]


def estimate_tokens(obj: Any) -> int:
    """Same estimate the turn uses for its context budget (~1 token per 1.5 characters of JSON)."""
    return len(json.dumps(obj, ensure_ascii=False)) * 2 // 3


def facts_for(m: Any, tool: Mapping[str, Any]) -> AdapterFacts:
    """What reranking reads of one adapter; ``tool`` is the schema the planner is shown for it
    (its size is the adapter's share of the tool budget). Passed in rather than built here: the
    planner's tool shape is the planner's (runtime/plan/openai_tools.py), not retrieval's."""
    return AdapterFacts(m.id, m.primitive, m.tier, frozenset(m.requires or ()),
                        frozenset(m.provides or ()), estimate_tokens(tool))


def catalog_facts(manifests: Iterable[Any], tool_of: Any) -> dict[str, AdapterFacts]:
    """``facts_for`` of every adapter, by id (computed once per catalog, never per request)."""
    return {m.id: facts_for(m, tool_of(m)) for m in manifests}


def rerank(candidates: list[dict[str, Any]]) -> list[Ranked]:
    """All candidates (retriever Candidate dicts), ranked: the retriever's score descending, ties
    by adapter id. The request and its context are what that score already weighed."""
    rows: list[tuple[float, str, dict[str, float], dict[str, Any]]] = []
    for c in candidates:
        score = round(float(c.get("score") or 0.0), 6)
        text = float(c.get("text_score") or 0.0)
        signals = {"retriever": round(score / text, 6)} if text > 0 else {}
        rows.append((score, c["adapter_id"], signals, c))
    rows.sort(key=lambda r: (-r[0], r[1]))
    return [Ranked(aid, i + 1, score, float(c.get("text_score") or 0.0), sig, c)
            for i, (score, aid, sig, c) in enumerate(rows)]


def apply_budget(ranked: list[Ranked], facts: Mapping[str, AdapterFacts], *, top_k: int,
                 max_candidates: int, max_tool_tokens: int) -> tuple[list[Ranked], list[dict[str, Any]]]:
    """(kept, dropped with reasons). Kept keeps rank order; the first candidate always stays."""
    limit = max(1, min(top_k, max_candidates))
    kept: list[Ranked] = []
    dropped: list[dict[str, Any]] = []
    tokens = 0
    for r in ranked:
        if len(kept) >= limit:
            dropped.append({"adapter_id": r.adapter_id, "rank": r.rank, "reason": "max_candidates"})
            continue
        cost = facts[r.adapter_id].tool_tokens if r.adapter_id in facts else 0
        if kept and tokens + cost > max_tool_tokens:
            dropped.append({"adapter_id": r.adapter_id, "rank": r.rank, "reason": "max_tool_tokens"})
            continue
        kept.append(r)
        tokens += cost
    return kept, dropped


@dataclass(frozen=True)
class RerankReport:
    """One search's reranking, as the trace and the retrieve response show it."""

    pool: int
    ranked: list[Ranked]
    kept: list[Ranked]
    dropped: list[dict[str, Any]]

    def as_dict(self) -> dict[str, Any]:
        return {"pool": self.pool, "kept": [r.adapter_id for r in self.kept], "dropped": self.dropped,
                "ranked": [{"adapter_id": r.adapter_id, "rank": r.rank, "score": r.score,
                            "text_score": r.text_score, "signals": r.signals} for r in self.ranked]}


class RerankObserver(Protocol):
    """Told what a search does, never asked anything: an observer cannot change the ranking."""

    def stage(self, name: str) -> None: ...  # "retrieving", then "reranking"

    def reranked(self, report: RerankReport) -> None: ...


@dataclass
class RerankingRetriever:
    """``base`` asked for the rerank pool, reranked by the adapters' ``facts`` and cut to
    ``budget``; the search's ``top_k`` is the request's (every turn stage passes it). Everything
    else (``ids``, ``dense``, …) is the base retriever's."""

    base: Any
    facts: Mapping[str, AdapterFacts]
    budget: RerankBudget = field(default_factory=RerankBudget)
    observer: RerankObserver | None = None

    def observing(self, observer: RerankObserver | None) -> RerankingRetriever:
        """The same ranking, reported to ``observer`` (one request's); cheap: nothing is reloaded."""
        return RerankingRetriever(self.base, self.facts, self.budget, observer)

    def search(self, query: str, *, top_k: int = 5, filters: dict[str, Any] | None = None,
               context_slots: frozenset[str] = frozenset()) -> list[Any]:
        return self.search_report(query, top_k=top_k, filters=filters, context_slots=context_slots)[0]

    def search_report(self, query: str, *, top_k: int = 5, filters: dict[str, Any] | None = None,
                      context_slots: frozenset[str] = frozenset()) -> tuple[list[Any], RerankReport]:
        """The kept candidates (scores replaced by the reranked ones) and the report."""
        if self.observer is not None:
            self.observer.stage("retrieving")
        pool = self.base.search(query, top_k=max(self.budget.pool, top_k), filters=filters,
                                context_slots=context_slots)
        if self.observer is not None:
            self.observer.stage("reranking")
        by_id = {c.adapter_id: c for c in pool}
        ranked = rerank([c.model_dump() for c in pool])
        kept, dropped = apply_budget(ranked, self.facts, top_k=top_k,
                                     max_candidates=self.budget.max_candidates,
                                     max_tool_tokens=self.budget.max_tool_tokens)
        report = RerankReport(len(pool), ranked, kept, dropped)
        if self.observer is not None:
            self.observer.reranked(report)
        return [by_id[r.adapter_id].model_copy(update={"score": r.score}) for r in kept], report

    def __getattr__(self, name: str) -> Any:
        # Only reached for what this class does not define: the base retriever's other parts.
        if name in ("base", "facts", "budget", "observer"):
            raise AttributeError(name)
        return getattr(self.base, name)
