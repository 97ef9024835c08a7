"""Several processes on one database: what one grants or traces, the others see at once.

This is the scale-out claim of issue 4 (two server replicas on one PostgreSQL); it runs on the
SQLite file too, since the CLI and a local server share one file the same way.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from ummaya.runtime.store import MIGRATIONS, open_store

WORKER = Path(__file__).with_name("store_worker.py")


class Worker:
    def __init__(self, url: str):
        self.proc = subprocess.Popen([sys.executable, str(WORKER), url], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     encoding="utf-8")

    def send(self, obj: dict | str) -> None:
        line = obj if isinstance(obj, str) else json.dumps(obj, ensure_ascii=False)
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def read(self, timeout: float = 60) -> dict:
        result: list[str] = []
        t = threading.Thread(target=lambda: result.append(self.proc.stdout.readline()))
        t.start()
        t.join(timeout)
        if not result or not result[0]:
            self.proc.kill()
            raise AssertionError("worker gave no answer: " + self.proc.stderr.read())
        reply = json.loads(result[0])
        assert "error" not in reply, reply["error"]
        return reply

    def __call__(self, **cmd) -> dict:
        self.send(cmd)
        return self.read()

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.send({"op": "quit"})
                self.proc.wait(10)
            except Exception:
                self.proc.kill()
        self.proc.wait()


def start_workers(url: str, n: int) -> list[Worker]:
    workers = [Worker(url) for _ in range(n)]
    for w in workers:  # release them together: they race for the migrations
        w.send("go")
    return workers


@pytest.fixture
def workers_factory():
    made: list[Worker] = []

    def make(url: str, n: int) -> list[Worker]:
        ws = start_workers(url, n)
        made.extend(ws)
        return ws

    yield make
    for w in made:
        w.close()


def test_two_processes_share_consents_and_traces(db_url: str, workers_factory) -> None:
    a, b = workers_factory(db_url, 2)
    applied_a, applied_b = a.read()["applied"], b.read()["applied"]
    # both started on an empty database at once: each migration ran exactly once
    assert sorted(applied_a + applied_b) == sorted(m.name for m in MIGRATIONS)

    assert b(op="has", session="s1", adapter="nmc_emergency_rooms")["has"] is False
    a(op="grant", session="s1", adapter="nmc_emergency_rooms")
    assert b(op="has", session="s1", adapter="nmc_emergency_rooms")["has"] is True

    tb = b(op="put_trace", text="B의 요청 010-1234-5678", release="r1")["trace_id"]
    seen = a(op="get_trace", trace_id=tb)["trace"]
    assert seen["release_id"] == "r1" and seen["request_text"] == "B의 요청 [전화번호]"
    assert seen["expires_at"]
    ta = a(op="put_trace", text="A의 요청")["trace_id"]
    assert {ta, tb} <= set(b(op="list_traces")["trace_ids"])
    assert {ta, tb} <= set(a(op="list_traces")["trace_ids"])

    assert b(op="revoke", session="s1", adapter="nmc_emergency_rooms")["revoked"] == 1
    assert a(op="has", session="s1", adapter="nmc_emergency_rooms")["has"] is False
    assert a(op="verify")["ok"] and b(op="verify")["records"] == 2


def test_concurrent_consent_appends_keep_one_chain(db_url: str, workers_factory) -> None:
    n_workers, per_worker = 4, 25
    workers = workers_factory(db_url, n_workers)
    applied = [name for w in workers for name in w.read()["applied"]]
    assert sorted(applied) == sorted(m.name for m in MIGRATIONS)
    for i, w in enumerate(workers):  # all appending at the same time
        w.send({"op": "grant_many", "n": per_worker, "prefix": f"w{i}"})
    for w in workers:
        assert w.read()["ok"]
    store = open_store(db_url)
    try:
        report = store.verify()
        records = store.list_consents()
    finally:
        store.close()
    assert report.ok, report
    assert report.records == len(records) == n_workers * per_worker
    assert len({r.prev_hash for r in records}) == len(records)  # a line, never a fork
