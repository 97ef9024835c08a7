"""Bad input: stable 4xx codes in the one error shape, the same code in both modes, nothing
half-written, the server stays up — including a client that disconnects mid-stream."""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.serve.conftest import parse_sse
from tests.support.fake_openai import FakeOpenAIServer, stream_text, stream_tool_calls
from ummaya.runtime.store import open_store

OK = "부산시청 위치 알려줘"

CASES: list[tuple[str, Any, int, str]] = [
    ("malformed json", b'{"query": "x",', 400, "invalid_json"),
    ("not an object", [], 422, "invalid_request"),
    ("empty object", {}, 422, "invalid_request"),
    ("query wrong type", {"query": 5}, 422, "invalid_request"),
    ("query null", {"query": None}, 422, "invalid_request"),
    ("query empty", {"query": ""}, 422, "empty_query"),
    ("query only whitespace and controls", {"query": " \t\u0000\u200b "}, 422, "empty_query"),
    ("query too long", {"query": "가" * 2001}, 422, "query_too_long"),
    ("top_k wrong type", {"query": OK, "top_k": "many"}, 422, "invalid_request"),
    ("top_k zero", {"query": OK, "top_k": 0}, 422, "invalid_request"),
    ("top_k huge", {"query": OK, "top_k": 10**9}, 422, "invalid_request"),
    ("stream wrong type", {"query": OK, "stream": "yes please"}, 422, "invalid_request"),
    ("unknown field", {"query": OK, "temperature": 2}, 422, "invalid_request"),
    ("unknown release", {"query": OK, "release_alias": "does-not-exist"}, 404, "release_not_found"),
    ("release alias with odd characters", {"query": OK, "release_alias": "../../etc"}, 422, "invalid_request"),
    ("other knowledge base", {"query": OK, "knowledge_base_id": "other"}, 404, "knowledge_base_not_found"),
    ("unknown filter key", {"query": OK, "filters": {"colour": "red"}}, 422, "unknown_filter"),
    ("filter unknown primitive", {"query": OK, "filters": {"primitive": "teleport"}}, 422, "invalid_filter"),
    ("filter empty string", {"query": OK, "filters": {"domain": ""}}, 422, "invalid_filter"),
    ("filter empty list", {"query": OK, "filters": {"tier": []}}, 422, "invalid_filter"),
    ("filter over-long value", {"query": OK, "filters": {"agency": "x" * 500}}, 422, "invalid_filter"),
    ("filter number", {"query": OK, "filters": {"primitive": 3}}, 422, "invalid_filter"),
    ("filter object", {"query": OK, "filters": {"agency": {"code": "NMC"}}}, 422, "invalid_filter"),
    ("filter whitespace", {"query": OK, "filters": {"domain": "   "}}, 422, "invalid_filter"),
    ("filter list with a number", {"query": OK, "filters": {"tier": ["live", 1]}}, 422, "invalid_filter"),
    ("filters not an object", {"query": OK, "filters": ["primitive"]}, 422, "invalid_request"),
]
ANSWER_ONLY: list[tuple[str, Any, int, str]] = [
    ("consent for unknown adapter", {"query": OK, "consents": ["no_such_adapter"]}, 404, "unknown_adapter"),
    ("consent not an adapter id", {"query": OK, "consents": ["../x"]}, 422, "invalid_request"),
    ("unknown planner", {"query": OK, "generation": {"planner": "gpt"}}, 422, "invalid_request"),
    ("session id with odd characters", {"query": OK, "session_id": "a b/c"}, 422, "invalid_request"),
    ("mode unknown", {"query": OK, "mode": "turbo"}, 422, "invalid_request"),
]


def _post(api: Any, path: str, body: Any, **kw: Any) -> Any:
    if isinstance(body, bytes):
        return api.post(path, content=body, headers={"content-type": "application/json"}, **kw)
    return api.post(path, json=body, **kw)


def _shape(r: Any) -> dict[str, Any]:
    body = r.json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message", "trace_id"}, body
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]
    return body["error"]


@pytest.mark.parametrize("path", ["/v1/answer", "/v1/retrieve"])
@pytest.mark.parametrize("name,body,status,code", CASES, ids=[c[0] for c in CASES])
def test_bad_input_json(api: Any, path: str, name: str, body: Any, status: int, code: str) -> None:
    r = _post(api, path, body)
    assert r.status_code == status, r.text
    assert _shape(r)["code"] == code


@pytest.mark.parametrize("name,body,status,code", ANSWER_ONLY, ids=[c[0] for c in ANSWER_ONLY])
def test_bad_input_answer_only(api: Any, name: str, body: Any, status: int, code: str) -> None:
    r = _post(api, "/v1/answer", body)
    assert r.status_code == status, r.text
    assert _shape(r)["code"] == code


@pytest.mark.parametrize("name,body,status,code",
                         [c for c in CASES + ANSWER_ONLY if isinstance(c[1], dict) and c[1]],
                         ids=[c[0] for c in CASES + ANSWER_ONLY if isinstance(c[1], dict) and c[1]])
