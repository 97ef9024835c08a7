"""S04 non-stream answers, S05 the SSE contract and JSON/SSE parity, for each primitive of the
catalog; the request state machine in the stored trace; health, readiness and releases."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.serve.conftest import client, parse_sse

TERMINAL = {"completed", "error"}
STATE_ORDER = ["received", "resolved", "retrieving", "reranking", "generating", "completed"]
_QUERIES: dict[str, str] = {}


def primitive_queries(api: Any, generated: Path) -> dict[str, str]:
    """For each primitive in the catalog, the first adapter example (adapters by id, Korean then
    English) whose mock answer calls an adapter of that primitive and ends completed / handoff."""
    if _QUERIES:
        return _QUERIES
    cat = json.loads((generated / "catalog.json").read_bytes())
    prims = sorted({a["primitive"] for a in cat["adapters"]})
    for prim in prims:
        for a in sorted(cat["adapters"], key=lambda a: a["id"]):
            if a["primitive"] != prim or prim in _QUERIES:
                continue
            for q in [*a["examples"]["ko"], *a["examples"]["en"]]:
                r = api.post("/v1/answer", json={"query": q, "mode": "mock"})
                if r.status_code != 200:
                    continue
                j = r.json()
                if j["stop_reason"] in ("completed", "handoff_required") and any(
                        c["primitive"] == prim and c["status"] in ("ok", "handoff") for c in j["calls"]):
                    _QUERIES[prim] = q
                    break
    assert set(_QUERIES) == set(prims), f"no working example for {set(prims) - set(_QUERIES)}"
    return _QUERIES


def catalog_primitives(generated: Path) -> list[str]:
    cat = json.loads((generated / "catalog.json").read_bytes())
    return sorted({a["primitive"] for a in cat["adapters"]})


def test_health_ready_and_first_release_published_at_startup(api: Any, generated: Path) -> None:
    health = api.get("/healthz").json()
    assert health["status"] == "ok"
    # The trace writer's queue, for an operator to see a backlog before it refuses turns (503).
    assert health["traces"]["queued"] == 0 and health["traces"]["failed"] == 0
    assert health["traces"]["capacity"] > 0
    ready = api.get("/readyz")
    assert ready.status_code == 200
    rid = json.loads((generated / "catalog.json").read_bytes())["release_id"]
    assert ready.json()["release"] == {"id": rid, "alias": "production"}
    rel = api.get("/v1/releases").json()
    assert rel["aliases"] == {"production": rid}
    assert rel["releases"][0]["release_id"] == rid and rel["releases"][0]["aliases"] == ["production"]
    assert rel["releases"][0]["retrieval_policy"]["analyzer"] == "ngram"


def test_not_ready_without_a_release(generated: Path, sqlite_url: str, tmp_path: Path) -> None:
    with client(generated, sqlite_url, tmp_path, auto_publish=False) as c:
        r = c.get("/readyz")
        assert r.status_code == 503 and r.json()["error"]["code"] == "not_ready"
        r = c.post("/v1/answer", json={"query": "부산 약국"})
        assert r.status_code == 404 and r.json()["error"]["code"] == "release_not_found"


@pytest.mark.parametrize("primitive", ["locate", "find", "check", "send"])
def test_s04_non_stream_answer_per_primitive(api: Any, generated: Path, primitive: str) -> None:
    if primitive not in catalog_primitives(generated):
        pytest.skip(f"the catalog has no {primitive} adapter")
    q = primitive_queries(api, generated)[primitive]
    r = api.post("/v1/answer", json={"query": q, "mode": "mock"})
    assert r.status_code == 200, r.text
    j = r.json()
    assert set(j) >= {"trace_id", "release", "evidence", "calls", "answer", "stop_reason", "usage"}
    assert j["release"]["alias"] == "production" and len(j["release"]["id"]) == 64
    assert any(c["primitive"] == primitive for c in j["calls"])
    for c in j["calls"]:
        assert set(c) >= {"adapter_id", "primitive", "tier", "status"}
        assert c["tier"] in ("mock", "handoff")  # nothing reached a real upstream
    assert j["answer"].strip()
    assert j["evidence"], "an answer that called adapters carries their evidence"
    assert [e["rank"] for e in j["evidence"]] == list(range(1, len(j["evidence"]) + 1))
    called = {c["adapter_id"] for c in j["calls"]}
    for e in j["evidence"]:
        assert set(e) == {"rank", "score", "content", "citation", "metadata"}
        assert e["metadata"]["adapter_id"] in called
        assert e["metadata"]["evidence_id"].startswith("ev")
        assert e["citation"].get("url", "").startswith("http")
    assert {"prompt_tokens", "completion_tokens", "total_tokens"} <= set(j["usage"])


def _stream(api: Any, body: dict[str, Any]) -> tuple[int, str, list[dict[str, Any]]]:
    r = api.post("/v1/answer", json={**body, "stream": True})
    return r.status_code, r.headers["content-type"], parse_sse(r.text)


def check_sse_contract(events: list[dict[str, Any]]) -> None:
    assert [e["id"] for e in events] == list(range(len(events))), "ids are the sequence numbers"
    assert events[0]["event"] == "metadata"
    assert {"trace_id", "release"} <= set(events[0]["data"])
    terminals = [e for e in events if e["event"] in TERMINAL]
    assert len(terminals) == 1 and events[-1] is terminals[0], "exactly one terminal event, last"
    allowed = {"metadata", "evidence", "tool_call", "tool_result", "permission", "delta", *TERMINAL}
    assert {e["event"] for e in events} <= allowed
    for e in events:
        if e["event"] == "delta":
            assert isinstance(e["data"]["text"], str) and e["data"]["text"]


@pytest.mark.parametrize("primitive", ["locate", "find", "check", "send"])
def test_s05_sse_contract_and_parity_per_primitive(api: Any, generated: Path, primitive: str) -> None:
    if primitive not in catalog_primitives(generated):
        pytest.skip(f"the catalog has no {primitive} adapter")
    q = primitive_queries(api, generated)[primitive]
    body = {"query": q, "mode": "mock"}  # each a first turn: the server issues the session ids
    j = api.post("/v1/answer", json=body).json()
    status, ctype, events = _stream(api, body)
    assert status == 200 and ctype.startswith("text/event-stream")
    check_sse_contract(events)
    assert events[-1]["event"] == "completed"
    text = "".join(e["data"]["text"] for e in events if e["event"] == "delta")
    assert text.encode() == j["answer"].encode(), "concatenated deltas equal the JSON answer byte for byte"
    sse_ev = [e["data"] for e in events if e["event"] == "evidence"]
    assert [e["metadata"]["evidence_id"] for e in sse_ev] == [e["metadata"]["evidence_id"] for e in j["evidence"]]
    assert [e["content"] for e in sse_ev] == [e["content"] for e in j["evidence"]]
    done = events[-1]["data"]
    assert done["stop_reason"] == j["stop_reason"]
    assert [(c["adapter_id"], c["status"]) for c in done["calls"]] == [(c["adapter_id"], c["status"]) for c in j["calls"]]
    # tool calls are announced before their evidence, and every call gets a result
    kinds = [e["event"] for e in events]
    if "evidence" in kinds:
        assert kinds.index("tool_call") < kinds.index("tool_result") < kinds.index("evidence")
    assert kinds.count("tool_call") == kinds.count("tool_result")
    assert events[0]["data"]["trace_id"] == done["trace_id"]


def test_request_states_land_in_the_trace(api: Any, generated: Path) -> None:
    q = primitive_queries(api, generated)["find"]
    j = api.post("/v1/answer", json={"query": q, "mode": "mock"}).json()
    t = api.get(f"/v1/traces/{j['trace_id']}")
    assert t.status_code == 200
    t = t.json()
    assert [s["state"] for s in t["states"]] == STATE_ORDER
    assert t["state"] == "completed" and t["expires_at"] and t["release_id"] == j["release"]["id"]
    assert t["release_alias"] == "production" and t["stop_reason"] == j["stop_reason"]
    assert t["timings"]["total_ms"] > 0 and "rerank_ms" in t["timings"]
    assert t["meta"]["rerank"]["kept"], "the rerank report is kept with the trace"
    # retrieve skips generating
    r = api.post("/v1/retrieve", json={"query": q}).json()
    t = api.get(f"/v1/traces/{r['trace_id']}").json()
    assert [s["state"] for s in t["states"]] == ["received", "resolved", "retrieving", "reranking", "completed"]
    # a refused request is traced as failed, with its code
    e = api.post("/v1/answer", json={"query": q, "release_alias": "nope"}).json()
    t = api.get(f"/v1/traces/{e['error']['trace_id']}").json()
    assert [s["state"] for s in t["states"]] == ["received", "failed"]
    assert t["meta"]["error"]["code"] == "release_not_found"


def test_unknown_trace_is_404_in_the_one_shape(api: Any) -> None:
    r = api.get("/v1/traces/01NOPE")
    assert r.status_code == 404
    assert r.json() == {"error": {"code": "trace_not_found", "message": "no trace '01NOPE'", "trace_id": "01NOPE"}}


def test_session_carries_location_between_answers(api: Any, generated: Path) -> None:
    first = api.post("/v1/answer", json={"query": "동아대 승학캠퍼스 근처 약국 어디 있어?",
                                         "mode": "mock"}).json()
    assert first["stop_reason"] == "completed"
    sid = first["session_id"]  # issued by the server on the first turn
    second = api.post("/v1/answer", json={"query": "거기 근처 약국 다시 알려줘", "mode": "mock",
                                          "session_id": sid}).json()
    assert second["session_id"] == sid
    # the location was reused, not looked up again
    assert "kakao_keyword_search" not in [c["adapter_id"] for c in second["calls"]]


def test_retrieve_stream_matches_json(api: Any) -> None:
    body = {"query": "동아대 근처 약국 응급실 어디 있어?", "top_k": 3}
    j = api.post("/v1/retrieve", json=body).json()
    r = api.post("/v1/retrieve", json={**body, "stream": True})
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
    events = parse_sse(r.text)
    assert [e["id"] for e in events] == list(range(len(events)))
    assert events[0]["event"] == "metadata" and events[-1]["event"] == "completed"
    cands = [e["data"] for e in events if e["event"] == "candidate"]
    assert [(c["rank"], c["metadata"]["adapter_id"], c["score"]) for c in cands] == \
        [(c["rank"], c["metadata"]["adapter_id"], c["score"]) for c in j["candidates"]]
