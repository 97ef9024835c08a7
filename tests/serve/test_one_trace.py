"""One request, one trace, one schema: the CLI (`ummaya ask`), ``/v1/answer`` as JSON and as SSE,
MCP's ``ask`` and an MCP adapter tool over ``/mcp`` each store exactly one trace row for one
request, and every row has the same columns and the same ``meta`` keys (runtime/turn/turn_trace.py
``META_KEYS``), with the surface it came through. The server is a real ``uvicorn`` process (its
trace writer thread, its event loop); the CLI writes into the same database."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import httpx
from click.testing import CliRunner
from mcp import Client

from .conftest import parse_sse

QUERY = "동아대 승학캠퍼스 근처 응급실 알려줘"
ER_ARGS = {"latitude": 35.0966, "longitude": 128.9632}  # 동아대 승학캠퍼스


def test_one_request_on_every_surface_is_one_trace_row_of_one_schema(
        live_server: Any, sqlite_url: str, project: Path) -> None:
    from ummaya.cli import main
    from ummaya.runtime.store import open_store
    from ummaya.runtime.turn.turn_trace import META_KEYS

    srv = live_server(sqlite_url, UMMAYA_SERVE_MODE="mock")
    ids: dict[str, str] = {}

    done = CliRunner().invoke(main, ["ask", "--json", "--mode", "mock", "--db", sqlite_url,
                                     "--root", str(project), QUERY])
    assert done.exit_code == 0, done.output
    ids["cli_ask"] = json.loads(done.stdout)["trace_id"]

    r = httpx.post(srv.url + "/v1/answer", json={"query": QUERY, "mode": "mock"}, timeout=60)
    assert r.status_code == 200, r.text
    ids["http_json"] = r.json()["trace_id"]

    r = httpx.post(srv.url + "/v1/answer", json={"query": QUERY, "mode": "mock", "stream": True}, timeout=60)
    end = parse_sse(r.text)[-1]
    assert end["event"] == "completed", end
    ids["http_sse"] = end["data"]["trace_id"]

    async def mcp() -> tuple[Any, Any]:
        async with Client(srv.url + "/mcp") as c:
            return await c.call_tool("ask", {"query": QUERY}), await c.call_tool("nmc_emergency_rooms", ER_ARGS)
    asked, tool = anyio.run(mcp)
    assert asked.is_error is False and tool.is_error is False, (asked, tool)
    ids["mcp_ask"] = asked.structured_content["trace_id"]
    ids["mcp_tool"] = tool.meta["ummaya/trace_id"]

    assert all(ids.values()) and len(set(ids.values())) == len(ids), ids
    with open_store(sqlite_url) as store:
        rows = store.list_traces(limit=100)
        # exactly one row per request: nothing else wrote a second, differently shaped record
        assert sorted(t.trace_id for t in rows) == sorted(ids.values())
        traces = {surface: store.get_trace(tid) for surface, tid in ids.items()}
    columns = {surface: sorted(t.to_dict()) for surface, t in traces.items()}
    assert all(c == columns["cli_ask"] for c in columns.values()), columns
    for surface, t in traces.items():
        assert sorted(t.meta) == sorted(META_KEYS), (surface, sorted(t.meta))
        assert t.meta["surface"] == surface
        assert t.request_text and t.states and "total_ms" in t.timings, surface
        assert t.states[-1]["state"] == t.state == "completed", (surface, t.states)
        assert t.stop_reason == "completed" and t.calls and t.events, surface
        assert t.release_id, surface
    # the server's rows name the alias the release was resolved through; the CLI resolves none
    assert {s: t.release_alias for s, t in traces.items() if s != "cli_ask"} == dict.fromkeys(
        ("http_json", "http_sse", "mcp_ask", "mcp_tool"), "production")
    # a turn's trace keeps its turn, whichever surface rendered it
    assert {s: t.meta["language"] for s, t in traces.items() if s != "mcp_tool"} == dict.fromkeys(
        ("cli_ask", "http_json", "http_sse", "mcp_ask"), "ko")
    assert traces["http_sse"].meta["rerank"] and traces["http_json"].meta["rerank"]
    assert srv.alive()
