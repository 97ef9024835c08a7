"""Traces through the server's writer (runtime/store/trace_writer.py): every answer sent as
completed names a trace that is already stored; a full queue refuses new work with
``trace_backlog`` (counted on /healthz); traces queued without waiting are written on shutdown."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from tests.serve.conftest import client, parse_sse
from ummaya.runtime.store import open_store

LOOKUP = {"query": "동아대 승학캠퍼스 근처 응급실 알려줘", "mode": "mock"}


def test_every_completed_answer_has_its_trace_stored(generated: Path, sqlite_url: str, tmp_path: Path) -> None:
    with client(generated, sqlite_url, tmp_path) as c:
        store = c.app.state.service.store
        ids = []
        for i in range(6):
            if i % 2:
                done = parse_sse(c.post("/v1/answer", json={**LOOKUP, "stream": True}).text)[-1]
                assert done["event"] == "completed"
                ids.append(done["data"]["trace_id"])
            else:
                r = c.post("/v1/answer", json=LOOKUP)
                assert r.status_code == 200
                ids.append(r.json()["trace_id"])
            # read straight from the database, no flush: "completed" came after the commit
            assert ids[-1] and store.get_trace(ids[-1]) is not None
        stats = c.get("/healthz").json()["traces"]
        assert stats["stored"] >= 6 and stats["rejected"] == 0 and stats["queued"] == 0


def test_a_full_trace_queue_refuses_with_trace_backlog(generated: Path, sqlite_url: str, tmp_path: Path) -> None:
    with client(generated, sqlite_url, tmp_path) as c:
        writer = c.app.state.service.traces
        writer.capacity = 0  # nothing may wait: every new trace is refused
        r = c.post("/v1/answer", json=LOOKUP)
        assert r.status_code == 503
        err = r.json()["error"]
        assert err["code"] == "trace_backlog" and err["trace_id"] is None  # its own trace was refused too
        stats = c.get("/healthz").json()["traces"]
        assert stats["rejected"] >= 1 and stats["capacity"] == 0
        writer.capacity = 1024
        assert c.post("/v1/answer", json=LOOKUP).status_code == 200


def test_traces_queued_without_waiting_are_written_on_shutdown(generated: Path, sqlite_url: str, tmp_path: Path) -> None:
    from ummaya.runtime.serve.pipeline import RequestState
    from ummaya.runtime.store.records import utcnow

    gate = threading.Event()
    with client(generated, sqlite_url, tmp_path) as c:
        service = c.app.state.service
        real = service.traces.submit

        def held(job: Any) -> Any:  # the writer's thread waits on the gate before each trace
            return real(lambda: (gate.wait(), job())[1])

        service.traces.submit = held
        states = []
        for i in range(3):  # a client that went away mid-turn: queued, nobody waits
            st = RequestState("answer", f"01ARZ3NDEKTSV4RRFFQ69G5FA{i}", utcnow())
            st.mark("received")
            st.error = {"code": "client_disconnected", "message": "gone"}
            st.mark("failed")
            service.write_trace_sync(st)
            states.append(st)
        assert service.traces.stats()["submitted"] >= 3
        assert all(service.store.get_trace(st.trace_id) is None for st in states)  # still held
        real_close = service.traces.close

        def close_after_release(*a: Any, **kw: Any) -> None:
            gate.set()  # the writer goes on only once shutdown has begun
            real_close(*a, **kw)

        service.traces.close = close_after_release
    # the app has shut down: the queue was drained before the store closed
    store = open_store(sqlite_url)
    try:
        assert all(store.get_trace(st.trace_id) is not None for st in states)
    finally:
        store.close()
