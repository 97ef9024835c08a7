"""Issue 11 items 7 and 8 over HTTP, on SQLite and PostgreSQL: server-issued sessions (a
client-chosen id is refused, never adopted), optional API keys that also own traces and sessions,
trace responses without session ids, and expiry enforced on read before any purge."""

from __future__ import annotations

import base64
import json
import re
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import time_machine

from tests.serve.conftest import (  # noqa: F401  (fixtures)
    _isolated_home,
    _release_cache,
    client,
    generated,
    parse_sse,
)
from tests.store.conftest import pg_base_url, pg_url  # noqa: F401
from tests.store.test_store import Raw
from ummaya.runtime.store import RetentionPolicy, open_store
from ummaya.runtime.store.records import utcnow

PLACE = "동아대 승학캠퍼스 근처 약국 어디 있어?"
KEY_A = "key-a-0123456789abcdef"
KEY_B = "key-b-0123456789abcdef"


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'sec.sqlite3'}"
    return request.getfixturevalue("pg_url")


def gated(generated: Path) -> tuple[str, str]:  # noqa: F811
    cat = json.loads((generated / "catalog.json").read_bytes())
    for a in sorted(cat["adapters"], key=lambda a: a["id"]):
        if (a["tier"] != "handoff" and a["permission"].get("consent")
                and a["permission"]["gate"] not in ("read-only", "blocked")):
            return a["id"], a["examples"]["ko"][0]
    pytest.skip("no consent-gated adapter in the catalog")


def stream(c: Any, body: dict[str, Any], **kw: Any) -> tuple[int, list[dict[str, Any]]]:
    r = c.post("/v1/answer", json={**body, "stream": True}, **kw)
    return r.status_code, parse_sse(r.text)


def bits_of(session_id: str) -> int:
    raw = base64.urlsafe_b64decode(session_id + "=" * (-len(session_id) % 4))
    return len(raw) * 8


def test_server_issues_the_session_and_the_client_passes_it_back(generated, url, tmp_path) -> None:  # noqa: F811
    with client(generated, url, tmp_path) as c:
        j = c.post("/v1/answer", json={"query": PLACE, "mode": "mock"}).json()
        sid = j["session_id"]
        assert re.fullmatch(r"[A-Za-z0-9_-]{32}", sid) and bits_of(sid) >= 128
        status, events = stream(c, {"query": PLACE, "mode": "mock"})
        assert status == 200
        meta, done = events[0], events[-1]
        assert meta["event"] == "metadata" and done["event"] == "completed"
        assert meta["data"]["session_id"] == done["data"]["session_id"] != sid  # a new one each
        # Passing the id back continues the session (the place is carried, not looked up again).
        again = c.post("/v1/answer", json={"query": "거기 근처 약국 다시 알려줘", "mode": "mock",
                                           "session_id": sid}).json()
        assert again["session_id"] == sid and again["stop_reason"] == "completed"
        assert "kakao_keyword_search" not in [x["adapter_id"] for x in again["calls"]]
        ids = {c.post("/v1/answer", json={"query": PLACE, "mode": "mock"}).json()["session_id"]
               for _ in range(5)}
        assert len(ids) == 5


@pytest.mark.parametrize("chosen", ["1", "carry-1", "s-" + "0" * 30, "a" * 32])
def test_a_client_chosen_session_id_is_refused_never_adopted(generated, url, tmp_path, chosen) -> None:  # noqa: F811
    with client(generated, url, tmp_path) as c:
        r = c.post("/v1/answer", json={"query": PLACE, "mode": "mock", "session_id": chosen})
        assert r.status_code == 404 and r.json()["error"]["code"] == "session_not_found"
        assert r.json()["error"]["trace_id"]
        status, events = stream(c, {"query": PLACE, "mode": "mock", "session_id": chosen})
        assert status == 404  # JSON and SSE agree: same status, same code
        assert [e["event"] for e in events] == ["metadata", "error"]
        assert events[-1]["data"]["error"]["code"] == "session_not_found"
        r = c.post("/v1/retrieve", json={"query": PLACE, "session_id": chosen})
        assert r.status_code == 404 and r.json()["error"]["code"] == "session_not_found"
    with open_store(url) as store:  # nothing was created under the chosen name
        assert store.get_session(chosen) is None and store.list_consents(chosen) == []
        assert not store.issued_session(chosen, None)


