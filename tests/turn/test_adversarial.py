"""A lying model against the engine: every lie in tests/support/fake_openai.py ``LIES`` is caught.

The model is a scripted OpenAI-compatible server on loopback; the engine is the real one (offline
parts, Mock dispatch, SQLite store). What must hold does not depend on which lie it is: nothing the
model invented reaches the answer, the deltas or the stored trace; protected adapters are never
dispatched on invented values; the answer is the deltas; Mock evidence keeps its label."""

from __future__ import annotations

import asyncio

import pytest

from tests.support.fake_openai import LIES, FakeOpenAIServer, Lie
from ummaya.runtime.plan.openai_compat import OpenAICompatPlanner
from ummaya.runtime.turn import TurnEngine, TurnRequest


def run_lie(engine, lie: Lie):
    with FakeOpenAIServer(script=lie.replies()) as srv:
        planner = OpenAICompatPlanner(srv.base_url, "test-key", "fake-model", timeout_s=5, max_retries=0)
        e = TurnEngine(engine.catalog, engine.retriever, engine.dispatcher, planner, store=engine.store)
        session = f"s-lie-{lie.name}"
        results = [asyncio.run(e.ask(TurnRequest(q, session_id=session, mode="mock", consents=lie.consents)))
                   for q in lie.turns]
        left = len(srv.script)
    return results, left


def assert_caught(lie: Lie, r, store=None) -> None:
    deltas = "".join(ev.data["text"] for ev in r.events if ev.type == "delta")
    assert r.answer == deltas, "the answer is the deltas"
    assert r.stop_reason in lie.stops, (lie.name, r.stop_reason, r.answer)
    for bad in lie.forbidden:
        assert bad not in r.answer, (lie.name, bad, r.answer)
    called = {ev.data["adapter_id"] for ev in r.events if ev.type == "call_started"}
    assert not called & set(lie.never_called), (lie.name, called)
    if lie.grounded is not None:
        assert r.grounded is lie.grounded, (lie.name, r.removed_claims, r.answer)
    if r.stop_reason == "ungrounded":
        assert r.layer == "answer" and r.grounded is False and r.removed_claims
    for text in lie.must_contain:
        assert text in r.answer, (lie.name, text, r.answer)
    if store is not None:
        t = store.get_trace(r.trace_id)
        # the trace keeps the verdict (redacted like every stored text: phones become [전화번호])
        assert t.meta["grounded"] is r.grounded and len(t.meta["removed_claims"]) == len(r.removed_claims)
        assert [c["kind"] for c in t.meta["removed_claims"]] == [c["kind"] for c in r.removed_claims]
        for bad in lie.forbidden:
            assert bad not in (t.answer_text or "")


def test_there_are_at_least_twelve_distinct_lies():
    assert len(LIES) >= 12 and len({lie.what for lie in LIES.values()}) == len(LIES)


@pytest.mark.parametrize("name", sorted(LIES))
def test_every_lie_is_caught(engine, store, name):
    lie = LIES[name]
    results, left = run_lie(engine, lie)
    assert_caught(lie, results[-1], store)
    assert left == 0 or lie.stops != ("completed",), "the model was asked as often as scripted"


def test_removed_claims_name_what_was_removed(engine):
    results, _ = run_lie(engine, LIES["invented_statistic"])
    r = results[-1]
    kinds = {c["kind"] for c in r.removed_claims}
    assert kinds == {"number"} and any("73%" in c["claim"] for c in r.removed_claims)
    assert "동아대학교병원에 병상 6개가 있어요." in r.answer, "the backed sentence stays"


def test_an_ungrounded_answer_gets_one_repair_that_asks_for_a_tool(engine):
    lie = LIES["no_tool_answer_from_memory"]
    with FakeOpenAIServer(script=lie.replies()) as srv:
        planner = OpenAICompatPlanner(srv.base_url, "test-key", "fake-model", timeout_s=5, max_retries=0)
        e = TurnEngine(engine.catalog, engine.retriever, engine.dispatcher, planner, store=engine.store)
        r = asyncio.run(e.ask(TurnRequest(lie.turns[0], mode="mock")))
        second = srv.requests[1].json["messages"]
    assert r.stop_reason == "ungrounded" and len(srv.requests) == 2
    assert second[-2]["role"] == "assistant" and "하단행복병원" in second[-2]["content"]
    assert "Call one of the provided tools" in second[-1]["content"]
    assert "공공데이터" in r.answer  # the engine's own text, nothing of the model's
