"""Issue 19 holes 3 and 6 / items 3 and 6: an MCP consent answer counts once, and an MCP session —
with its consents — belongs to the API key that opened it (SQLite and PostgreSQL).

Hole 3, before: after the citizen revoked a consent, resending the same retried ``tools/call``
with its ``requestState`` and ``accept`` granted it again and ran the protected adapter — the
state was a deterministic MAC over (adapter, session). Now it carries a nonce and an expiry, the
store consumes the nonce once, and a revocation closes every question still open.

Hole 6, before: key B could use key A's ``Mcp-Session-Id``, and with it A's consents.
"""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client

from tests.mcp_server.conftest import ID_ARGS, text_of
from tests.serve.conftest import RELEASE_CACHE, _isolated_home, _release_cache, generated, live_server, sqlite_url  # noqa: F401
from tests.store.conftest import db_url, pg_base_url, pg_url, store  # noqa: F401  (both backends)
from ummaya.runtime.mcp import McpBackend, elicitation
from ummaya.runtime.mcp.server import build_server

ADAPTER = "mobile_id_verify"
ACCEPT = {f"consent:{ADAPTER}": types.ElicitResult(action="accept", content={"agree": True})}


async def _never(ctx: Any, params: Any) -> types.ElicitResult:  # declares the capability only
    raise AssertionError("the test answers the question itself")


@pytest.fixture
def backend(generated, store):  # noqa: F811
    from ummaya.runtime.service import TurnService

    service = TurnService.load(generated, store=store)
    return McpBackend(lambda: service, mode="mock", session_id="mcp-citizen")


def grants(store) -> list:  # noqa: F811
    return [c for c in store.list_consents("mcp-citizen") if c.action == "grant"]


def ask_then(backend, *answers: tuple[dict, str | None]) -> list[Any]:
    """One consent question (2026-07-28: InputRequiredResult), then each (responses, state)
    retried as given; ``None`` state = the state the question carried."""

    async def go() -> list[Any]:
        async with Client(build_server(backend), elicitation_callback=_never) as c:
            asked = await c.session.call_tool(ADAPTER, ID_ARGS, allow_input_required=True)
            assert isinstance(asked, types.InputRequiredResult)
            out = [asked]
            for responses, state in answers:
                out.append(await c.session.call_tool(ADAPTER, ID_ARGS, input_responses=responses,
                                                     request_state=state or asked.request_state,
                                                     allow_input_required=True))
            return out

    return anyio.run(go)


def ran(result: Any) -> bool:
    return isinstance(result, types.CallToolResult) and result.is_error is False


def test_replay_after_revocation_grants_nothing(backend, store) -> None:  # noqa: F811
    async def go() -> tuple[Any, Any, Any]:
        async with Client(build_server(backend), elicitation_callback=_never) as c:
            asked = await c.session.call_tool(ADAPTER, ID_ARGS, allow_input_required=True)
            done = await c.session.call_tool(ADAPTER, ID_ARGS, input_responses=ACCEPT,
                                             request_state=asked.request_state, allow_input_required=True)
            store.revoke_consent(session_id="mcp-citizen", adapter_id=ADAPTER)  # the citizen revokes
            replay = await c.session.call_tool(ADAPTER, ID_ARGS, input_responses=ACCEPT,
                                               request_state=asked.request_state, allow_input_required=True)
            return asked, done, replay

    asked, done, replay = anyio.run(go)
    assert ran(done) and len(grants(store)) == 1
    assert not ran(replay), text_of(replay) if hasattr(replay, "content") else replay
    assert isinstance(replay, types.InputRequiredResult)  # asked again, with a new question
    assert replay.request_state != asked.request_state
    assert len(grants(store)) == 1 and not store.has_consent("mcp-citizen", ADAPTER)


def test_an_answer_counts_once(backend, store) -> None:  # noqa: F811
    asked, first, second = ask_then(backend, (ACCEPT, None), (ACCEPT, None))
    assert ran(first) and ran(second)  # the second runs on the recorded consent …
    assert len(grants(store)) == 1  # … and grants nothing


def test_a_revocation_closes_questions_still_open(backend, store) -> None:  # noqa: F811
    store.grant_consent("mcp-citizen", ADAPTER, purpose="p", data_items=["x"], retention="r", refusal="f")
    store.revoke_consent(session_id="mcp-citizen", adapter_id=ADAPTER)

    async def go() -> tuple[Any, Any]:
        async with Client(build_server(backend), elicitation_callback=_never) as c:
            asked = await c.session.call_tool(ADAPTER, ID_ARGS, allow_input_required=True)
            # The citizen grants elsewhere and revokes again before answering this question.
            store.grant_consent("mcp-citizen", ADAPTER, purpose="p", data_items=["x"], retention="r", refusal="f")
            store.revoke_consent(session_id="mcp-citizen", adapter_id=ADAPTER)
            late = await c.session.call_tool(ADAPTER, ID_ARGS, input_responses=ACCEPT,
                                             request_state=asked.request_state, allow_input_required=True)
            return asked, late

    asked, late = anyio.run(go)
    assert not ran(late) and not store.has_consent("mcp-citizen", ADAPTER)
    assert len(grants(store)) == 2  # the two granted outside MCP; none from the stale answer


