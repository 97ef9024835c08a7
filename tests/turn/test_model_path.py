"""The engine's side of the model path, for every planner: provenance of chained and coded
arguments, the per-call repair budget, repairs shown as the model's own call, loop control,
answers from held evidence, the fallback to the offline planner, the whole-prompt budget and
the deadline a slow model's profile asks for."""

from __future__ import annotations

import asyncio
import json

import pytest

from tests.support.fake_openai import FakeOpenAIServer, stream_text, stream_tool_calls, unavailable
from ummaya.runtime.plan.protocol import Action, ToolCall
from ummaya.runtime.plan.fallback import FallbackPlanner
from ummaya.runtime.plan.offline import OfflinePlanner
from ummaya.runtime.plan.openai_compat import OpenAICompatPlanner
from ummaya.runtime.turn import TurnEngine, TurnRequest
from ummaya.runtime.turn.chained import derived_fields, is_derived

SEOUL = {"latitude": 37.5698, "longitude": 126.9709, "limit": 5}
DONGA = {"latitude": 35.1167, "longitude": 128.968, "limit": 5}


class Scripted:
    """A planner that proposes what it is told, step by step (not a model: the rule is the engine's)."""

    name = "scripted"

    def __init__(self, *actions: Action):
        self.actions = list(actions)
        self.seen: list = []

    async def plan(self, ctx, on_delta=None):
        import copy
        import dataclasses

        # what it was shown at that step (the engine's message list grows after)
        self.seen.append(dataclasses.replace(ctx, messages=copy.deepcopy(ctx.messages)))
        return self.actions.pop(0) if self.actions else Action(kind="answer", text="")


def call(adapter_id: str, args: dict, cid: str = "c") -> Action:
    return Action(kind="call", calls=[ToolCall(cid, adapter_id, args, json.dumps(args))])


def engine_with(engine, planner) -> TurnEngine:
    return TurnEngine(engine.catalog, engine.retriever, engine.dispatcher, planner, store=engine.store)


def ask(engine, planner, query, **kw):
    return asyncio.run(engine_with(engine, planner).ask(TurnRequest(query, mode="mock", **kw)))


def dispatched(r) -> list[str]:
    return [e.data["adapter_id"] for e in r.events if e.type == "call_started"]


# ------------------------------------------------------------------- which fields are derived


def test_derived_is_decided_by_slot_type_and_requires(catalog):
    er, koroad, tago, beds = (catalog.get(i) for i in
                              ("nmc_emergency_rooms", "koroad_accident_hotspots", "tago_bus_arrivals", "nmc_emergency_beds"))
    assert derived_fields(er) == {"latitude": "latitude", "longitude": "longitude"}
    assert set(derived_fields(koroad)) == {"sido_code", "gugun_code"}
    assert set(derived_fields(tago)) == {"city_code", "node_id"}
    assert derived_fields(beds) == {"sido": "sido_name"}  # requires: [sido_name]
    assert not is_derived("drug_name", er) and not is_derived("place", er)


# ------------------------------------------------------------------------- chained provenance


def test_a_guessed_coordinate_from_any_planner_is_refused_with_the_locate_step_named(engine):
    p = Scripted(call("nmc_emergency_rooms", SEOUL), call("nmc_emergency_rooms", SEOUL))
    r = ask(engine, p, "동아대 승학캠퍼스 근처 응급실 알려줘")
    assert dispatched(r) == [] and r.stop_reason == "invalid_arguments" and r.layer == "validate"
    # the first refusal went back to the planner, naming the step that supplies coordinates
    repair = p.seen[1]
    assert "kakao_keyword_search" in repair.repair and repair.repair_kind == "validation"
    assert [m["role"] for m in repair.messages] == ["user", "assistant", "tool"]
    assert [c["status"] for c in r.calls] == ["refused"]


def test_coordinates_from_this_turns_locate_result_pass(engine):
    p = Scripted(call("kakao_keyword_search", {"query": "동아대 승학캠퍼스"}),
                 call("nmc_emergency_rooms", {"latitude": 35.12, "longitude": 128.97}))  # rounded
    r = ask(engine, p, "동아대 승학캠퍼스 근처 응급실 알려줘")
    assert dispatched(r) == ["kakao_keyword_search", "nmc_emergency_rooms"] and r.stop_reason == "completed"


def test_coordinates_the_citizen_typed_pass(engine):
    p = Scripted(call("nmc_emergency_rooms", {"latitude": 35.1796, "longitude": 129.0756}))
    r = ask(engine, p, "35.1796, 129.0756 근처 응급실")
    assert dispatched(r) == ["nmc_emergency_rooms"]


