"""Provider profiles, text tool-call shapes, tool_choice, the whole-prompt budget and resilience of
the OpenAI-compatible planner, against the fake server with real servers' habits (``Quirks``)."""

from __future__ import annotations

import asyncio
import copy
import json
import socket
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.fake_openai import (
    SSE,
    Drop,
    FakeOpenAIServer,
    JSONReply,
    Quirks,
    chunk,
    ollama_tool_calls,
    stream_text,
    stream_tool_calls,
    text_call,
    unavailable,
)
from ummaya.model.manifest import Manifest
from ummaya.runtime.plan.protocol import Evidence, PlanContext, ProviderError
from ummaya.runtime.plan.openai_compat import OpenAICompatPlanner, ProviderConfigError
from ummaya.runtime.plan.profiles import PROFILES, profile_for_url, profile_from_models
from ummaya.runtime.plan.toolcall_text import read_text_calls

ROOT = Path(__file__).resolve().parents[2]


def load(path: str) -> Manifest:
    return Manifest.model_validate(yaml.safe_load((ROOT / path).read_text("utf-8")))


ER = load("registry/nmc/nmc_emergency_rooms.yaml")
KAKAO = load("registry/kakao/kakao_keyword_search.yaml")
BEDS = load("registry/nmc/nmc_emergency_beds.yaml")
PHARM = load("registry/nmc/nmc_pharmacies.yaml")
HIRA = load("registry/hira/hira_hospitals.yaml")
FIVE = [ER, BEDS, PHARM, HIRA, KAKAO]
ARGS = '{"latitude": 35.1167, "longitude": 128.968, "limit": 3}'
EV = Evidence("ev1", "c1", "kakao_keyword_search", "mock", "ok", {"items": []}, {})


class Sleeps:
    def __init__(self) -> None:
        self.calls: list[float] = []

    async def __call__(self, s: float) -> None:
        self.calls.append(s)


def ctx(**kw: Any) -> PlanContext:
    base: dict[str, Any] = dict(
        request="동아대 승학캠퍼스 근처 응급실 알려줘", language="ko", candidates=[ER, KAKAO],
        messages=[{"role": "user", "content": "동아대 승학캠퍼스 근처 응급실 알려줘"}],
        evidence=[], slots={}, step=0, max_steps=4)
    base.update(kw)
    return PlanContext(**base)


def plan(srv, c=None, **kw):
    kw.setdefault("timeout_s", 2.0)
    kw.setdefault("sleep", Sleeps())

    async def go():
        async with OpenAICompatPlanner(srv.base_url, "k", "m", **kw) as p:
            return await p.plan(c or ctx()), p

    return asyncio.run(go())


# ------------------------------------------------------------------------------- text tool calls

SHAPES = ["fence", "bare", "tag", "mistral", "function_tag"]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("double", [False, True])
def test_every_text_shape_is_a_call_on_a_server_without_a_parser(shape, double):
    with FakeOpenAIServer([text_call(shape, "nmc_emergency_rooms", ARGS, double_encoded=double)]) as srv:
        action, _ = plan(srv, profile="llamacpp")
    assert action.kind == "call", action
    (call,) = action.calls
    assert call.adapter_id == "nmc_emergency_rooms" and call.arguments == json.loads(ARGS)
    assert action.text == ""  # the call text is no narration


def test_a_profile_with_a_parser_reads_only_tags():
    # OpenAI parses calls itself; a fenced JSON in its content is what the model said, not a call.
    with FakeOpenAIServer([text_call("fence", "nmc_emergency_rooms", ARGS)]) as srv:
        action, _ = plan(srv, profile="openai")
    assert action.kind == "answer"


def test_json_about_a_place_is_not_a_call():
    calls, rest = read_text_calls('{"name": "동아대학교병원", "phone": "051-240-2000"}', ("bare", "fence"))
    assert calls == [] and rest.startswith("{")
    calls, _ = read_text_calls('{"name": "x_y", "phone": "1"}', ("bare",))
    assert calls == []


def test_text_around_a_fence_stays_text_and_several_calls_are_read():
    text = ('먼저 위치를 찾을게요.\n```json\n[{"name": "kakao_keyword_search", "arguments": {"query": "부산역"}},'
            ' {"name": "nmc_emergency_rooms", "parameters": {"latitude": 35.1, "longitude": 129.0}}]\n```')
    calls, rest = read_text_calls(text, ("fence",))
    assert [c.adapter_id for c in calls] == ["kakao_keyword_search", "nmc_emergency_rooms"]
    assert rest == "먼저 위치를 찾을게요."


