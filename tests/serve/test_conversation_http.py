"""/v1/answer: a conversation over HTTP (issue 9): the policy field, the call rows' arguments."""

from __future__ import annotations

from typing import Any


def _first(api: Any, body: dict[str, Any]) -> dict[str, Any]:
    """The first turn of a session: a client-named session where the server adopts it, else the
    session the server issues."""
    r = api.post("/v1/answer", json={**body, "session_id": "conv-http-1"})
    if r.status_code == 404:  # server-issued sessions only
        r = api.post("/v1/answer", json=body)
    assert r.status_code == 200, r.text
    return r.json()


def test_calls_list_their_arguments_and_follow_ups_carry(api: Any) -> None:
    first = _first(api, {"query": "근처 응급실 알려줘", "mode": "mock"})
    assert first["stop_reason"] == "needs_input"
    second = api.post("/v1/answer", json={"query": "하단동", "mode": "mock", "session_id": first["session_id"]}).json()
    assert second["stop_reason"] == "completed", second
    rows = {c["adapter_id"]: c for c in second["calls"]}
    assert rows["kakao_keyword_search"]["arguments"] == {"query": "하단동"}
    er = rows["nmc_emergency_rooms"]
    assert set(er) >= {"adapter_id", "status", "tier", "upstream_url", "arguments"}
    assert er["arguments"]["latitude"] and "serviceKey" not in (er["upstream_url"] or "")


def test_policy_field(api: Any) -> None:
    j = _first(api, {"query": "과태료 조회해줘", "mode": "mock", "policy": "lookup_only"})
    assert j["stop_reason"] == "permission_denied" and "조회 전용" in j["answer"]
    bad = api.post("/v1/answer", json={"query": "과태료 조회해줘", "mode": "mock", "policy": "anything"})
    assert bad.status_code == 422
