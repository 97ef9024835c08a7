"""The server's trace writer (runtime/store/trace_writer.py): batched on its own thread, bounded
with a visible refusal, drained on close, one bad trace never failing its batch, and (SQLite)
session reads never waiting behind an open trace batch."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest

from tests.store.conftest import db_url, pg_base_url, pg_url, store  # noqa: F401  (both backends)
from ummaya.runtime.store import Session, Trace
from ummaya.runtime.store.records import utcnow
from ummaya.runtime.store.trace_writer import TraceBacklog, TraceWriter


def job(trace: Trace, gate: threading.Event | None = None, started: threading.Event | None = None):
    def run():
        if started is not None:
            started.set()
        if gate is not None:
            gate.wait()
        return trace, None, ()
    return run


def test_every_submitted_trace_is_stored_and_resolved(store) -> None:  # noqa: F811
    w = TraceWriter(store, batch=8)
    traces = [Trace(request_text=f"q{i}", answer_text=f"a{i}") for i in range(40)]
    futures = [w.submit(job(t)) for t in traces]
    assert w.flush()
    for t, f in zip(traces, futures):
        assert f.result() is not None and f.result().trace_id == t.trace_id
        assert store.get_trace(t.trace_id).answer_text == t.answer_text
    s = w.stats()
    assert s["stored"] == 40 and s["failed"] == 0 and s["rejected"] == 0 and s["queued"] == 0
    assert 5 <= s["batches"] <= 40  # at most 8 a batch
    w.close()


def test_a_full_queue_refuses_with_a_code_and_counts_it(store) -> None:  # noqa: F811
    gate = threading.Event()
    w = TraceWriter(store, capacity=2, batch=1)
    first = Trace(request_text="held")
    started = threading.Event()
    f1 = w.submit(job(first, gate, started))  # taken by the thread, which waits on the gate
    started.wait()
    f2, f3 = w.submit(job(Trace(request_text="b"))), w.submit(job(Trace(request_text="c")))
    assert w.full()
    f4 = w.submit(job(Trace(request_text="d")))
    with pytest.raises(TraceBacklog) as caught:
        f4.result(timeout=0)
    assert caught.value.code == "trace_backlog"
    assert w.stats()["rejected"] == 1 and w.stats()["queued"] == 2
    gate.set()
    assert w.flush()
    assert all(f.result() is not None for f in (f1, f2, f3))
    assert store.get_trace(first.trace_id) is not None
    w.close()


def test_close_drains_what_is_queued(store) -> None:  # noqa: F811
    gate = threading.Event()
    w = TraceWriter(store, batch=2)
    traces = [Trace(request_text=f"q{i}") for i in range(7)]
    futures = [w.submit(job(traces[0], gate))] + [w.submit(job(t)) for t in traces[1:]]
    gate.set()
    w.close()
    assert all(f.done() and f.result() is not None for f in futures)
    assert all(store.get_trace(t.trace_id) is not None for t in traces)
    late = Trace(request_text="after close")  # written in the caller's thread
    assert w.submit(job(late)).result() is not None and store.get_trace(late.trace_id) is not None


def test_one_bad_trace_fails_alone(store) -> None:  # noqa: F811
    w = TraceWriter(store, batch=64)
    gate = threading.Event()
    now = utcnow()
    bad = Trace(request_text="bad", states=[{"state": "completed", "at": now.isoformat()},
                                            {"state": "received", "at": (now + timedelta(seconds=1)).isoformat()}])
    good = [Trace(request_text=f"g{i}") for i in range(4)]
    fs = [w.submit(job(good[0], gate)), w.submit(job(bad))] + [w.submit(job(t)) for t in good[1:]]
    gate.set()
    assert w.flush()
    with pytest.raises(Exception):
        fs[1].result(timeout=0)
    assert all(store.get_trace(t.trace_id) is not None for t in good)
    assert w.stats()["failed"] == 1 and w.stats()["stored"] == 4
    w.close()


def test_a_failed_batch_is_retried_trace_by_trace(store) -> None:  # noqa: F811
    real = store.put_staged_traces
    calls: list[int] = []

    def flaky(rows):
        calls.append(len(rows))
        if len(rows) > 1:
            raise RuntimeError("batch refused")
        return real(rows)

    store.put_staged_traces = flaky
    gate = threading.Event()
    w = TraceWriter(store, batch=64)
    traces = [Trace(request_text=f"q{i}") for i in range(5)]
    w.submit(job(traces[0], gate))
    rest = [w.submit(job(t)) for t in traces[1:]]
    gate.set()
    assert w.flush()
    assert all(f.result() is not None for f in rest)
    assert all(store.get_trace(t.trace_id) is not None for t in traces)
    assert any(n > 1 for n in calls)
    w.close()


def test_sessions_are_read_while_a_trace_batch_is_open(tmp_path) -> None:
    from ummaya.runtime.store import open_store

    s = open_store(f"sqlite:///{tmp_path}/t.db")
    s.migrate()
    s.put_session(Session(session_id="s1", slots={"a": 1}))
    inside, release = threading.Event(), threading.Event()
    real = s._write_trace_row

    def slow_row(tx, stored):
        real(tx, stored)
        inside.set()
        release.wait()

    s._write_trace_row = slow_row
    w = TraceWriter(s)
    f = w.submit(job(Trace(request_text="x")))
    inside.wait()
    got: list[object] = []
    reader = threading.Thread(target=lambda: got.append(s.get_session("s1")))
    reader.start()
    reader.join(30)
    try:
        assert not reader.is_alive() and got and got[0].slots == {"a": 1}  # not behind the batch
        assert not f.done()
    finally:
        release.set()
    assert f.result(30) is not None
    w.close()
    s.close()
