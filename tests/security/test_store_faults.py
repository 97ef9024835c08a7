"""Issue 19 low items / item 10: storage faults have stable codes, a public lookup still answers when
its trace cannot be written (and says so, naming no trace), and a trace is stored for every request
whatever its text (SQLite and PostgreSQL).

Before: every storage fault became a generic ``internal_error`` whose ``trace_id`` named a trace
that was never stored; a full disk failed even public lookups; a lone surrogate in an MCP argument
meant the trace was not stored at all.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import contextmanager

import pytest

from tests.serve.conftest import client, parse_sse
from tests.serve.conftest import RELEASE_CACHE, _isolated_home, _release_cache, generated  # noqa: F401
from tests.store.conftest import db_url, pg_base_url, pg_url, store  # noqa: F401  (both backends)
from ummaya.runtime.store import StoreFault, Trace, open_store

LOOKUP = {"query": "동아대 승학캠퍼스 근처 응급실 알려줘", "mode": "mock"}


def backend_error(dialect: str, kind: str) -> Exception:
    """The exception the backend itself raises for a full disk, a lock, an unreachable server."""
    if dialect == "sqlite":
        return sqlite3.OperationalError({"full": "database or disk is full", "busy": "database is locked",
                                         "unavailable": "unable to open database file"}[kind])
    import psycopg

    return {"full": psycopg.errors.DiskFull("could not extend file: No space left on device"),
            "busy": psycopg.errors.LockNotAvailable("canceling statement due to lock timeout"),
            "unavailable": psycopg.OperationalError("connection to server failed")}[kind]


def failing(store, kind: str, *, writes_only: bool = True):  # noqa: F811
    """Make the store's backend fail its transactions the way a real fault does."""
    real = store._transaction

    @contextmanager
    def broken(write: bool):
        if write or not writes_only:
            raise backend_error(store.dialect, kind)
        with real(write) as cur:
            yield cur

    store._transaction = broken
    return lambda: setattr(store, "_transaction", real)


@pytest.mark.parametrize("kind,code", [("full", "store_full"), ("busy", "store_busy"),
                                       ("unavailable", "store_unavailable")])
def test_faults_have_stable_codes(store, kind, code) -> None:  # noqa: F811
    restore = failing(store, kind)
    with pytest.raises(StoreFault) as caught:
        store.put_trace(Trace(request_text="x"))
    assert caught.value.code == code
    restore()
    assert store.put_trace(Trace(request_text="x")) is not None


def test_a_real_lock_is_store_busy(db_url, monkeypatch) -> None:  # noqa: F811
    if not db_url.startswith("sqlite"):
        pytest.skip("the lock wait is SQLite's busy timeout (PostgreSQL: classified above)")
    monkeypatch.setenv("UMMAYA_DB_BUSY_TIMEOUT_MS", "50")
    from ummaya.runtime.store import sqlite_path

    s = open_store(db_url)
    holder = sqlite3.connect(sqlite_path(db_url), isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(StoreFault) as caught:
            s.put_trace(Trace(request_text="x"))
        assert caught.value.code == "store_busy"
    finally:
        holder.close()
        s.close()


@pytest.mark.parametrize("kind,code", [("full", "store_full"), ("busy", "store_busy"),
                                       ("unavailable", "store_unavailable")])
def test_a_public_lookup_still_answers_and_claims_no_trace(generated, db_url, tmp_path, kind, code) -> None:  # noqa: F811
    with client(generated, db_url, tmp_path) as c:
        failing(c.app.state.service.store, kind)
        r = c.post("/v1/answer", json=LOOKUP)
        assert r.status_code == 200, r.text
        j = r.json()
        assert j["stop_reason"] == "completed" and "응급" in j["answer"]
        assert j["trace_stored"] is False and j["trace_id"] is None and j["session_id"] is None
        sse = parse_sse(c.post("/v1/answer", json={**LOOKUP, "stream": True}).text)
        done = sse[-1]
        assert done["event"] == "completed" and done["data"]["trace_stored"] is False
        assert done["data"]["trace_id"] is None
        # The id the stream's first event carried names nothing: it was never stored.
        assert c.get(f"/v1/traces/{sse[0]['data']['trace_id']}").status_code in (404, 503)


def test_what_needs_the_store_gets_its_code_and_no_trace_id(generated, db_url, tmp_path) -> None:  # noqa: F811
    with client(generated, db_url, tmp_path) as c:
        sid = c.post("/v1/answer", json=LOOKUP).json()["session_id"]
        failing(c.app.state.service.store, "unavailable", writes_only=False)
        r = c.post("/v1/answer", json={**LOOKUP, "session_id": sid})
        assert r.status_code == 503 and r.json()["error"] == {
            "code": "store_unavailable", "message": r.json()["error"]["message"], "trace_id": None}
        assert c.get("/v1/traces/01ARZ3NDEKTSV4RRFFQ69G5FAV").json()["error"]["code"] == "store_unavailable"


def test_a_gated_adapter_is_denied_not_crashed_when_the_store_is_full(generated, db_url, tmp_path) -> None:  # noqa: F811
    with client(generated, db_url, tmp_path) as c:
        failing(c.app.state.service.store, "full")
        r = c.post("/v1/answer", json={"query": "홍길동 1990-01-01 기초연금 신청해줘", "mode": "mock",
                                       "consents": ["welfare_application_submit"]})
        assert r.status_code == 200 and r.json()["stop_reason"] == "permission_denied", r.text


# ---------------------------------------------------------------- a trace whatever the text


def test_a_lone_surrogate_is_stored_escaped(store) -> None:  # noqa: F811
    t = store.put_trace(Trace(request_text="부산\ud800역", calls=[{"arguments": {"q\udc00": "x\udfffy"}}],
                              meta={"note": ["\ud83d"]}))
    got = store.get_trace(t.trace_id)
    assert got.request_text == "부산\\ud800역" and got.calls == [{"arguments": {"q\\udc00": "x\\udfffy"}}]
    assert got.meta["note"] == ["\\ud83d"]


def test_a_lone_surrogate_over_http_is_traced(generated, db_url, tmp_path) -> None:  # noqa: F811
    with client(generated, db_url, tmp_path) as c:
        body = '{"query": "\\ud800 \\uc751\\uae09\\uc2e4 \\uc54c\\ub824\\uc918", "mode": "mock"}'
        r = c.post("/v1/answer", content=body.encode(), headers={"content-type": "application/json"})
        tid = r.json().get("trace_id") or r.json()["error"]["trace_id"]
        assert tid and c.get(f"/v1/traces/{tid}").status_code == 200, r.text


def test_a_lone_surrogate_in_an_mcp_argument_is_traced(generated, store) -> None:  # noqa: F811
    import anyio
    from mcp import Client

    from ummaya.runtime.service import TurnService
    from ummaya.runtime.mcp import McpBackend
    from ummaya.runtime.mcp.server import build_server

    service = TurnService.load(generated, store=store)
    backend = McpBackend(lambda: service, mode="mock", session_id="mcp-s")

    async def go():
        async with Client(build_server(backend)) as c:
            return await c.call_tool("kakao_keyword_search", {"query": "부산\ud800역"})

    r = anyio.run(go)
    t = store.get_trace(r.meta["ummaya/trace_id"])
    assert t is not None and "\\ud800" in json.dumps(t.to_dict(), ensure_ascii=False)