def test_carried_session_coordinates_pass_on_the_next_turn(engine):
    e = engine_with(engine, Scripted(call("kakao_keyword_search", {"query": "동아대 승학캠퍼스"}),
                                     call("nmc_emergency_rooms", DONGA), Action(kind="answer"),
                                     call("nmc_pharmacies", DONGA)))
    asyncio.run(e.ask(TurnRequest("동아대 승학캠퍼스 근처 응급실 알려줘", session_id="s-chain", mode="mock")))
    r = asyncio.run(e.ask(TurnRequest("거기 약국은?", session_id="s-chain", mode="mock")))
    assert dispatched(r) == ["nmc_pharmacies"]


def test_a_guessed_region_code_is_refused_and_a_resolved_one_passes(engine):
    guess = {"sido_code": "11", "gugun_code": "140"}  # 서울 중구, for a Busan request
    r = ask(engine, Scripted(call("koroad_accident_hotspots", guess), call("koroad_accident_hotspots", guess)),
            "부산 사하구 교통사고 다발지역")
    assert dispatched(r) == [] and r.stop_reason == "invalid_arguments"
    check = next(e.data for e in r.events if e.type == "check")
    assert "juso_address_search" in check["message"]


def test_a_city_code_the_citizen_named_by_region_passes(engine):
    r = ask(engine, Scripted(call("tago_bus_arrivals", {"city_code": "21", "stop_name": "하단역"})),
            "부산 하단역 버스 언제 와?")
    assert dispatched(r) == ["tago_bus_arrivals"]
    r = ask(engine, Scripted(call("tago_bus_arrivals", {"city_code": "22", "stop_name": "하단역"}),
                             call("tago_bus_arrivals", {"city_code": "22", "stop_name": "하단역"})),
            "부산 하단역 버스 언제 와?")
    assert dispatched(r) == []  # 22 = 대구: not what the citizen said


def test_the_repair_budget_is_per_call_and_declared_on_the_request(engine):
    r = ask(engine, Scripted(call("nmc_emergency_rooms", SEOUL)), "동아대 승학캠퍼스 근처 응급실 알려줘", repair_budget=0)
    assert r.stop_reason == "invalid_arguments" and len([e for e in r.events if e.type == "plan"]) == 1
    # a validation repair and a provenance repair of different calls each get their own
    p = Scripted(call("nmc_emergency_rooms", {"latitude": 99, "longitude": 1}), call("nmc_emergency_beds", {"sido": "부산광역시"}),
                 Action(kind="answer"))
    r = ask(engine, p, "부산 응급실")
    assert r.stop_reason == "completed"


def test_validation_repair_is_the_models_own_call_answered_by_a_tool_message(engine):
    p = Scripted(call("nmc_emergency_beds", {"sido": "Atlantis"}), call("nmc_emergency_beds", {"sido": "부산광역시"}),
                 Action(kind="answer"))
    ask(engine, p, "부산 응급실 빈 병상 있어?")
    msgs = p.seen[1].messages
    assert [m["role"] for m in msgs] == ["user", "assistant", "tool"]
    assert json.loads(msgs[1]["tool_calls"][0]["function"]["arguments"]) == {"sido": "Atlantis"}
    assert "Atlantis" in msgs[2]["content"]


def test_two_user_messages_in_a_row_never_reach_a_model(engine):
    script = [stream_tool_calls([("nmc_emergency_beds", '{"sido": "Atlantis"}')]),
              stream_tool_calls([("nmc_emergency_beds", json.dumps({"sido": "부산광역시"}, ensure_ascii=False))]),
              stream_text("확인했어요.")]
    with FakeOpenAIServer(script) as srv:
        planner = OpenAICompatPlanner(srv.base_url, "k", "m", timeout_s=5)
        r = ask(engine, planner, "부산 응급실 빈 병상 있어?")
        sent = [q.json["messages"] for q in srv.chat_requests]
    assert r.stop_reason == "completed"
    for msgs in sent:
        roles = [m["role"] for m in msgs]
        assert not any(a == b == "user" for a, b in zip(roles, roles[1:])), roles
    assert [m["role"] for m in sent[1]][-2:] == ["assistant", "tool"]


def test_the_offline_planner_is_never_refused_on_the_scenarios(engine):
    # (the whole scenario set runs in test_scenarios.py; here the chained ones, counted)
    for q in ("동아대 승학캠퍼스 근처 응급실 알려줘", "부산 사하구 교통사고 다발지역", "부산 하단역 버스 언제 와?",
              "부산 응급실 빈 병상 있어?"):
        r = ask(engine, OfflinePlanner(), q)
        assert not [e for e in r.events if e.type == "check" and e.data["check"] == "chained_provenance"], q


# ------------------------------------------------------------------------ loops and held evidence


