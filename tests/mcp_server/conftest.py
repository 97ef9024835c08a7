"""Fixtures for the MCP server: the session's build of the registry, an engine on a throwaway
SQLite store, and ways to reach the server with the official SDK's client (in process, over stdio,
over streamable HTTP)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.serve.conftest import (  # noqa: F401  (shared fixtures: the build, live uvicorn servers)
    RELEASE_CACHE,
    _isolated_home,
    _release_cache,
    generated,
    live_server,
    sqlite_url,
)

ER_ARGS = {"latitude": 35.0966, "longitude": 128.9632}  # 동아대 승학캠퍼스
ID_ARGS = {"person_name": "홍길동", "birth_date": "1990-01-01"}


@pytest.fixture
def store(sqlite_url: str) -> Iterator[Any]:
    from ummaya.runtime.store import open_store

    s = open_store(sqlite_url)
    try:
        yield s
    finally:
        s.close()


@pytest.fixture
def backend(generated: Path, store: Any) -> Any:
    """Mock mode on the test build, one fixed session (as `ummaya mcp` has)."""
    from ummaya.runtime.service import TurnService
    from ummaya.runtime.mcp import McpBackend

    service = TurnService.load(generated, store=store)
    return McpBackend(lambda: service, mode="mock", session_id="mcp-test-session")


def text_of(result: Any) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")