def test_an_expired_question_is_asked_again(backend, store, monkeypatch) -> None:  # noqa: F811
    import time as _time

    real = _time.time

    async def go() -> tuple[Any, Any]:
        async with Client(build_server(backend), elicitation_callback=_never) as c:
            asked = await c.session.call_tool(ADAPTER, ID_ARGS, allow_input_required=True)
            later = real() + elicitation.request_ttl_s() + 1
            monkeypatch.setattr(elicitation.time, "time", lambda: later)
            late = await c.session.call_tool(ADAPTER, ID_ARGS, input_responses=ACCEPT,
                                             request_state=asked.request_state, allow_input_required=True)
            return asked, late

    asked, late = anyio.run(go)
    assert not ran(late) and grants(store) == []


def test_a_state_edited_to_extend_its_life_or_change_its_adapter_is_void(backend, store) -> None:  # noqa: F811
    async def go() -> list[Any]:
        async with Client(build_server(backend), elicitation_callback=_never) as c:
            asked = await c.session.call_tool(ADAPTER, ID_ARGS, allow_input_required=True)
            prefix, aid, sid, nonce, expires, mac = asked.request_state.split(":")
            forged = [":".join((prefix, aid, sid, nonce, str(int(expires) + 10**6), mac)),
                      ":".join((prefix, "welfare_application_submit", sid, nonce, expires, mac)),
                      ":".join((prefix, aid, "mcp-someone-else", nonce, expires, mac))]
            return [await c.session.call_tool(ADAPTER, ID_ARGS, input_responses=ACCEPT, request_state=f,
                                              allow_input_required=True) for f in forged]

    assert not any(ran(r) for r in anyio.run(go)) and grants(store) == []


# ------------------------------------------------------------------- sessions bound to the key


def _client(url: str, bearer: str):
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    return streamable_http_client(url, http_client=httpx2.AsyncClient(headers={"Authorization": f"Bearer {bearer}"}))


def _rpc(url: str, bearer: str, body: dict, session: str | None = None):
    import httpx

    headers = {"Authorization": f"Bearer {bearer}", "Accept": "application/json, text/event-stream",
               "Content-Type": "application/json", "MCP-Protocol-Version": "2025-06-18"}
    if session:
        headers["Mcp-Session-Id"] = session
    return httpx.post(url, headers=headers, json=body, timeout=30)


def _open_session(url: str, bearer: str) -> str:
    r = _rpc(url, bearer, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},  # no elicitation: a stop, not a form
        "clientInfo": {"name": "probe", "version": "1"}}})
    assert r.status_code == 200, r.text
    sid = r.headers["mcp-session-id"]
    assert _rpc(url, bearer, {"jsonrpc": "2.0", "method": "notifications/initialized"}, sid).status_code == 202
    return sid


def test_key_b_cannot_use_key_a_s_mcp_session(live_server, sqlite_url) -> None:  # noqa: F811
    key_a, key_b = "a" * 24, "b" * 24
    srv = live_server(sqlite_url, UMMAYA_SERVE_MODE="mock", UMMAYA_API_KEYS=f"{key_a},{key_b}")
    url = srv.url + "/mcp"
    sid = _open_session(url, key_a)
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    assert _rpc(url, key_a, listing, sid).status_code == 200
    stolen = _rpc(url, key_b, listing, sid)
    assert stolen.status_code == 404 and "Session not found" in stolen.text
    call = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": ADAPTER, "arguments": ID_ARGS}}
    assert _rpc(url, key_b, call, sid).status_code == 404
    # B's own session sees none of A's consents: A consents (through the store, as the CLI would) …
    from ummaya.runtime.store import open_store

    st = open_store(sqlite_url)
    try:
        import hashlib

        from ummaya.runtime.serve.auth import fingerprint

        owned = hashlib.sha256(f"{fingerprint(key_a)}\x00{sid}".encode()).hexdigest()[:32]
        st.grant_consent(f"mcp-http-{owned}", ADAPTER, purpose="p", data_items=["x"], retention="r", refusal="f")
    finally:
        st.close()
    ok = _rpc(url, key_a, call, sid)
    assert ok.status_code == 200 and '"isError":false' in ok.text.replace(" ", ""), ok.text
    sid_b = _open_session(url, key_b)
    theirs = _rpc(url, key_b, call, sid_b)
    assert theirs.status_code == 200 and "consent_required" in theirs.text


def test_key_b_cannot_answer_key_a_s_consent_question(live_server, sqlite_url) -> None:  # noqa: F811
    key_a, key_b = "c" * 24, "d" * 24
    srv = live_server(sqlite_url, UMMAYA_SERVE_MODE="mock", UMMAYA_API_KEYS=f"{key_a},{key_b}")
    url = srv.url + "/mcp"

    async def go() -> tuple[Any, Any]:
        async with Client(_client(url, key_a), elicitation_callback=_never) as a, \
                Client(_client(url, key_b), elicitation_callback=_never) as b:
            asked = await a.session.call_tool(ADAPTER, ID_ARGS, allow_input_required=True)
            assert isinstance(asked, types.InputRequiredResult)
            hijack = await b.session.call_tool(ADAPTER, ID_ARGS, input_responses=ACCEPT,
                                               request_state=asked.request_state, allow_input_required=True)
            return asked, hijack

    asked, hijack = anyio.run(go)
    assert not ran(hijack)
    from ummaya.runtime.store import open_store

    st = open_store(sqlite_url)
    try:
        assert [c for c in st.list_consents() if c.action == "grant"] == []
    finally:
        st.close()
