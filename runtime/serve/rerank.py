"""Rerank retrieval candidates by non-text signals and bound what reaches the planner (S03).

The retriever returns a *pool* (the release's ``rerank.pool``, wider than ``top_k``) scored by text.
Reranking starts again from each candidate's pure text score and multiplies in the signals the
manifests carry — never the text a second time:

* **primitive intent** ×1.25 when the request implies the candidate's primitive (the retriever's
  generic cue table: 신고/납부/신청 → send, 확인/자격 → check, 어디/근처 → locate, find);
* **slots satisfiable from context** — ×1.10 when everything the candidate ``requires`` is already
  known (session slots), ×1.00 when some adapter in the pool can ``provide`` what is missing (the
  turn chains locate → find), ×0.90 when nothing can; a ``locate`` adapter whose ``provides`` are
  all known already is ×0.90 (a resolved location is reused, never re-guessed);
* **tier** live ×1.000, mock ×0.995, handoff ×0.990 (a tie-breaker).

Score = round(text_score × product, 6); order = score descending, then adapter id ascending, so
ranks are stable and ties are broken by id. Then the **budget**: at most
``min(top_k, max_candidates)`` candidates, and candidates are dropped from the tail while the
estimated tokens of their tool schemas exceed ``max_tool_tokens`` (the first one always stays).
Everything dropped is reported (``dropped``) in the retrieve response and the trace.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ummaya.runtime.retrieve.retriever import INTENT_CUES

INTENT_BOOST = 1.25
READY_BOOST = 1.10
UNSATISFIABLE = 0.90
KNOWN_LOCATE = 0.90
TIER_PRIOR = {"live": 1.0, "mock": 0.995, "handoff": 0.99}


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


def facts_for(m: Any) -> AdapterFacts:
    from ummaya.runtime.plan.openai_tools import tool_for

    return AdapterFacts(m.id, m.primitive, m.tier, frozenset(m.requires or ()),
                        frozenset(m.provides or ()), estimate_tokens(tool_for(m)))


def implied_primitives(query: str) -> set[str]:
    out: set[str] = set()
    for pattern, prims in INTENT_CUES:
        if pattern.search(query):
            out.update(prims)
    return out


def rerank(query: str, candidates: list[dict[str, Any]], facts: dict[str, AdapterFacts],
           context_slots: frozenset[str] = frozenset()) -> list[Ranked]:
    """All candidates, reranked. ``candidates`` are retriever Candidate dicts (text_score used)."""
    implied = implied_primitives(query)
    pool_provides: set[str] = set()
    for c in candidates:
        f = facts.get(c["adapter_id"])
        if f is not None:
            pool_provides |= f.provides
    rows: list[tuple[float, str, dict[str, float], dict[str, Any]]] = []
    for c in candidates:
        f = facts.get(c["adapter_id"])
        primitive = f.primitive if f else c.get("primitive", "")
        tier = f.tier if f else c.get("tier", "")
        signals: dict[str, float] = {}
        signals["intent"] = INTENT_BOOST if primitive in implied else 1.0
        slot = 1.0
        if f is not None and f.requires:
            if f.requires <= context_slots:
                slot = READY_BOOST
            elif not (f.requires - context_slots) <= pool_provides:
                slot = UNSATISFIABLE
        if f is not None and f.primitive == "locate" and f.provides and f.provides <= context_slots:
            slot *= KNOWN_LOCATE
        signals["slots"] = round(slot, 6)
        signals["tier"] = TIER_PRIOR.get(tier, 1.0)
        text = float(c.get("text_score") or c.get("score") or 0.0)
        mult = signals["intent"] * signals["slots"] * signals["tier"]
        rows.append((round(text * mult, 6), c["adapter_id"], signals, c))
    rows.sort(key=lambda r: (-r[0], r[1]))
    return [Ranked(aid, i + 1, score, float(c.get("text_score") or 0.0), sig, c)
            for i, (score, aid, sig, c) in enumerate(rows)]


def apply_budget(ranked: list[Ranked], facts: dict[str, AdapterFacts], *, top_k: int,
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
