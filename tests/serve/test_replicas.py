"""Two server processes (uvicorn on two loopback ports) on one PostgreSQL: a consent granted through
one is honoured by the other, and each sees the other's traces and releases."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest


def gated_query(generated: Path) -> tuple[str, str]:
    cat = json.loads((generated / "catalog.json").read_bytes())
    for a in sorted(cat["adapters"], key=lambda a: a["id"]):
        consent = a["permission"].get("consent")
        if a["tier"] != "handoff" and a["permission"]["gate"] not in ("read-only", "blocked") and consent:
            return a["id"], a["examples"]["ko"][0]
    pytest.skip("no consent-gated adapter in the catalog")


def test_two_replicas_share_consents_traces_and_releases(live_server: Any, pg_url: str, generated: Path) -> None:
    a = live_server(pg_url)
    b = live_server(pg_url)
    adapter, query = gated_query(generated)
    ask = lambda srv, session, consents=(): httpx.post(  # noqa: E731
        srv.url + "/v1/answer", json={"query": query, "mode": "mock", "consents": list(consents),
                                      **({"session_id": session} if session else {})},
        timeout=30).json()
    before = ask(b, None)  # replica B issues the session …
    assert before["stop_reason"] == "consent_required", before
    s1 = before["session_id"]
    granted = ask(a, s1, [adapter])  # … replica A accepts it; the citizen consents through A
    assert granted["stop_reason"] != "consent_required", granted
    honoured = ask(b, s1)  # replica B sees the consent A recorded
    assert honoured["stop_reason"] != "consent_required", honoured
    other = ask(b, None)  # and only for that session
    assert other["stop_reason"] == "consent_required"
    # traces written by one are read by the other
    for srv, trace_id in ((a, before["trace_id"]), (b, granted["trace_id"])):
        t = httpx.get(f"{srv.url}/v1/traces/{trace_id}", timeout=10)
        assert t.status_code == 200 and t.json()["trace_id"] == trace_id
    # both started on the same database: one release, one alias, whoever published first
    ra = httpx.get(a.url + "/v1/releases", timeout=10).json()
    rb = httpx.get(b.url + "/v1/releases", timeout=10).json()
    assert ra == rb and len(ra["releases"]) == 1 and "production" in ra["aliases"]
    assert a.alive() and b.alive()