def test_mistral_v11_and_qwen3_xml_parameters():
    calls, _ = read_text_calls('[TOOL_CALLS]kakao_keyword_search[ARGS]{"query": "부산역"}', ("mistral",))
    assert calls[0].arguments == {"query": "부산역"}
    xml = "<function=nmc_emergency_rooms>\n<parameter=latitude>\n35.1\n</parameter>\n<parameter=longitude>\n129\n</parameter>\n</function>"
    calls, _ = read_text_calls(xml, ("function_tag",))
    assert calls[0].arguments == {"latitude": 35.1, "longitude": 129}


def test_ollama_whole_calls_without_index():
    with FakeOpenAIServer([ollama_tool_calls([("nmc_emergency_rooms", ARGS)])]) as srv:
        action, _ = plan(srv, profile="ollama")
    assert action.kind == "call" and action.calls[0].arguments == json.loads(ARGS)


# ---------------------------------------------------------------------------------- tool_choice


def bodies(srv) -> list[dict[str, Any]]:
    return [r.json for r in srv.chat_requests]


@pytest.mark.parametrize("profile, first, last", [
    ("vllm", "required", "none"), ("llamacpp", "required", "none"), ("friendli", "required", "none"),
    ("openai", "required", "none"), ("ollama", "auto", "auto"), ("generic", "auto", "auto")])
def test_tool_choice_required_first_none_last_where_the_server_honours_them(profile, first, last):
    with FakeOpenAIServer([stream_tool_calls([("kakao_keyword_search", '{"query": "동아대"}')]),
                           stream_text("답"), stream_text("답")]) as srv:
        plan(srv, profile=profile)  # step 0, no evidence
        plan(srv, ctx(step=1, evidence=[EV]), profile=profile)  # a middle step
        plan(srv, ctx(step=3, evidence=[EV]), profile=profile)  # the last step, with evidence
        sent = [b["tool_choice"] for b in bodies(srv)]
    assert sent == [first, "auto", last]


def test_ask_citizen_is_offered_and_becomes_an_ask_naming_its_tool():
    args = json.dumps({"question": "어느 위치를 기준으로 찾을까요?", "tool": "nmc_emergency_rooms", "missing": ["place"]},
                      ensure_ascii=False)
    with FakeOpenAIServer([stream_tool_calls([("ask_citizen", args)])]) as srv:
        action, _ = plan(srv, profile="vllm")
        tools = [t["function"]["name"] for t in bodies(srv)[0]["tools"]]
    assert tools[-1] == "ask_citizen"
    assert action.kind == "ask" and action.text == "어느 위치를 기준으로 찾을까요?"
    assert action.missing == ["place"] and action.calls[0].adapter_id == "nmc_emergency_rooms"


def test_extra_body_overrides_tool_choice_and_anything_but_the_conversation():
    with FakeOpenAIServer([stream_text("답")]) as srv:
        plan(srv, profile="vllm", extra_body={"tool_choice": "auto", "max_tokens": 77, "messages": []})
        (body,) = bodies(srv)
    assert body["tool_choice"] == "auto" and body["max_tokens"] == 77 and body["messages"]


def test_a_refused_tool_choice_is_retried_as_auto_and_not_sent_again():
    quirks = Quirks(reject_tool_choice=frozenset({"required"}))
    with FakeOpenAIServer([stream_tool_calls([("kakao_keyword_search", '{"query": "x"}')]),
                           stream_tool_calls([("kakao_keyword_search", '{"query": "x"}')])], quirks=quirks) as srv:
        async def go():
            async with OpenAICompatPlanner(srv.base_url, "k", "m", profile="llamacpp", sleep=Sleeps()) as p:
                a = await p.plan(ctx())
                b = await p.plan(ctx())
                return a, b
        a, b = asyncio.run(go())
        sent = [r.json["tool_choice"] for r in srv.chat_requests]
    assert a.kind == b.kind == "call"
    assert sent == ["required", "auto", "auto"]  # one refusal, then never again


def test_parallel_tool_calls_usage_and_max_tokens_follow_the_profile():
    with FakeOpenAIServer([stream_text("답"), stream_text("답")]) as srv:
        plan(srv, profile="openai")
        plan(srv, profile="llamacpp")
        openai, llama = bodies(srv)
    assert openai["parallel_tool_calls"] is True and openai["stream_options"] == {"include_usage": True}
    assert openai["max_tokens"] == 1024
    assert "parallel_tool_calls" not in llama and "stream_options" not in llama and llama["max_tokens"] == 512


def test_finish_reason_length_is_not_a_complete_answer():
    cut = stream_text("부산대학교병원 응급실은 지금 병상이", finish="length")
    with FakeOpenAIServer([cut]) as srv:
        with pytest.raises(ProviderError) as ei:
            plan(srv, ctx(evidence=[EV]), profile="vllm")
    assert ei.value.code == "provider_bad_response" and "max_tokens" in ei.value.message


