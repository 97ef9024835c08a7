"""Two real small models (Qwen2.5-Coder 1.5B and 0.5B on llama-cpp-python, no tool parser) replayed
through the engine from their recorded replies (tests/support/model_transcripts/, source: recorded).

What they did — calls as ```json fences and bare JSON with double-encoded arguments, Seoul's
coordinates guessed for a Busan landmark, the same call repeated to the step limit, an empty reply
after evidence, HTTP 500 on ``"content": null`` — must end the way UMMAYA's principles say: a call
read wherever the model wrote one, a guessed coordinate never dispatched, evidence never thrown away.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from tests.support.fake_openai import (
    FakeOpenAIServer,
    Quirks,
    replay,
    stream_text,
    text_call,
    transcript,
    transcript_rows,
)
from ummaya.runtime.plan.openai_compat import OpenAICompatPlanner
from ummaya.runtime.turn import TurnEngine, TurnRequest

QWEN_15 = "qwen2.5-coder-1.5b-q4km"
QWEN_05 = "qwen2.5-coder-0.5b-q4km"
UNPATCHED = "qwen2.5-coder-1.5b-q4km-unpatched"
DONGA = "동아대 승학캠퍼스 근처 응급실 알려줘"


class Sleeps:
    def __init__(self) -> None:
        self.calls: list[float] = []

    async def __call__(self, s: float) -> None:
        self.calls.append(s)


class Recorded:
    """The candidates the recorded request offered, in its order: a replay does not depend on how
    retrieval ranks today (the registry keeps growing)."""

    def __init__(self, catalog, names):
        self.rows = [{"adapter_id": n, "primitive": catalog.get(n).primitive, "tier": catalog.get(n).tier,
                      "score": 10.0 - i, "domain": catalog.get(n).domain, "agency": catalog.get(n).agency.code}
                     for i, n in enumerate(names)]

    def search(self, query, *, top_k=5, filters=None, context_slots=frozenset()):
        return [dict(r) for r in self.rows]


def tools_of(name: str, row: int) -> list[str]:
    return transcript_rows(name)[row]["tools"]


def engine_for(engine, planner, tools=None) -> TurnEngine:
    retriever = Recorded(engine.catalog, tools) if tools else engine.retriever
    return TurnEngine(engine.catalog, retriever, engine.dispatcher, planner, store=engine.store)


def run(engine, script, query, *, profile="llamacpp", quirks=None, tools=None, **req):
    with FakeOpenAIServer(script, quirks=quirks) as srv:
        planner = OpenAICompatPlanner(srv.base_url, None, "qwen2.5-coder", profile=profile, timeout_s=5,
                                      sleep=Sleeps())
        e = engine_for(engine, planner, tools)
        r = asyncio.run(e.ask(TurnRequest(query, mode="mock", **req)))
        return r, [q.json for q in srv.chat_requests]


def dispatched(r) -> list[str]:
    return [e.data["adapter_id"] for e in r.events if e.type == "call_started"]


def roles(body) -> list[str]:
    return [m["role"] for m in body["messages"]]


def test_the_recorded_rows_are_what_the_tests_say_they_are():
    rows = transcript_rows(QWEN_15)
    assert rows[1]["request"] == DONGA and rows[1]["content"].startswith("```json")
    assert '"latitude": 37.5698' in rows[1]["content"]  # Seoul (서울역 area), for a Busan campus
    assert rows[2]["content"].startswith('{"name": "nmc_emergency_rooms", "arguments": "{')  # bare, double-encoded
    assert rows[4]["content"] == "\n" and rows[4]["usage"] is None
    assert transcript_rows(UNPATCHED)[2]["status"] == 500


def test_guessed_seoul_coordinates_for_a_busan_campus_are_never_dispatched(engine):
    # 1.5B: a fence, then the same guess as bare JSON. Today the fence is read as an answer (the
    # right tool, lost) — and had it been read, the guess went straight to the ER adapter.
    r, bodies = run(engine, transcript(QWEN_15, [1, 2]), DONGA, tools=tools_of(QWEN_15, 1))
    assert "nmc_emergency_rooms" not in dispatched(r), "a guessed coordinate reached an adapter"
    assert r.stop_reason == "invalid_arguments" and r.layer == "validate"
    checks = [e.data for e in r.events if e.type == "check"]
    assert [c["check"] for c in checks] == ["chained_provenance"] * 2
    # The repair names the locate step to run and goes back as the model's own call + a tool reply.
    repair = bodies[1]
    assert roles(repair)[-3:] == ["user", "assistant", "tool"]
    refused = repair["messages"][-2]
    assert refused["tool_calls"][0]["function"]["name"] == "nmc_emergency_rooms"
    assert json.loads(refused["tool_calls"][0]["function"]["arguments"])["latitude"] == 37.5698
    assert refused["content"] == ""  # llamacpp profile: never null
    assert "kakao_keyword_search" in repair["messages"][-1]["content"]
    # The citizen reads why, in plain words, and what to do.
    assert "추측" in r.answer and "37.5698" not in r.answer


def test_after_the_refusal_a_model_that_locates_first_completes_grounded(engine):
    script = [*transcript(QWEN_15, [1]),
              text_call("bare", "kakao_keyword_search", '{"query": "동아대 승학캠퍼스"}', double_encoded=True),
              text_call("fence", "nmc_emergency_rooms", '{"latitude": 35.1167, "longitude": 128.968, "limit": 5}'),
              stream_text("동아대학교 승학캠퍼스에서 가장 가까운 응급실은 삼육부산병원이에요.", usage=None)]
    r, _ = run(engine, script, DONGA, tools=tools_of(QWEN_15, 1))
    assert dispatched(r) == ["kakao_keyword_search", "nmc_emergency_rooms"]
    assert r.stop_reason == "completed" and r.grounded, r.removed_claims
    assert "삼육부산병원" in r.answer and "[Mock · 모의]" in r.answer


def test_a_guess_without_any_place_named_stops_naming_the_models_failure(engine):
    # 1.5B on 「근처 응급실 알려줘」: coordinates from nowhere, twice.
    r, bodies = run(engine, transcript(QWEN_15, [5, 6]), "근처 응급실 알려줘", tools=tools_of(QWEN_15, 5))
    assert dispatched(r) == [] and r.stop_reason == "invalid_arguments"
    assert "ask them where" in bodies[1]["messages"][-1]["content"]


def test_the_right_tool_and_argument_becomes_a_completed_grounded_answer(engine):
    # 1.5B on "ER near Busan City Hall": a fenced call to the beds adapter, then a prose answer
    # that echoes the prompt's <data> markup. Today: the fence is an answer without evidence.
    r, _ = run(engine, transcript(QWEN_15, [9, 10]), "ER near Busan City Hall", tools=tools_of(QWEN_15, 9))
    assert dispatched(r) == ["nmc_emergency_beds"]
    assert r.stop_reason == "completed" and r.grounded, r.removed_claims
    assert "부산대학교병원" in r.answer and "<data>" not in r.answer
    assert r.answer.startswith("[Mock]")


def test_a_wandering_small_model_ends_with_the_evidence_it_found(engine):
    # 0.5B: locate (bare JSON) → ERs with the located coordinates → pharmacies → beds with
    # arguments the beds adapter does not take. Today: every bare call is an ungrounded answer.
    r, bodies = run(engine, transcript(QWEN_05, [0, 1, 2, 3]), DONGA, tools=tools_of(QWEN_05, 0))
    assert dispatched(r) == ["kakao_keyword_search", "nmc_emergency_rooms", "nmc_pharmacies"]
    assert r.stop_reason == "completed" and r.grounded
    held = [e.data for e in r.events if e.type == "answer_from_evidence"]
    assert held and held[0]["why"] == "steps_exhausted"
    assert "삼육부산병원" in r.answer and "답변을 마치지 못해" in r.answer
    assert bodies[-1]["tool_choice"] == "none"  # the last step asks for an answer


def test_an_empty_reply_after_evidence_is_answered_from_it_not_called_a_dead_server(engine):
    script = [text_call("fence", "nmc_emergency_beds", '{"sido": "부산광역시"}'), replay(transcript_rows(QWEN_15)[4])]
    r, _ = run(engine, script, "부산 응급실 빈 병상 있어?")
    assert r.stop_reason == "completed" and r.error is None
    (held,) = [e.data for e in r.events if e.type == "answer_from_evidence"]
    assert held["why"] == "model_error" and held["code"] == "provider_bad_response"
    assert "응답하지 않습니다" not in r.answer and "[Mock · 모의]" in r.answer


def test_an_empty_reply_before_evidence_says_the_reply_was_empty(engine):
    r, _ = run(engine, [replay(transcript_rows(QWEN_15)[4])], "부산 응급실 빈 병상 있어?")
    assert r.stop_reason == "channel_unavailable" and r.error["code"] == "provider_bad_response"
    assert "응답하지 않습니다" not in r.answer and "쓸 수 있는 답을 보내지 않았습니다" in r.answer


def test_the_same_call_repeated_is_answered_from_the_evidence_held(engine):
    # Both models repeated an identical call until max_steps.
    call = '{"sido": "부산광역시"}'
    script = [text_call("bare", "nmc_emergency_beds", call), text_call("bare", "nmc_emergency_beds", call),
              text_call("bare", "nmc_emergency_beds", call)]
    r, bodies = run(engine, script, "부산 응급실 빈 병상 있어?")
    assert dispatched(r) == ["nmc_emergency_beds"] and len(bodies) == 2
    (loop,) = [e.data for e in r.events if e.type == "loop"]
    assert loop["repeated"][0]["adapter_id"] == "nmc_emergency_beds"
    assert r.stop_reason == "completed" and "같은 조회를 되풀이함" in r.answer


@pytest.mark.parametrize("profile", ["llamacpp", "generic", "vllm", "ollama"])
def test_llama_cpp_rejects_null_content_and_no_profile_sends_it(engine, profile):
    # Unpatched 1.5B run: step 2 answered HTTP 500 because the assistant tool-call message carried
    # "content": null (today's planner sends it). llama.cpp's and the generic profile send "",
    # the others omit the key; either way this server answers.
    script = [text_call("fence", "nmc_emergency_beds", '{"sido": "부산광역시"}'),
              stream_text("부산대학교병원 응급실에 병상이 있어요.", usage=None)]
    r, bodies = run(engine, script, "부산 응급실 빈 병상 있어?", profile=profile,
                    quirks=Quirks(reject_null_content=True))
    assert r.stop_reason == "completed"
    assistant = next(m for m in bodies[1]["messages"] if m["role"] == "assistant")
    assert assistant.get("content", "<omitted>") == ("" if profile in ("llamacpp", "generic") else "<omitted>")
    assert not any(e.type == "answer_from_evidence" for e in r.events)  # the model answered itself


def test_null_content_500_is_what_the_fake_server_answers():
    with FakeOpenAIServer([], quirks=Quirks(reject_null_content=True)) as srv:
        import httpx

        body = {"messages": [{"role": "user", "content": "x"},
                             {"role": "assistant", "content": None, "tool_calls": []}]}
        resp = httpx.post(f"{srv.base_url}/chat/completions", json=body)
    assert resp.status_code == 500


@pytest.mark.parametrize("profile", ["vllm", "llamacpp"])
def test_every_step_of_a_turn_sends_the_same_system_prompt_and_tools_byte_for_byte(engine, profile):
    # The recorded planner put the clock (to the minute) in the system prompt and the located
    # place into the first user message mid-turn: a prefix cache kept ~19 % of later prompts.
    with FakeOpenAIServer(transcript(QWEN_05, [0, 1, 2, 3])) as srv:
        planner = OpenAICompatPlanner(srv.base_url, None, "qwen", profile=profile, timeout_s=5, sleep=Sleeps())
        e = engine_for(engine, planner, tools_of(QWEN_05, 0))
        # a 3,600-token context for llama.cpp: this four-step turn outgrows it by its last step
        budget = 3600 if profile == "llamacpp" else None
        r = asyncio.run(e.ask(TurnRequest(DONGA, mode="mock", context_budget_tokens=budget)))
        raw = [q.body for q in srv.chat_requests]
    assert len(raw) == 4
    system = {json.dumps(json.loads(b)["messages"][0], ensure_ascii=False) for b in raw}
    tools = {json.dumps(json.loads(b)["tools"], ensure_ascii=False) for b in raw}
    assert len(system) == 1 and len(tools) == 1
    # Each step's conversation extends the last one's — unless the budget compacted an earlier
    # result to fit, which it says.
    msgs = [json.loads(b)["messages"] for b in raw]
    compactions = [e.data for e in r.events if e.type == "compaction"]
    moved = [i for i, (prev, cur) in enumerate(zip(msgs, msgs[1:])) if cur[: len(prev)] != prev]
    if profile == "vllm":
        assert moved == [] and compactions == []
    else:
        assert len(moved) == len(compactions) >= 1
        assert all(c["after_tokens"] <= c["limit_tokens"] < c["before_tokens"] for c in compactions)
