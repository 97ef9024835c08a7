"""The server as a host reaches it: ``ummaya mcp`` over stdio (a subprocess) and ``/mcp`` on
``ummaya serve`` (streamable HTTP), both driven by the official SDK's client."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from .conftest import ER_ARGS, ID_ARGS, text_of

UMMAYA = str(Path(sys.executable).with_name("ummaya"))


def n_tools(generated: Path) -> int:
    """One tool per adapter in the built catalog, plus ``ask`` — never a count a new adapter breaks."""
    from ummaya.runtime.catalog import Catalog

    return len(Catalog.load(generated).adapters) + 1


def stdio(generated: Path, db_url: str, *extra: str) -> StdioServerParameters:
    env = {**os.environ, "UMMAYA_GENERATED": str(generated)}
    return StdioServerParameters(command=UMMAYA, args=["mcp", "--mode", "mock", "--db", db_url, *extra], env=env)


def test_stdio_lists_calls_and_gates(generated: Path, sqlite_url: str) -> None:
    from ummaya.runtime.store import open_store

    async def go() -> tuple[Any, ...]:
        async with Client(stdio(generated, sqlite_url, "--session", "mcp-stdio-1")) as c:
            tools = (await c.list_tools()).tools
            er = await c.call_tool("nmc_emergency_rooms", ER_ARGS)
            gated = await c.call_tool("mobile_id_verify", ID_ARGS)
            turn = await c.call_tool("ask", {"query": "동아대 승학캠퍼스 근처 응급실 알려줘"})
            return tools, er, gated, turn
    tools, er, gated, turn = anyio.run(go)
    assert len(tools) == n_tools(generated) and tools[-1].name == "ask"
    assert er.is_error is False and text_of(er).startswith("[Mock · 모의]")
    assert gated.is_error is True and text_of(gated).startswith("consent_required: mobile_id_verify")
    assert "ummaya consent grant mobile_id_verify --session mcp-stdio-1" in text_of(gated)
    assert turn.structured_content["stop_reason"] == "completed"
    with open_store(sqlite_url) as store:  # the same store the server wrote
        assert store.get_trace(turn.structured_content["trace_id"]).session_id == "mcp-stdio-1"
        assert store.get_trace(er.meta["ummaya/trace_id"]) is not None


def test_stdio_consent_by_elicitation_then_by_the_store(generated: Path, sqlite_url: str) -> None:
    from ummaya.runtime.store import open_store

    async def accept(ctx: Any, params: Any) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"agree": True})

    async def call(session: str, cb: Any) -> Any:
        async with Client(stdio(generated, sqlite_url, "--session", session), elicitation_callback=cb) as c:
            return await c.call_tool("mobile_id_verify", ID_ARGS)
    assert anyio.run(call, "mcp-stdio-a", accept).is_error is False
    # Without elicitation: refused, then granted outside MCP (the ledger the CLI writes), then run.
    assert anyio.run(call, "mcp-stdio-b", None).is_error is True
    with open_store(sqlite_url) as store:
        assert [c.session_id for c in store.list_consents() if c.action == "grant"] == ["mcp-stdio-a"]
    # exactly the command the refusal names
    done = subprocess.run([UMMAYA, "consent", "grant", "mobile_id_verify", "--session", "mcp-stdio-b",
                           "--db", sqlite_url], env={**os.environ, "UMMAYA_GENERATED": str(generated)},
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert anyio.run(call, "mcp-stdio-b", None).is_error is False
    with open_store(sqlite_url) as store:
        assert [c.session_id for c in store.list_consents() if c.action == "grant"] == ["mcp-stdio-a", "mcp-stdio-b"]
        assert store.verify().ok


def test_http_mount_serves_the_same_tools(live_server: Any, sqlite_url: str, generated: Path) -> None:
    srv = live_server(sqlite_url, UMMAYA_SERVE_MODE="mock")

    async def accept(ctx: Any, params: Any) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"agree": True})

    async def go(mode: str) -> tuple[Any, ...]:
        async with Client(srv.url + "/mcp", mode=mode, elicitation_callback=accept) as c:
            tools = (await c.list_tools()).tools
            er = await c.call_tool("nmc_emergency_rooms", ER_ARGS)
            gated = await c.call_tool("mobile_id_verify", ID_ARGS)
            turn = await c.call_tool("ask", {"query": "동아대 승학캠퍼스 근처 응급실 알려줘"})
            return tools, er, gated, turn
    for mode in ("auto", "legacy"):
        tools, er, gated, turn = anyio.run(go, mode)
        by_name = {t.name: t for t in tools}
        assert len(tools) == n_tools(generated) and by_name["nmc_emergency_rooms"].annotations.open_world_hint is False
        assert er.is_error is False and "[Mock · 모의]" in text_of(er), mode
        assert gated.is_error is False and gated.structured_content["mock_status"] == "mock_checked", mode
        assert turn.structured_content["stop_reason"] == "completed", mode
    assert srv.alive()


def test_http_mount_refuses_a_foreign_host(live_server: Any, sqlite_url: str) -> None:
    """DNS rebinding: a page served from another name must not drive a local server's tools."""
    import httpx

    srv = live_server(sqlite_url, UMMAYA_SERVE_MODE="mock")
    r = httpx.post(srv.url + "/mcp", headers={"Host": "evil.example", "Content-Type": "application/json",
                                              "Accept": "application/json, text/event-stream"},
                   json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert r.status_code in (400, 403, 421), r.text


def test_stateless_http_continues_only_a_session_it_issued(live_server: Any, sqlite_url: str) -> None:
    """2026-07-28 HTTP keeps no connection: ``ask`` returns a server-issued session id and takes
    it back; an id the server never issued is refused, as on the HTTP API."""
    srv = live_server(sqlite_url, UMMAYA_SERVE_MODE="mock")

    async def go() -> tuple[Any, ...]:
        async with Client(srv.url + "/mcp") as c:
            assert c.protocol_version == "2026-07-28"
            first = await c.call_tool("ask", {"query": "동아대 승학캠퍼스 근처 응급실 알려줘"})
            sid = first.structured_content["session_id"]
            again = await c.call_tool("ask", {"query": "근처 약국도 알려줘", "session_id": sid})
            made_up = await c.call_tool("ask", {"query": "근처 약국도 알려줘", "session_id": "mcp-made-up"})
            return sid, again, made_up
    sid, again, made_up = anyio.run(go)
    assert len(sid) >= 32  # issued like the HTTP API's sessions (store.issue_session)
    assert again.structured_content["session_id"] == sid
    assert [c["adapter_id"] for c in again.structured_content["calls"]] == ["nmc_pharmacies"]
    assert made_up.is_error is True and text_of(made_up).startswith("session_not_found")


def test_stateless_http_without_elicitation_does_not_offer_a_dead_session(live_server: Any, sqlite_url: str) -> None:
    srv = live_server(sqlite_url, UMMAYA_SERVE_MODE="mock")

    async def go() -> Any:
        async with Client(srv.url + "/mcp") as c:  # 2026-07-28, no elicitation callback
            return await c.call_tool("mobile_id_verify", ID_ARGS)
    r = anyio.run(go)
    assert r.is_error is True and text_of(r).startswith("consent_required: mobile_id_verify")
    assert "ummaya consent grant" not in text_of(r) and "keeps no session" in text_of(r)


def test_http_mount_needs_the_servers_api_key(live_server: Any, sqlite_url: str) -> None:
    """With UMMAYA_API_KEYS set, /mcp is guarded like /v1, and an ask session belongs to its key."""
    import httpx

    from mcp.client.streamable_http import streamable_http_client

    key, other = "k" * 20, "o" * 20
    srv = live_server(sqlite_url, UMMAYA_SERVE_MODE="mock", UMMAYA_API_KEYS=f"{key},{other}")
    r = httpx.post(srv.url + "/mcp", headers={"Accept": "application/json, text/event-stream"},
                   json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert r.status_code == 401 and r.json()["error"]["code"] == "unauthorized"

    async def ask(bearer: str, args: dict[str, Any]) -> Any:
        import httpx2

        client = httpx2.AsyncClient(headers={"Authorization": f"Bearer {bearer}"})
        async with Client(streamable_http_client(srv.url + "/mcp", http_client=client)) as c:
            return await c.call_tool("ask", args)
    first = anyio.run(ask, key, {"query": "동아대 승학캠퍼스 근처 응급실 알려줘"})
    sid = first.structured_content["session_id"]
    assert anyio.run(ask, key, {"query": "근처 약국도 알려줘", "session_id": sid}).is_error is False
    stolen = anyio.run(ask, other, {"query": "근처 약국도 알려줘", "session_id": sid})
    assert stolen.is_error is True and text_of(stolen).startswith("session_not_found")
