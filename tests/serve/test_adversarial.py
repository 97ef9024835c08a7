"""The lying model over the API: every lie in ``LIES`` is caught in both response modes.

/v1/answer JSON and the SSE stream of the same request must agree (the answer is the deltas), carry
the claim check's verdict (``grounded``, ``removed_claims``; SSE in its ``completed`` event) and
show nothing the model invented; an error ends the stream with one ``error`` event."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.serve.conftest import client, parse_sse
from tests.support.fake_openai import LIES, FakeOpenAIServer

ERROR_STOPS = {"channel_unavailable": "provider_stream_cut"}


def _ask(c: Any, lie: Any, stream: bool) -> tuple[dict[str, Any] | None, list[dict[str, Any]] | None, int]:
    session = None
    out: Any = None
    for q in lie.turns:
        body = {"query": q, "mode": "mock", "consents": list(lie.consents), "stream": stream,
                "generation": {"planner": "openai", "model": "fake-model", "timeout_s": 5}}
        if session:
            body["session_id"] = session
        r = c.post("/v1/answer", json=body)
        if stream:
            out = parse_sse(r.text)
            done = out[-1]["data"]
            session = done.get("session_id") or session
        else:
            out = r.json()
            session = out.get("session_id") or session
        status = r.status_code
    return out, None, status


@pytest.mark.parametrize("name", sorted(LIES))
def test_every_lie_is_caught_in_json_and_sse(name: str, generated: Path, sqlite_url: str, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    lie = LIES[name]
    with FakeOpenAIServer(script=[*lie.replies(), *lie.replies()]) as llm:
        monkeypatch.setenv("UMMAYA_LLM_BASE_URL", llm.base_url)
        with client(generated, sqlite_url, tmp_path) as c:
            j, _, status = _ask(c, lie, stream=False)
            events, _, _ = _ask(c, lie, stream=True)
    kinds = [e["event"] for e in events]
    text = "".join(e["data"]["text"] for e in events if e["event"] == "delta")
    for bad in lie.forbidden:
        assert bad not in text, (name, bad, text)
        assert bad not in str(j.get("answer", "")), (name, bad)
    called = {e["data"]["adapter_id"] for e in events if e["event"] == "tool_call"}
    assert not called & set(lie.never_called), (name, called)
    if "error" in j:  # a channel stop: the same code in both modes, one error event last
        assert set(lie.stops) & set(ERROR_STOPS), (name, j)
        assert kinds[-1] == "error" and kinds.count("error") == 1 and "completed" not in kinds
        assert events[-1]["data"]["error"]["code"] == j["error"]["code"] == ERROR_STOPS["channel_unavailable"]
        return
    assert status == 200 and kinds[-1] == "completed" and kinds.count("completed") == 1
    done = events[-1]["data"]
    assert j["answer"] == text, "JSON and SSE carry the same text"
    assert j["stop_reason"] == done["stop_reason"] and j["stop_reason"] in lie.stops, (name, j["stop_reason"])
    assert j["grounded"] is done["grounded"] and len(j["removed_claims"]) == len(done["removed_claims"])
    if lie.grounded is not None:
        assert j["grounded"] is lie.grounded, (name, j["removed_claims"])
    for must in lie.must_contain:
        assert must in text, (name, must)
    t = c_trace(generated, sqlite_url, tmp_path, j["trace_id"])
    assert t["meta"]["grounded"] is j["grounded"] and len(t["meta"]["removed_claims"]) == len(j["removed_claims"])


def c_trace(generated: Path, sqlite_url: str, tmp_path: Path, trace_id: str) -> dict[str, Any]:
    from ummaya.runtime.store import open_store

    with open_store(sqlite_url) as store:
        t = store.get_trace(trace_id)
    assert t is not None
    for bad in ("하단행복병원",):
        assert bad not in (t.answer_text or "")
    return t.to_dict()


def test_the_whole_turn_deadline_ends_the_stream_with_one_error(generated: Path, sqlite_url: str, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A model that keeps the turn waiting past the turn's own deadline (not the provider's
    timeout): the turn stops in the plan layer and the stream ends with its error event."""
    from tests.support.fake_openai import Slow, stream_text

    monkeypatch.setenv("UMMAYA_TURN_DEADLINE_S", "0.5")
    with FakeOpenAIServer(script=[Slow(3.0, stream_text("늦었어요.")), Slow(3.0, stream_text("늦었어요."))]) as llm:
        monkeypatch.setenv("UMMAYA_LLM_BASE_URL", llm.base_url)
        body = {"query": "부산 응급실 빈 병상 있어?", "mode": "mock",
                "generation": {"planner": "openai", "model": "fake-model", "timeout_s": 30}}
        with client(generated, sqlite_url, tmp_path) as c:
            j = c.post("/v1/answer", json=body).json()
            events = parse_sse(c.post("/v1/answer", json={**body, "stream": True}).text)
        # The model does answer, after 3 s, well within the provider's 30 s timeout: a turn that
        # ended with provider_timeout was ended by the turn's own 0.5 s deadline — no clock needed.
    assert j["error"]["code"] == "provider_timeout"
    kinds = [e["event"] for e in events]
    assert kinds[-1] == "error" and kinds.count("error") == 1 and "completed" not in kinds
    assert events[-1]["data"]["error"]["code"] == "provider_timeout"