# ------------------------------------------------------------------------------ choosing a profile


def test_profile_from_url_and_from_env():
    assert profile_for_url("https://api.friendli.ai/serverless/v1").name == "friendli"
    assert profile_for_url("http://127.0.0.1:11434/v1").name == "ollama"
    assert profile_for_url("http://127.0.0.1:8080/v1").name == "generic"
    env = {"UMMAYA_LLM_BASE_URL": "http://127.0.0.1:8080/v1", "UMMAYA_LLM_PROFILE": "llamacpp",
           "UMMAYA_LLM_CONTEXT_TOKENS": "8192"}
    p = OpenAICompatPlanner.from_env(env)
    assert p.profile.name == "llamacpp" and p.context_tokens == 8192 and p.timeout_s == 300
    assert p.turn_deadline_s == 900


@pytest.mark.parametrize("var, value", [("UMMAYA_LLM_PROFILE", "tgi"), ("UMMAYA_LLM_CONTEXT_TOKENS", "lots"),
                                        ("UMMAYA_LLM_CONTEXT_TOKENS", "100")])
def test_bad_profile_settings_name_the_variable(var, value):
    with pytest.raises(ProviderConfigError) as ei:
        OpenAICompatPlanner.from_env({"UMMAYA_LLM_BASE_URL": "http://127.0.0.1:1/v1", var: value})
    assert ei.value.variable == var


def test_auto_profile_is_probed_once_from_models():
    quirks = Quirks(owned_by="vllm", max_model_len=16384)
    with FakeOpenAIServer([stream_text("답"), stream_text("답")], quirks=quirks) as srv:
        async def go():
            async with OpenAICompatPlanner(srv.base_url, "k", "m", profile="auto", sleep=Sleeps()) as p:
                await p.plan(ctx())
                await p.plan(ctx())
                return p
        p = asyncio.run(go())
        gets = [r for r in srv.requests if r.method == "GET"]
    assert len(gets) == 1 and p.profile.name == "vllm" and p.context_tokens == 16384
    assert profile_from_models({"data": [{"owned_by": "llamacpp", "meta": {"n_ctx": 4096}}]}, "http://x").name == "llamacpp"


# ----------------------------------------------------------------------------- the whole prompt


def test_a_first_request_with_five_tools_fits_4096_and_its_size_is_reported():
    with FakeOpenAIServer([stream_text("답")]) as srv:
        action, p = plan(srv, ctx(candidates=FIVE), profile="llamacpp")
    rep = action.prompt
    assert rep["fits"] and rep["trimmed"] == [] and rep["limit_tokens"] == 4096 - 512
    assert rep["prompt_tokens"] == rep["system_tokens"] + rep["tools_tokens"] + rep["messages_tokens"]
    assert rep["tools_tokens"] > 3 * rep["system_tokens"] / 2  # the tools are most of it
    assert rep["tools_sent"] == 5


def test_ollamas_2048_context_trims_descriptions_then_tools_and_says_so():
    with FakeOpenAIServer([stream_text("답")]) as srv:
        action, _ = plan(srv, ctx(candidates=FIVE), profile="ollama")
        (body,) = bodies(srv)
    rep = action.prompt
    assert rep["limit_tokens"] == 2048 - 512 and rep["fits"], rep
    assert rep["trimmed"][0] == "short tool descriptions"
    assert any(t.startswith("dropped tool") for t in rep["trimmed"])
    sent = [t["function"]["name"] for t in body["tools"]]
    assert sent[0] == "nmc_emergency_rooms" and sent[-1] == "ask_citizen" and len(sent) - 1 == rep["tools_sent"] < 5
    # a locate step a kept tool needs is never the one dropped
    assert "kakao_keyword_search" in sent


def test_the_budget_learns_the_servers_tokens_from_usage():
    reply = stream_text("답", usage=(4000, 10))  # the server counts far more than estimated
    with FakeOpenAIServer([reply, stream_text("답")]) as srv:
        async def go():
            async with OpenAICompatPlanner(srv.base_url, "k", "m", profile="vllm", sleep=Sleeps()) as p:
                a = await p.plan(ctx())
                b = await p.plan(ctx(trace_id="t-2"))
                return a, b
        a, b = asyncio.run(go())
    assert a.prompt["measured_prompt_tokens"] == 4000
    assert b.prompt["calibration"] > 1.5 and b.prompt["prompt_tokens"] > a.prompt["prompt_tokens"] * 1.5


def test_caller_context_tokens_win_over_the_profile():
    with FakeOpenAIServer([stream_text("답")]) as srv:
        action, _ = plan(srv, ctx(candidates=FIVE, context_tokens=1800), profile="vllm")
    assert action.prompt["limit_tokens"] == 1800 - 1024 and action.prompt["trimmed"]


