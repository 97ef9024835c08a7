"""Issue 22 item 3: evidence in /v1/answer is ordered by the policy's stated rule (the reranked
score of the adapter that produced it, descending; ties by adapter id), ranks are 1..n and stable,
and the JSON and SSE forms carry the same ranked evidence."""

from __future__ import annotations

from typing import Any

import pytest

from tests.serve.conftest import parse_sse
from ummaya.runtime.serve.pipeline import evidence_order

# Turns that chain a locate adapter into a find adapter: two pieces of evidence, two scores.
CHAINED = ["동아대 승학캠퍼스 근처 응급실 알려줘", "부산역 근처 약국", "서울시청 주변 AED 어디 있어"]


def _answer(api: Any, query: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    body = {"query": query, "mode": "mock"}
    j = api.post("/v1/answer", json=body).json()
    events = parse_sse(api.post("/v1/answer", json={**body, "stream": True}).text)
    return j, [e["data"] for e in events if e["event"] == "evidence"]


@pytest.mark.parametrize("query", CHAINED)
def test_evidence_is_ranked_by_score_and_json_equals_sse(api: Any, query: str) -> None:
    j, sse = _answer(api, query)
    ev = j["evidence"]
    assert len(ev) >= 2, f"{query!r} should chain two adapters: {[e['metadata']['adapter_id'] for e in ev]}"
    assert [e["rank"] for e in ev] == list(range(1, len(ev) + 1))
    keys = [(e["score"] is None, -(e["score"] or 0.0), e["metadata"]["adapter_id"]) for e in ev]
    assert keys == sorted(keys), "rank 1 is the highest reranked score"
    scored = [e["score"] for e in ev if e["score"] is not None]
    assert scored == sorted(scored, reverse=True)

    def strip(e: dict[str, Any]) -> dict[str, Any]:  # ids are per request; everything else agrees
        return {**e, "metadata": {k: v for k, v in e["metadata"].items() if k not in ("evidence_id", "call_id")}}

    assert [strip(e) for e in sse] == [strip(e) for e in ev]
    # the same request again ranks the same way
    again, _ = _answer(api, query)
    assert [(e["rank"], e["metadata"]["adapter_id"]) for e in again["evidence"]] == \
        [(e["rank"], e["metadata"]["adapter_id"]) for e in ev]


def test_the_rule_orders_ties_by_adapter_id_and_unscored_last() -> None:
    def item(aid: str, score: float | None, n: int) -> dict[str, Any]:
        return {"score": score, "metadata": {"adapter_id": aid, "n": n}}

    got = evidence_order([item("b", 1.0, 0), item("x", None, 1), item("a", 1.0, 2), item("c", 5.0, 3),
                          item("a", 1.0, 4)])
    assert [(e["metadata"]["adapter_id"], e["metadata"]["n"]) for e in got] == \
        [("c", 3), ("a", 2), ("a", 4), ("b", 0), ("x", 1)]


def test_the_rule_is_in_the_policy(api: Any) -> None:
    r = api.post("/v1/retrieve", json={"query": "부산역 근처 약국"}).json()
    assert r["policy"]["rerank"]["evidence_order"] == "score_desc_adapter_id_asc"