def test_a_second_client_cannot_inherit_consents_or_place(generated, url, tmp_path) -> None:  # noqa: F811
    adapter, query = gated(generated)
    with client(generated, url, tmp_path) as c:
        first = c.post("/v1/answer", json={"query": query, "mode": "mock"}).json()
        sid = first["session_id"]
        granted = c.post("/v1/answer", json={"query": query, "mode": "mock", "session_id": sid,
                                             "consents": [adapter]}).json()
        assert granted["stop_reason"] != "consent_required"
        other = c.post("/v1/answer", json={"query": query, "mode": "mock"}).json()
        assert other["session_id"] != sid and other["stop_reason"] == "consent_required"
        # The trace of the consented turn does not hand out the session id.
        t = c.get(f"/v1/traces/{granted['trace_id']}")
        assert t.status_code == 200 and sid not in t.text and "session_id" not in t.text
        assert "owner" not in t.json()


def test_a_broken_ledger_denies_over_http(generated, url, tmp_path) -> None:  # noqa: F811
    adapter, query = gated(generated)
    with client(generated, url, tmp_path) as c:
        sid = c.post("/v1/answer", json={"query": query, "mode": "mock"}).json()["session_id"]
        ok = c.post("/v1/answer", json={"query": query, "mode": "mock", "session_id": sid,
                                        "consents": [adapter]}).json()
        assert ok["stop_reason"] != "consent_required"
        with open_store(url) as store:
            store.revoke_consent(session_id=sid, adapter_id=adapter)
        raw = Raw(url)
        try:  # the insider deletes the revocation (the newest row)
            if raw.pg:
                raw("ALTER TABLE consents DISABLE TRIGGER USER")
            else:
                raw("DROP TRIGGER consents_no_delete")
            raw("DELETE FROM consents WHERE action = 'revoke'")
        finally:
            raw.close()
        after = c.post("/v1/answer", json={"query": query, "mode": "mock", "session_id": sid}).json()
        assert after["stop_reason"] == "permission_denied", after
        again = c.post("/v1/answer", json={"query": query, "mode": "mock", "session_id": sid,
                                           "consents": [adapter]}).json()
        assert again["stop_reason"] == "permission_denied"  # no new consent on a broken ledger


def test_api_keys_guard_every_v1_route_and_own_traces_and_sessions(generated, url, tmp_path) -> None:  # noqa: F811
    A = {"Authorization": f"Bearer {KEY_A}"}
    B = {"Authorization": f"Bearer {KEY_B}"}
    with client(generated, url, tmp_path, api_keys=(KEY_A, KEY_B)) as c:
        assert c.get("/healthz").status_code == 200 and c.get("/readyz").status_code == 200
        for method, path, body in (("post", "/v1/answer", {"query": PLACE}),
                                   ("post", "/v1/retrieve", {"query": PLACE}),
                                   ("get", "/v1/releases", None), ("get", "/v1/traces/x", None)):
            for headers in ({}, {"Authorization": "Bearer wrong-key-0123456789"},
                            {"Authorization": KEY_A}, {"Authorization": f"Basic {KEY_A}"}):
                r = getattr(c, method)(path, headers=headers, **({"json": body} if body else {}))
                assert r.status_code == 401, (path, headers, r.text)
                assert r.json()["error"]["code"] == "unauthorized"
                assert r.headers["www-authenticate"].startswith("Bearer")
        r = c.post("/v1/answer", json={"query": PLACE, "mode": "mock", "stream": True})
        assert r.status_code == 401  # a stream request is refused the same way, before any body
        ja = c.post("/v1/answer", json={"query": PLACE, "mode": "mock"}, headers=A).json()
        assert ja["stop_reason"] == "completed"
        assert c.get(f"/v1/traces/{ja['trace_id']}", headers=A).status_code == 200
        rb = c.get(f"/v1/traces/{ja['trace_id']}", headers=B)
        assert rb.status_code == 404 and rb.json()["error"]["code"] == "trace_not_found"
        # A's session is not B's.
        r = c.post("/v1/answer", json={"query": PLACE, "mode": "mock",
                                       "session_id": ja["session_id"]}, headers=B)
        assert r.status_code == 404 and r.json()["error"]["code"] == "session_not_found"
        ok = c.post("/v1/answer", json={"query": PLACE, "mode": "mock",
                                        "session_id": ja["session_id"]}, headers=A)
        assert ok.status_code == 200
        # Refused requests are traced under the caller's key too.
        bad = c.post("/v1/answer", json={"query": ""}, headers=B).json()
        assert c.get(f"/v1/traces/{bad['error']['trace_id']}", headers=B).status_code == 200
        assert c.get(f"/v1/traces/{bad['error']['trace_id']}", headers=A).status_code == 404
    raw = Raw(url)
    try:  # only fingerprints are stored, never a key
        dump = json.dumps([[str(x) for x in row] for t in ("traces", "server_sessions")
                           for row in raw(f"SELECT * FROM {t}")], ensure_ascii=False)
    finally:
        raw.close()
    assert KEY_A not in dump and KEY_B not in dump and ja["trace_id"] in dump


