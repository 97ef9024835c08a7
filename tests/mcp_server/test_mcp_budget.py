"""The MCP ``ask`` tool takes the planning model's context size like the CLI and HTTP do."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
from mcp import Client

from ummaya.runtime.mcp import McpBackend, build_server
from ummaya.runtime.plan.protocol import Action


class Recording:
    name = "recording"

    def __init__(self) -> None:
        self.budgets: list[int | None] = []

    async def plan(self, ctx: Any, on_delta: Any = None) -> Action:
        self.budgets.append(ctx.context_tokens)
        return Action(kind="ask", text="어느 위치를 기준으로 찾을까요?")


def test_ask_passes_context_tokens_to_the_planner(generated: Path, store: Any) -> None:
    from ummaya.runtime.service import TurnService

    planner = Recording()
    service = TurnService.load(generated, store=store, planner=planner)
    backend = McpBackend(lambda: service, mode="mock", session_id="mcp-budget")

    async def go() -> Any:
        async with Client(build_server(backend)) as c:
            tools = {t.name: t for t in (await c.list_tools()).tools}
            r = await c.call_tool("ask", {"query": "근처 응급실 알려줘", "context_tokens": 2048})
            bad = await c.call_tool("ask", {"query": "근처 응급실 알려줘", "context_tokens": 12})
            return tools, r, bad

    tools, r, bad = anyio.run(go)
    assert "context_tokens" in tools["ask"].input_schema["properties"]
    assert planner.budgets == [2048] and r.structured_content["stop_reason"] == "needs_input"
    assert bad.is_error