def test_same_code_when_a_stream_was_asked_for(api: Any, name: str, body: dict[str, Any], status: int,
                                               code: str) -> None:
    stream_body = {**body, "stream": True} if "stream" not in body else body
    r = api.post("/v1/answer", json=stream_body)
    assert r.status_code == status
    if r.headers["content-type"].startswith("text/event-stream"):
        events = parse_sse(r.text)
        assert [e["event"] for e in events] == ["metadata", "error"]
        assert events[1]["data"]["error"]["code"] == code
    else:
        assert _shape(r)["code"] == code


def test_size_limit_and_media_type(api: Any) -> None:
    big = json.dumps({"query": "가" * 40000}).encode()  # 120 KB of UTF-8
    r = api.post("/v1/answer", content=big, headers={"content-type": "application/json"})
    assert r.status_code == 413 and _shape(r)["code"] == "payload_too_large"

    def chunks():  # no Content-Length: the limit holds for chunked bodies too
        for _ in range(20):
            yield b" " * 4096
        yield b'{"query": "x"}'

    r = api.post("/v1/answer", content=chunks(), headers={"content-type": "application/json"})
    assert r.status_code == 413 and _shape(r)["code"] == "payload_too_large"
    r = api.post("/v1/answer", content=b"query=x", headers={"content-type": "application/x-www-form-urlencoded"})
    assert r.status_code == 415 and _shape(r)["code"] == "unsupported_media_type"
    t = api.get(f"/v1/traces/{_shape(r)['trace_id']}").json()  # refused unread, still traced
    assert t["state"] == "failed" and t["meta"]["error"]["code"] == "unsupported_media_type"
    r = api.post("/v1/answer", content=json.dumps({"query": OK, "mode": "mock"}).encode())  # no content type
    assert r.status_code == 200
    r = api.get("/v1/nothing-here")
    assert r.status_code == 404 and _shape(r)["code"] == "not_found"
    r2 = api.get("/v1/answer")
    assert r2.status_code == 405 and _shape(r2)["code"] == "method_not_allowed"
    # every error names a trace id a citizen can quote, routing errors included, each its own
    ids = {_shape(r)["trace_id"], _shape(r2)["trace_id"]}
    assert None not in ids and len(ids) == 2


def test_nothing_half_written(api: Any, generated: Path, sqlite_url: str) -> None:
    r = api.post("/v1/answer", json={"query": OK, "consents": ["no_such_adapter"]})
    assert r.status_code == 404
    r = api.post("/v1/answer", json={"query": ""})
    assert r.status_code == 422
    with open_store(sqlite_url) as store:
        with store.tx(write=False) as tx:  # refused requests are issued no session
            assert tx.q("SELECT count(*) AS n FROM server_sessions")[0]["n"] == 0
            assert tx.q("SELECT count(*) AS n FROM sessions")[0]["n"] == 0
        assert store.list_consents() == []
        t = store.get_trace(r.json()["error"]["trace_id"])
        assert t is not None and t.state == "failed" and t.meta["error"]["code"] == "empty_query"
    assert api.get("/healthz").status_code == 200


def test_client_disconnect_mid_stream(live_server: Any, tmp_path: Path) -> None:
    """A client that goes away mid-answer: the turn is cancelled, the trace says so, the server
    stays up and answers the next request."""
    slow = stream_text("천천히 답하는 중입니다. " * 40, piece=6)
    slow.delay_between_s = 0.05  # ~10 s of deltas if nobody stops it
    locate = stream_tool_calls([("kakao_keyword_search", '{"query": "동아대 승학캠퍼스"}')])
    with FakeOpenAIServer(script=[locate, slow]) as llm:  # the model writes slowly after the lookup
        db = f"sqlite:///{tmp_path / 'disconnect.sqlite3'}"
        srv = live_server(db, UMMAYA_LLM_BASE_URL=llm.base_url)
        body = {"query": "동아대 승학캠퍼스 근처 약국 어디 있어?", "stream": True, "mode": "mock",
                "generation": {"planner": "openai", "timeout_s": 30}}
        trace_id = None
        with httpx.stream("POST", srv.url + "/v1/answer", json=body, timeout=30) as r:
            assert r.status_code == 200
            seen = 0
            for line in r.iter_lines():
                if line.startswith("data: ") and trace_id is None:
                    trace_id = json.loads(line[6:])["trace_id"]
                if line == "event: tool_result":
                    seen += 1
                    break  # hang up while the model is still writing its answer
        # No clock: that the client hung up while the model was still writing is what the stored
        # trace says below (failed, client_disconnected) — a turn that ran to its end first would
        # be stored as completed.
        assert trace_id and seen == 1
        assert srv.alive()
        r = httpx.post(srv.url + "/v1/answer", json={"query": OK, "mode": "mock"}, timeout=30)
        assert r.status_code == 200 and r.json()["stop_reason"] == "completed"
        # The abandoned turn's trace is written off the request (the trace writer's thread); a
        # graceful shutdown drains that queue (runtime/store/trace_writer.py), so the server's
        # exit is the signal that it is stored — no polling for it.
        srv.proc.terminate()
        # uvicorn re-raises the SIGTERM it handled once its graceful shutdown is over.
        assert srv.proc.wait(timeout=60) in (0, -signal.SIGTERM), srv.log.read_text(errors="replace")
    with open_store(db) as store:
        t = store.get_trace(trace_id)
    assert t is not None
    assert t.state == "failed" and t.meta["error"]["code"] == "client_disconnected"