def test_keys_off_cannot_read_a_keyed_trace(generated, url, tmp_path) -> None:  # noqa: F811
    with client(generated, url, tmp_path, api_keys=(KEY_A,)) as c:
        tid = c.post("/v1/answer", json={"query": PLACE, "mode": "mock"},
                     headers={"Authorization": f"Bearer {KEY_A}"}).json()["trace_id"]
    with client(generated, url, tmp_path) as c:  # the same database, keys switched off
        assert c.get(f"/v1/traces/{tid}").status_code == 404


def test_expired_trace_is_404_before_the_purge(generated, url, tmp_path) -> None:  # noqa: F811
    # A one-hour lifetime and a clock moved past it: no wall-clock wait, and a slow first turn
    # on a loaded machine (over a minute at load 15) cannot expire the trace before its first read.
    short = RetentionPolicy(ttl_days=1.0 / 24)
    with time_machine.travel(utcnow(), tick=True) as clock:
        with client(generated, url, tmp_path, retention=short, purge_interval_s=3600) as c:
            j = c.post("/v1/answer", json={"query": PLACE, "mode": "mock"}).json()
            assert c.get(f"/v1/traces/{j['trace_id']}").status_code == 200
            clock.shift(timedelta(hours=1, seconds=1))
            r = c.get(f"/v1/traces/{j['trace_id']}")
            assert r.status_code == 404 and r.json()["error"]["code"] == "trace_not_found"
        with open_store(url) as store:  # still stored: only the purge deletes it
            assert store.get_trace(j["trace_id"]) is None
            assert store.get_trace(j["trace_id"], include_expired=True) is not None


def test_an_idle_session_expires(generated, url, tmp_path, monkeypatch) -> None:  # noqa: F811
    monkeypatch.setenv("UMMAYA_SESSION_TTL_MIN", "60")  # the clock moves; a slow turn cannot expire it
    with time_machine.travel(utcnow(), tick=True) as clock:
        with client(generated, url, tmp_path) as c:
            sid = c.post("/v1/answer", json={"query": PLACE, "mode": "mock"}).json()["session_id"]
            clock.shift(timedelta(minutes=40))
            r = c.post("/v1/answer", json={"query": PLACE, "mode": "mock", "session_id": sid})
            assert r.status_code == 200  # in use: each saved turn keeps it alive
            clock.shift(timedelta(minutes=40))  # 80 min since the first turn, 40 since the last
            r = c.post("/v1/answer", json={"query": PLACE, "mode": "mock", "session_id": sid})
            assert r.status_code == 200
            clock.shift(timedelta(minutes=61))
            r = c.post("/v1/answer", json={"query": PLACE, "mode": "mock", "session_id": sid})
            assert r.status_code == 404 and r.json()["error"]["code"] == "session_not_found"
        with open_store(url) as store:
            assert store.purge_issued_sessions(timedelta(minutes=60)) >= 1
            assert not store.issued_session(sid, None)
            fresh = store.issue_session(None)
            assert store.purge_issued_sessions(timedelta(minutes=5)) == 0
            assert store.issued_session(fresh, None, idle=timedelta(minutes=5))
