"""S06: the deployment's trace retention policy, through the API, against both database backends.

Traces on/off; raw text none | redacted | full; a TTL that sets every trace's ``expires_at``;
expired traces purged at start-up and on the timer; identity fields (trace_id, release,
stop_reason, states, timings) survive when raw text is not kept.
"""

from __future__ import annotations

import json
import threading
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import time_machine

from tests.serve.conftest import client
from ummaya.runtime.store import RetentionPolicy, open_store
from ummaya.runtime.store.records import parse_iso, utcnow
from ummaya.runtime.store.sql import SQLStore

QUERY = "010-1234-5678 이 번호로 연락 주세요. 동아대 승학캠퍼스 근처 약국 어디 있어?"
PHONE = "1234-5678"


@pytest.fixture(params=["sqlite", "postgresql"])
def backend_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'retention.sqlite3'}"
    return request.getfixturevalue("pg_url")


def _ask(c: Any) -> tuple[dict[str, Any], dict[str, Any] | None]:
    j = c.post("/v1/answer", json={"query": QUERY, "mode": "mock"}).json()
    assert j["stop_reason"] == "completed", j
    r = c.get(f"/v1/traces/{j['trace_id']}")
    return j, (r.json() if r.status_code == 200 else None)


def _identity_intact(t: dict[str, Any], j: dict[str, Any]) -> None:
    assert t["trace_id"] == j["trace_id"] and t["release_id"] == j["release"]["id"]
    assert t["release_alias"] == "production" and t["stop_reason"] == "completed"
    assert [s["state"] for s in t["states"]][-1] == "completed" and t["timings"]["total_ms"] > 0
    assert t["expires_at"] and "session_id" not in json.dumps(t)  # never shown over HTTP


@pytest.mark.parametrize("raw_text", ["full", "redacted", "none"])
def test_raw_text_policy(raw_text: str, generated: Path, backend_url: str, tmp_path: Path) -> None:
    policy = RetentionPolicy(raw_text=raw_text, ttl_days=7)  # type: ignore[arg-type]
    with client(generated, backend_url, tmp_path, retention=policy) as c:
        j, t = _ask(c)
    assert t is not None
    _identity_intact(t, j)
    assert t["text_policy"] == raw_text
    created, expires = parse_iso(t["created_at"]), parse_iso(t["expires_at"])
    assert abs((expires - created).total_seconds() - 7 * 86400) < 1
    deltas = "".join(e["data"].get("text") or "" for e in t["events"] if e["type"] == "delta")
    if raw_text == "full":
        assert t["request_text"] == QUERY.replace("  ", " ") and t["answer_text"] == j["answer"]
        assert deltas == j["answer"]
    elif raw_text == "redacted":
        assert PHONE not in t["request_text"] and "[전화번호]" in t["request_text"]
        assert "동아대" in t["request_text"]
        assert t["answer_text"]
    else:
        assert t["request_text"] is None and t["answer_text"] is None
        assert deltas == "", "no raw answer text inside events either"
        assert PHONE not in str(t)
    # what the store holds is what the API shows
    with open_store(backend_url) as store:
        stored = store.get_trace(j["trace_id"])
        assert stored is not None and stored.request_text == t["request_text"]


def test_traces_off(generated: Path, backend_url: str, tmp_path: Path) -> None:
    with client(generated, backend_url, tmp_path, retention=RetentionPolicy(traces_enabled=False)) as c:
        j = c.post("/v1/answer", json={"query": QUERY, "mode": "mock"}).json()
        assert j["trace_id"] and j["stop_reason"] == "completed"
        r = c.get(f"/v1/traces/{j['trace_id']}")
        assert r.status_code == 404 and r.json()["error"]["code"] == "trace_not_found"
    with open_store(backend_url) as store:
        assert store.list_traces(limit=10) == []


def test_ttl_purge_at_startup_and_on_the_timer(generated: Path, backend_url: str, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    # An hour's lifetime and a clock moved past it (a slow first turn under load cannot expire a
    # trace before its first read, and nothing waits on the wall clock for it to expire).
    short = RetentionPolicy(raw_text="none", ttl_days=1.0 / 24)
    keep_long = RetentionPolicy(ttl_days=30)
    past_short = timedelta(hours=1, seconds=1)
    with time_machine.travel(utcnow(), tick=True) as clock:
        with client(generated, backend_url, tmp_path, retention=short, purge_interval_s=3600) as c:
            j, t = _ask(c)
            assert t is not None
        with client(generated, backend_url, tmp_path, retention=keep_long) as c:
            j2, t2 = _ask(c)  # one that must survive the purges below
        clock.shift(past_short)
        with open_store(backend_url) as store:  # expired, but only a purge deletes it
            assert store.get_trace(j["trace_id"], include_expired=True) is not None
        with client(generated, backend_url, tmp_path, retention=keep_long) as c:  # start-up purge
            assert c.get(f"/v1/traces/{j['trace_id']}").status_code == 404
            assert c.get(f"/v1/traces/{j2['trace_id']}").status_code == 200
        with open_store(backend_url) as store:
            assert store.get_trace(j["trace_id"], include_expired=True) is None
        # the timer: a server that keeps running purges what expires while it runs. The store
        # tells the test when a purge deleted something (a hook on purge_expired), so the test
        # waits for that event rather than polling the table.
        purged = threading.Event()
        purge = SQLStore.purge_expired

        def purge_and_signal(self: SQLStore, now: Any = None) -> int:
            n = purge(self, now)
            if n:
                purged.set()
            return n

        monkeypatch.setattr(SQLStore, "purge_expired", purge_and_signal)
        with client(generated, backend_url, tmp_path, retention=short, purge_interval_s=1) as c:
            j3, t3 = _ask(c)
            assert t3 is not None  # the start-up purge found nothing expired: no event yet
            assert not purged.is_set()
            clock.shift(past_short)
            # A deadline for a timer that never fires, not a guess at when it does.
            assert purged.wait(timeout=60), "the purge timer deleted nothing"
            with open_store(backend_url) as store:
                assert store.get_trace(j3["trace_id"], include_expired=True) is None
            assert c.get(f"/v1/traces/{j2['trace_id']}").status_code == 200
