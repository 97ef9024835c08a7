"""Dialogue tests: the embedded default (offline planner, Mock dispatch) with a real store."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.store.conftest import pg_base_url, pg_url  # noqa: F401  (PostgreSQL fixtures)
from tests.turn.conftest import catalog, engine, generated, retriever, store  # noqa: F401


class Talk:
    """One session's conversation: ``talk("…")`` runs a turn and returns its result."""

    def __init__(self, engine: Any, session_id: str = "talk", **defaults: Any):
        self.engine, self.session_id, self.defaults = engine, session_id, defaults

    def __call__(self, text: str, **kw: Any) -> Any:
        from ummaya.runtime.turn import TurnRequest

        args = {"session_id": self.session_id, "mode": "mock", **self.defaults, **kw}
        return asyncio.run(self.engine.ask(TurnRequest(text, **args)))


@pytest.fixture
def talk(engine):  # noqa: F811
    return Talk(engine)


def calls(result: Any) -> list[str]:
    return [c["adapter_id"] for c in result.calls]


def args_of(result: Any, adapter_id: str) -> dict[str, Any]:
    return next(c["arguments"] for c in result.calls if c["adapter_id"] == adapter_id)
