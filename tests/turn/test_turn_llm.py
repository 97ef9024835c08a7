"""The turn with the OpenAI-compatible provider against a local fake server replaying vLLM-shaped
streams: the model sees only the narrowed candidates, its calls are validated and gated like any
planner's, and its streamed answer is exactly the turn's answer."""

from __future__ import annotations

import asyncio
import json

from tests.support.fake_openai import FakeOpenAIServer, chunk, stream_text, stream_tool_calls
from ummaya.runtime.plan.openai_compat import OpenAICompatPlanner
from ummaya.runtime.turn import TurnEngine, TurnRequest

ANSWER = "부산 지역 응급실 가용 병상을 확인했습니다 (Mock 예시 데이터)."


def engine_with(engine, srv) -> TurnEngine:
    planner = OpenAICompatPlanner(srv.base_url, "test-key", "fake-model", timeout_s=5, max_retries=0)
    return TurnEngine(engine.catalog, engine.retriever, engine.dispatcher, planner, store=engine.store)


def test_llm_call_then_streamed_answer(engine):
    script = [
        stream_tool_calls([("nmc_emergency_beds", json.dumps({"sido": "부산광역시"}, ensure_ascii=False))]),
        stream_text(ANSWER),
    ]
    with FakeOpenAIServer(script=script) as srv:
        r = asyncio.run(engine_with(engine, srv).ask(TurnRequest("부산 응급실 빈 병상 있어?", mode="mock")))
        first, second = srv.requests[0].json, srv.requests[1].json
    assert r.stop_reason == "completed"
    assert [c["adapter_id"] for c in r.calls] == ["nmc_emergency_beds"] and r.calls[0]["tier"] == "mock"
    assert ANSWER in r.answer and r.grounded, r.removed_claims
    assert r.answer.startswith("[Mock · 모의] 국립중앙의료원") and "출처:" in r.answer
    assert "".join(e.data["text"] for e in r.events if e.type == "delta") == r.answer
    tools = [t["function"]["name"] for t in first["tools"]]
    assert "nmc_emergency_beds" in tools and len(tools) <= 7  # ≤ 5 retrieved + chain providers
    assert "traffic_fine_payment" not in tools
    # The tool result went back as data with its tier, never as instructions.
    tool_msgs = [m for m in second["messages"] if m.get("role") == "tool"]
    assert tool_msgs and json.loads(tool_msgs[0]["content"])["tier"] == "mock"
    assert r.usage.get("prompt_tokens", 0) > 0


def test_llm_invalid_arguments_get_one_repair(engine):
    script = [
        stream_tool_calls([("nmc_emergency_beds", '{"sido": "Atlantis"}')]),
        stream_tool_calls([("nmc_emergency_beds", json.dumps({"sido": "부산광역시"}, ensure_ascii=False))]),
        stream_text("확인했습니다."),
    ]
    with FakeOpenAIServer(script=script) as srv:
        r = asyncio.run(engine_with(engine, srv).ask(TurnRequest("부산 응급실 빈 병상 있어?", mode="mock")))
        repair_request = srv.requests[1].json
    assert r.stop_reason == "completed"
    assert "Atlantis" in json.dumps(repair_request["messages"], ensure_ascii=False)


def test_llm_unknown_tool_is_refused(engine):
    script = [
        stream_tool_calls([("traffic_fine_payment", "{}")]),
        stream_tool_calls([("traffic_fine_payment", "{}")]),
    ]
    with FakeOpenAIServer(script=script) as srv:
        r = asyncio.run(engine_with(engine, srv).ask(TurnRequest("부산 응급실 빈 병상 있어?", mode="mock")))
    assert r.stop_reason == "invalid_arguments"
    assert not [e for e in r.events if e.type == "call_started"]


def test_llm_provider_down_is_an_error_not_an_answer(engine):
    with FakeOpenAIServer(script=[]) as srv:  # exhausted script → 500 on the first request
        r = asyncio.run(engine_with(engine, srv).ask(TurnRequest("부산 응급실 빈 병상 있어?", mode="mock")))
    assert r.error is not None and r.error["code"].startswith("provider_")
    assert r.stop_reason == "channel_unavailable" and r.layer == "plan"


def test_stream_cut_after_evidence_shows_none_of_the_partial_answer(engine):
    # The cut comes in the answer after a tool result: nothing the model wrote was checked, so
    # none of it reaches the citizen. The evidence was found, though: the engine answers from it
    # (rendered under its tier label) and says the model did not finish — it is not thrown away.
    cut = stream_text("부산 지역 응급실은 현재 ", piece=3)
    cut.events = cut.events[:4]
    cut.end = "abort"
    script = [stream_tool_calls([("nmc_emergency_beds", json.dumps({"sido": "부산광역시"}, ensure_ascii=False))]), cut]
    with FakeOpenAIServer(script=script) as srv:
        r = asyncio.run(engine_with(engine, srv).ask(TurnRequest("부산 응급실 빈 병상 있어?", mode="mock")))
    types = [e.type for e in r.events]
    assert "answer_from_evidence" in types and types.index("answer_from_evidence") < types.index("delta")
    (held,) = [e for e in r.events if e.type == "answer_from_evidence"]
    assert held.data["why"] == "model_error" and held.data["code"] == "provider_stream_cut"
    assert r.stop_reason == "completed" and types[-1] == "stop" and r.error is None
    assert "부산 지역 응급실" not in r.answer and "provider_stream_cut" in r.answer
    assert "[Mock · 모의]" in r.answer and "답변을 마치지 못해" in r.answer


def test_ungrounded_text_cut_before_any_evidence_is_never_shown(engine):
    # Before any evidence the model's text is held until its step ends; a cut there shows none
    # of it, only the stop message.
    cut = stream_text("부산 지역 응급실은 현재 ", piece=3)
    cut.events = cut.events[:4]
    cut.end = "abort"
    with FakeOpenAIServer(script=[cut]) as srv:
        r = asyncio.run(engine_with(engine, srv).ask(TurnRequest("부산 응급실 빈 병상 있어?", mode="mock")))
    assert r.error["code"] == "provider_stream_cut" and r.stop_reason == "channel_unavailable"
    assert "부산 지역 응급실은" not in r.answer
    assert r.answer == "".join(e.data["text"] for e in r.events if e.type == "delta")


def test_narration_streamed_before_a_tool_call_stays_out_of_the_answer(engine):
    narrated = stream_tool_calls([("nmc_emergency_beds", json.dumps({"sido": "부산광역시"}, ensure_ascii=False))])
    script = [narrated, stream_text(ANSWER)]
    # content deltas first, then the tool-call fragments, in one message (as vLLM sends them)
    narrated.events[1:1] = [chunk({"content": p}) for p in ("먼저 병상 ", "정보를 조회할게요. ")]
    with FakeOpenAIServer(script=script) as srv:
        r = asyncio.run(engine_with(engine, srv).ask(TurnRequest("부산 응급실 빈 병상 있어?", mode="mock")))
    assert r.stop_reason == "completed", r.answer
    assert ANSWER in r.answer and "조회할게요" not in r.answer
