"""One request, every surface: the CLI (`ummaya ask --json`), the serving API (JSON and SSE) and
MCP's `ask` tool run the same turn on the same release, so they make the same calls (adapter,
tier, status), stop for the same reason, agree on grounding and speak the same language.

Each surface is a renderer of the engine's outcome; a surface that built its own turn (another
retriever, another language guess, another stop) would show up here as a difference."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner
from mcp import Client

from .conftest import parse_sse

# First turns of different shapes: a place then a find, a question back, nothing in scope, English,
# Korean with English words, a protected check (consent first), a handoff.
REQUESTS = [
    "동아대 승학캠퍼스 근처 응급실 알려줘",
    "근처 응급실",
    "카카오톡 백업하는 법",
    "Where is the nearest pharmacy to Busan Station?",
    "서울대병원 ER notice 확인, 소아 진료 안 된대?",
    "모바일 신분증으로 본인 확인해줘",
    "여권 재발급 신청해줘",
]


def _calls(calls: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    return [(c["adapter_id"], c["tier"], c["status"]) for c in calls]


def _cli(root: Path, db: str, query: str) -> dict[str, Any]:
    from ummaya.cli import main

    done = CliRunner().invoke(main, ["ask", "--json", "--mode", "mock", "--root", str(root), "--db", db, query])
    assert done.exit_code == 0, done.output
    j = json.loads(done.stdout)
    return {"calls": _calls(j["calls"]), "stop_reason": j["stop_reason"], "grounded": j["grounded"],
            "language": j["language"]}


def _json(api: Any, query: str) -> dict[str, Any]:
    j = api.post("/v1/answer", json={"query": query, "mode": "mock"}).json()
    return {"calls": _calls(j["calls"]), "stop_reason": j["stop_reason"], "grounded": j["grounded"],
            "language": j["language"]}


def _sse(api: Any, query: str) -> dict[str, Any]:
    events = parse_sse(api.post("/v1/answer", json={"query": query, "mode": "mock", "stream": True}).text)
    done = events[-1]["data"]
    assert events[-1]["event"] == "completed", events[-1]
    # The stream's opening words and its end speak of the same request.
    assert events[0]["data"].get("language", done["language"]) == done["language"], (events[0], done)
    return {"calls": _calls(done["calls"]), "stop_reason": done["stop_reason"], "grounded": done["grounded"],
            "language": done["language"]}


def _mcp(generated: Path, db: str, query: str) -> dict[str, Any]:
    from ummaya.runtime.service import TurnService
    from ummaya.runtime.mcp import McpBackend, build_server
    from ummaya.runtime.store import open_store

    store = open_store(db)
    try:
        service = TurnService.load(generated, store=store)
        backend = McpBackend(lambda: service, mode="mock", session_id="mcp-surface")

        async def go() -> Any:
            async with Client(build_server(backend)) as c:
                return await c.call_tool("ask", {"query": query})

        s = anyio.run(go).structured_content
    finally:
        store.close()
    calls = [(c["adapter_id"], c["tier"], c["status"]) for c in s["calls"]]
    return {"calls": calls, "stop_reason": s["stop_reason"], "grounded": s["grounded"], "language": s["language"]}


@pytest.fixture
def project(generated: Path, tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "generated").symlink_to(generated, target_is_directory=True)
    return root


@pytest.mark.parametrize("query", REQUESTS)
def test_the_same_request_is_the_same_turn_on_every_surface(query: str, api: Any, generated: Path,
                                                             project: Path, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("DATA_GO_KR_SERVICE_KEY", "KAKAO_REST_API_KEY", "JUSO_CONFM_KEY", "SGIS_CONSUMER_KEY", "SGIS_CONSUMER_SECRET"):
        monkeypatch.delenv(var, raising=False)
    seen = {
        "cli": _cli(project, f"sqlite:///{tmp_path / 'cli.sqlite3'}", query),
        "json": _json(api, query),
        "sse": _sse(api, query),
        "mcp": _mcp(generated, f"sqlite:///{tmp_path / 'mcp.sqlite3'}", query),
    }
    assert all(v == seen["cli"] for v in seen.values()), json.dumps(seen, ensure_ascii=False, indent=1)
