"""The whole-prompt budget is settable over HTTP: ``generation.context_tokens`` reaches the model
planner, which fits the prompt to it (fewer, shorter tools) and says so in the trace."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.serve.conftest import client
from tests.support.fake_openai import FakeOpenAIServer, stream_text


def test_generation_context_tokens_trims_the_models_tools(generated: Path, sqlite_url: str, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    # no usage in the replies: the budget stays in the planner's own estimate between the two
    ask = "어느 위치를 기준으로 찾을까요?"
    with FakeOpenAIServer([stream_text(ask, usage=None), stream_text(ask, usage=None)]) as srv:
        monkeypatch.setenv("UMMAYA_LLM_BASE_URL", srv.base_url)
        monkeypatch.setenv("UMMAYA_LLM_PROFILE", "vllm")
        body: dict[str, Any] = {"query": "근처 응급실 알려줘", "mode": "mock",
                                "generation": {"planner": "openai", "model": "fake-model", "timeout_s": 5}}
        with client(generated, sqlite_url, tmp_path) as c:
            wide = c.post("/v1/answer", json=body).json()
            narrow = c.post("/v1/answer", json={**body, "generation": {**body["generation"], "context_tokens": 2600}}).json()
            trace = c.get(f"/v1/traces/{narrow['trace_id']}").json()
        full, small = (len(r.json["tools"]) for r in srv.chat_requests)
    assert wide["stop_reason"] == narrow["stop_reason"] == "needs_input"
    assert small < full
    budget = next(e for e in trace["events"] if e["type"] == "budget")["data"]
    assert budget["context_tokens"] == 2600 and budget["trimmed"] and budget["fits"]


def test_context_tokens_out_of_range_is_a_422(generated: Path, sqlite_url: str, tmp_path: Path) -> None:
    with client(generated, sqlite_url, tmp_path) as c:
        r = c.post("/v1/answer", json={"query": "근처 응급실", "generation": {"planner": "offline", "context_tokens": 10}})
    assert r.status_code == 422