# --------------------------------------------------------------------------- a stable prefix


def test_system_prompt_and_tools_are_byte_identical_across_steps_and_the_clock_is_the_turns():
    import datetime as dt

    clock = dt.datetime(2026, 12, 2, 5, 25, tzinfo=dt.timezone(dt.timedelta(hours=9)))
    msgs = [{"role": "user", "content": "동아대 승학캠퍼스 근처 응급실 알려줘"}]
    step1 = msgs + [{"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "kakao_keyword_search", "arguments": '{"query": "동아대"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": '{"evidence_id": "ev1", "data": {"items": []}}'}]
    with FakeOpenAIServer([stream_text("a"), stream_text("b")]) as srv:
        async def go():
            async with OpenAICompatPlanner(srv.base_url, "k", "m", profile="vllm", sleep=Sleeps(),
                                           now=lambda: dt.datetime(2030, 1, 1, tzinfo=dt.timezone.utc)) as p:
                await p.plan(ctx(trace_id="t1", clock=clock, carried={}, candidates=FIVE))
                # a later step: the working slots gained the located coordinates; the carried ones did not
                await p.plan(ctx(trace_id="t1", clock=clock, carried={}, candidates=FIVE, step=1, messages=step1,
                                 evidence=[EV], slots={"latitude": 35.1167, "longitude": 128.968}))
        asyncio.run(go())
        raw = [r.body for r in srv.chat_requests]
        first, second = (json.loads(b) for b in raw)
    assert first["messages"][0] == second["messages"][0]
    assert json.dumps(first["tools"], ensure_ascii=False) == json.dumps(second["tools"], ensure_ascii=False)
    # The request bytes up to the end of the first user message are identical, so is that message.
    assert second["messages"][: len(first["messages"])] == first["messages"]
    prefix = json.dumps(first["messages"], ensure_ascii=False)[:-1]
    assert json.dumps(second["messages"], ensure_ascii=False).startswith(prefix)
    assert "2026-12-02 05:25" in first["messages"][1]["content"] and "2030" not in raw[0].decode()
    assert "Current time" not in first["messages"][0]["content"]


# ------------------------------------------------------------------------------------ resilience


@pytest.mark.parametrize("first", [unavailable(502), unavailable(503), Drop(),
                                   SSE([chunk({"role": "assistant", "content": ""})], end="abort")])
def test_transient_failures_are_retried_once_with_jitter(first):
    sleeps = Sleeps()
    with FakeOpenAIServer([first, stream_text("답")]) as srv:
        action, _ = plan(srv, profile="vllm", sleep=sleeps, jitter=lambda: 0.5)
        n = len(srv.chat_requests)
    assert action.kind == "answer" and n == 2
    assert sleeps.calls == [0.5]  # base 0.5 s × (0.5 + jitter)


def test_a_transient_failure_twice_is_an_error_and_500_is_not_retried():
    with FakeOpenAIServer([unavailable(503), unavailable(503), stream_text("답")]) as srv:
        with pytest.raises(ProviderError) as ei:
            plan(srv, profile="vllm")
        assert len(srv.chat_requests) == 2
    assert ei.value.code == "provider_unavailable"
    with FakeOpenAIServer([JSONReply(500, {"error": {"message": "boom"}}), stream_text("답")]) as srv:
        with pytest.raises(ProviderError):
            plan(srv, profile="vllm")
        assert len(srv.chat_requests) == 1


def test_a_stream_cut_after_text_arrived_is_not_retried():
    cut = SSE([chunk({"role": "assistant", "content": ""}), chunk({"content": "부산대학교"})], end="abort")
    with FakeOpenAIServer([cut, stream_text("답")]) as srv:
        with pytest.raises(ProviderError) as ei:
            plan(srv, profile="vllm")
        assert len(srv.chat_requests) == 1
    assert ei.value.code == "provider_stream_cut"


def test_a_refused_connection_is_retried_once():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    sleeps = Sleeps()

    async def go():
        async with OpenAICompatPlanner(f"http://127.0.0.1:{port}/v1", "k", "m", sleep=sleeps, timeout_s=2) as p:
            await p.plan(ctx())

    with pytest.raises(ProviderError) as ei:
        asyncio.run(go())
    assert ei.value.code == "provider_unavailable" and len(sleeps.calls) == 1


def test_profiles_table_is_complete():
    assert set(PROFILES) == {"openai", "vllm", "llamacpp", "ollama", "friendli", "generic"}
    assert PROFILES["llamacpp"].assistant_content == "empty" and PROFILES["ollama"].context_tokens == 2048
    assert copy.copy(PROFILES["vllm"]).replace(context_tokens=1).context_tokens == 1