def test_steps_running_out_after_an_end_result_answer_from_it(engine):
    beds = {"sido": "부산광역시"}
    p = Scripted(call("nmc_emergency_beds", beds), call("nmc_emergency_rooms", DONGA, "c2"))
    r = ask(engine, p, "부산 응급실 빈 병상 있어?", max_steps=2)
    assert r.stop_reason == "completed" and r.layer == "answer"
    stop = next(e for e in r.events if e.type == "stop")
    assert stop.data["detail"] == "answered_from_evidence: steps_exhausted"


def test_a_model_failure_after_evidence_keeps_it_and_serve_sees_no_error_event(engine):
    with FakeOpenAIServer([stream_tool_calls([("nmc_emergency_beds", json.dumps({"sido": "부산광역시"}, ensure_ascii=False))]),
                           unavailable(500)]) as srv:
        r = ask(engine, OpenAICompatPlanner(srv.base_url, "k", "m", timeout_s=5), "부산 응급실 빈 병상 있어?")
    assert r.stop_reason == "completed" and r.error is None
    assert not [e for e in r.events if e.type == "error"]
    assert "provider_unavailable" in r.answer and "[Mock · 모의]" in r.answer


# ------------------------------------------------------------------------------------ fallback


def test_fallback_offline_takes_over_when_the_model_server_is_down_and_says_so(engine):
    with FakeOpenAIServer([unavailable(500)]) as srv:
        model = OpenAICompatPlanner(srv.base_url, "k", "m", timeout_s=5)
        r = ask(engine, FallbackPlanner(model, OfflinePlanner()), "동아대 승학캠퍼스 근처 응급실 알려줘")
        n = len(srv.chat_requests)
    assert n == 1, "one failed request per turn, not one per step"
    assert r.stop_reason == "completed" and dispatched(r) == ["kakao_keyword_search", "nmc_emergency_rooms"]
    plans = [e.data for e in r.events if e.type == "plan"]
    assert all(p["planner"] == "offline" and p["fallback"]["code"] == "provider_unavailable" for p in plans)


def test_fallback_does_not_hide_a_configuration_error():
    from ummaya.runtime.plan.protocol import ProviderError

    class Broken:
        name = "broken"

        async def plan(self, ctx, on_delta=None):
            raise ProviderError("provider_config", "UMMAYA_LLM_BASE_URL is empty")

    with pytest.raises(ProviderError):
        asyncio.run(FallbackPlanner(Broken(), OfflinePlanner()).plan(type("C", (), {"trace_id": "t"})()))


# ------------------------------------------------------------------------ budget and deadline


def test_compaction_counts_the_planners_system_prompt_and_tools(engine):
    class Reporting(Scripted):
        async def plan(self, ctx, on_delta=None):
            a = await super().plan(ctx, on_delta)
            a.prompt = {"system_tokens": 500, "tools_tokens": 1800, "limit_tokens": 2400, "max_tokens": 512,
                        "calibration": 1.0}
            return a

    p = Reporting(call("kakao_keyword_search", {"query": "동아대 승학캠퍼스"}), call("nmc_emergency_rooms", DONGA, "c2"),
                  Action(kind="answer"))
    r = ask(engine, p, "동아대 승학캠퍼스 근처 응급실 알려줘")
    comp = [e.data for e in r.events if e.type == "compaction"]
    # messages alone are far below 2,400 tokens: only the whole prompt is over it
    assert comp and comp[0]["limit_tokens"] == 2400 and comp[0]["before_tokens"] > 2300
    budgets = [e for e in r.events if e.type == "budget"]
    assert len(budgets) == 3 and r.stop_reason == "completed"


def test_context_tokens_on_the_request_reach_the_planner(engine):
    p = Scripted(Action(kind="ask", text="어디요?"))
    ask(engine, p, "근처 응급실", context_budget_tokens=3000)
    assert p.seen[0].context_tokens == 3000 and p.seen[0].max_steps == 4 and p.seen[0].clock is not None


def test_a_slow_models_profile_gives_the_turn_its_deadline(engine, monkeypatch):
    monkeypatch.delenv("UMMAYA_TURN_DEADLINE_S", raising=False)
    planner = OpenAICompatPlanner("http://127.0.0.1:9/v1", None, "m", profile="llamacpp")
    e = engine_with(engine, planner)

    async def deadline():
        ctx = e.context(TurnRequest("x"), "x", "T1")
        return ctx.deadline - asyncio.get_running_loop().time()

    assert 890 < asyncio.run(deadline()) <= 900
    monkeypatch.setenv("UMMAYA_TURN_DEADLINE_S", "30")
    assert asyncio.run(deadline()) <= 30
