"""The turn on the embedded default: stop reasons, chaining, sessions, consent, events, traces."""

from __future__ import annotations

import asyncio
import json

import pytest

from ummaya.runtime.request_context import RequestError
from ummaya.runtime.events import STOP_REASONS
from ummaya.runtime.plan.protocol import Action, ToolCall
from ummaya.runtime.turn import TurnEngine, TurnRequest


def ask(engine, query: str, **kw):
    return asyncio.run(engine.ask(TurnRequest(query, mode=kw.pop("mode", "mock"), **kw)))


def ids(result) -> list[str]:
    return [c["adapter_id"] for c in result.calls]


def test_landmark_request_chains_locate_then_find(engine):
    r = ask(engine, "동아대 승학캠퍼스 근처 응급실 알려줘")
    assert ids(r) == ["kakao_keyword_search", "nmc_emergency_rooms"]
    assert r.stop_reason == "completed"
    assert [c["status"] for c in r.calls] == ["ok", "ok"]
    # A live adapter answered from fixtures reports the tier actually used.
    assert [c["tier"] for c in r.calls] == ["mock", "mock"]
    assert "Mock" in r.answer and "국립중앙의료원" in r.answer
    # The find call used the coordinates the locate call resolved, not a guess.
    located = r.evidence[0]["summary"]["items"][0]
    args = next(e.data["arguments"] for e in r.events if e.type == "call_started" and e.data["adapter_id"] == "nmc_emergency_rooms")
    assert (args["latitude"], args["longitude"]) == (located["latitude"], located["longitude"])


def test_missing_place_asks_instead_of_guessing(engine):
    r = ask(engine, "근처 응급실 알려줘")
    assert r.stop_reason == "needs_input"
    assert r.calls == []
    assert "위치" in r.answer or "지역" in r.answer


def test_out_of_scope_abstains(engine):
    r = ask(engine, "삼성전자 주가 얼마야?")
    assert r.stop_reason == "no_adapter"
    assert r.calls == [] and r.candidates == []
    assert r.layer == "retrieve"


def test_english_request_gets_english_answer(engine):
    r = ask(engine, "Pharmacies near Busan Station")
    assert r.language == "en"
    assert r.stop_reason == "completed", r.answer
    assert "Mock" in r.answer and "Source:" in r.answer
    assert "출처" not in r.answer


def test_session_reuses_resolved_location(engine):
    first = ask(engine, "동아대 승학캠퍼스 근처 약국", session_id="s-reuse")
    assert ids(first)[0] == "kakao_keyword_search"
    second = ask(engine, "거기 근처 AED 어디 있어?", session_id="s-reuse")
    assert "kakao_keyword_search" not in ids(second), "a resolved location is reused, never re-guessed"
    assert ids(second) == ["nmc_aed_locations"]
    # Nothing leaks without a session.
    third = ask(engine, "AED 어디 있어?")
    assert third.stop_reason == "needs_input"


def test_events_are_ordered_and_answer_is_the_deltas(engine):
    r = ask(engine, "부산 응급실 빈 병상 있어?")
    seqs = [e.seq for e in r.events]
    assert seqs == list(range(len(r.events)))
    assert r.events[0].type == "turn_started" and r.events[-1].type == "stop"
    assert [e.type for e in r.events].count("stop") == 1
    assert "".join(e.data["text"] for e in r.events if e.type == "delta") == r.answer
    assert r.events[-1].data["stop_reason"] == r.stop_reason in STOP_REASONS


@pytest.mark.parametrize("query,code", [("", "empty_query"), ("   \t\n ", "empty_query"), ("가" * 10_000, "query_too_long")])
def test_bad_requests_are_refused_with_a_code(engine, query, code):
    with pytest.raises(RequestError) as exc:
        ask(engine, query)
    assert exc.value.code == code


def test_control_characters_are_dropped_not_fatal(engine):
    r = ask(engine, "부산\x00 응급실\x1b[31m 빈 병상\u200b 있어?")
    assert r.stop_reason == "completed"
    assert "\x00" not in r.answer


def test_live_without_credentials_stops_with_credential_missing(engine):
    r = ask(engine, "부산 응급실 빈 병상 있어?", mode="live")
    assert r.stop_reason == "credential_missing"
    assert r.calls[0]["status"] == "error" and r.calls[0]["tier"] == "live"
    assert "Mock" not in r.answer


def test_consent_gate_blocks_until_granted(engine, store):
    request = "홍길동 1990-01-01 기초연금 신청해줘"
    r = ask(engine, request, session_id="s-consent")
    assert r.stop_reason == "consent_required", (ids(r), r.answer)
    assert r.calls and r.calls[-1]["status"] == "consent_required"
    assert not [e for e in r.events if e.type == "call_started"], "nothing dispatched without consent"
    assert "보유 기간" in r.answer and "거부할 권리" in r.answer and "목적" in r.answer
    granted = ask(engine, request, session_id="s-consent", consents=("welfare_application_submit",))
    assert granted.stop_reason == "completed", granted.answer
    assert granted.calls[-1]["tier"] == "mock" and granted.calls[-1]["status"] == "ok"
    assert "모의" in granted.answer
    assert store.has_consent("s-consent", "welfare_application_submit")
    assert store.verify().ok


def test_consent_comes_before_asking_for_personal_data(engine):
    r = ask(engine, "복지 급여 신청서 제출해줘", session_id="s-order")
    assert r.stop_reason == "consent_required", (ids(r), r.answer)
    after = ask(engine, "복지 급여 신청서 제출해줘", session_id="s-order", consents=("welfare_application_submit",))
    assert after.stop_reason == "needs_input"
    assert not [e for e in after.events if e.type == "call_started"]


def test_handoff_stops_with_official_channel(engine):
    r = ask(engine, "이사했는데 전입신고 어떻게 해?")
    assert r.stop_reason == "handoff_required"
    assert ids(r) == ["gov24_move_in_report"]
    assert "gov.kr" in r.answer and "14" in r.answer


def test_trace_is_stored_redacted_with_expiry(engine, store):
    r = ask(engine, "010-1234-5678 로 연락 가능한 부산 응급실 빈 병상 알려줘")
    t = store.get_trace(r.trace_id)
    assert t is not None and t.expires_at is not None
    assert "010-1234-5678" not in json.dumps(t.to_dict(), ensure_ascii=False)
    assert t.stop_reason == r.stop_reason


class ScriptedPlanner:
    """A planner that proposes scripted actions: drives validate/gate paths deterministically."""

    name = "scripted"

    def __init__(self, actions: list[Action]):
        self.actions = actions
        self.seen_repairs: list[str | None] = []

    async def plan(self, ctx, on_delta=None):
        self.seen_repairs.append(ctx.repair)
        return self.actions.pop(0) if self.actions else Action(kind="answer", text="done")


def scripted(engine, actions) -> tuple[TurnEngine, ScriptedPlanner]:
    p = ScriptedPlanner(actions)
    return TurnEngine(engine.catalog, engine.retriever, engine.dispatcher, p, store=engine.store), p


class StreamingPlanner(ScriptedPlanner):
    """Streams each action's text as deltas first, the way the OpenAI-compatible provider does."""

    name = "streaming"

    async def plan(self, ctx, on_delta=None):
        action = await super().plan(ctx)
        for piece in action.text.split(" "):
            if on_delta is not None and piece:
                on_delta(piece + " ")
                await asyncio.sleep(0)
        return action


def streamed(engine, actions, query: str):
    e = TurnEngine(engine.catalog, engine.retriever, engine.dispatcher, StreamingPlanner(actions), store=engine.store)
    return asyncio.run(e.ask(TurnRequest(query, mode="mock")))


def test_narration_before_a_tool_call_is_not_part_of_the_answer(engine):
    call = Action("call", [ToolCall("c1", "nmc_emergency_beds", {"sido": "부산광역시"})], text="병상 정보를 조회해 볼게요.")
    final = Action("answer", text="부산 응급실 병상 현황입니다 (모의 데이터).")
    r = streamed(engine, [call, final], "부산 응급실 병상")
    assert r.stop_reason == "completed" and r.grounded
    assert "조회해 볼게요" not in r.answer and "부산 응급실 병상 현황입니다" in r.answer
    # the engine's frame around the prose: tier label first, then source, boundary, next step
    assert r.answer.startswith("[Mock · 모의]") and "출처:" in r.answer and "다음 단계:" in r.answer
    assert r.answer == "".join(e.data["text"] for e in r.events if e.type == "delta")
    plan = next(e for e in r.events if e.type == "plan")
    assert plan.data["narration"].startswith("병상 정보를")  # kept in the trace, not the answer
    # a planner's words are held until its step ends and the claim check has read them
    kinds = [e.type for e in r.events]
    last_plan = len(kinds) - 1 - kinds[::-1].index("plan")
    assert kinds.index("delta") > last_plan


def test_a_streamed_question_is_said_once(engine):
    q = "어느 지역 기준으로 알려드릴까요?"
    r = streamed(engine, [Action("ask", text=q)], "응급실 병상")
    assert r.stop_reason == "needs_input"
    assert r.answer.count("어느 지역") == 1


def test_invalid_arguments_get_one_repair_then_stop(engine):
    bad = Action("call", [ToolCall("c1", "nmc_emergency_beds", {"sido": "Atlantis"})])
    e, p = scripted(engine, [bad, Action("call", [ToolCall("c2", "nmc_emergency_beds", {"sido": "Mars"})])])
    r = asyncio.run(e.ask(TurnRequest("부산 응급실 병상", mode="mock")))
    assert r.stop_reason == "invalid_arguments"
    assert p.seen_repairs[0] is None and "sido" in (p.seen_repairs[1] or "")
    assert all(c["status"] == "invalid" for c in r.calls)


def test_repaired_arguments_are_dispatched(engine):
    bad = Action("call", [ToolCall("c1", "nmc_emergency_beds", {"sido": "Atlantis"})])
    good = Action("call", [ToolCall("c2", "nmc_emergency_beds", {"sido": "부산광역시"})])
    e, _ = scripted(engine, [bad, good])
    r = asyncio.run(e.ask(TurnRequest("부산 응급실 병상", mode="mock")))
    assert r.stop_reason == "completed" and ids(r) == ["nmc_emergency_beds"]


def test_adapter_outside_candidates_is_refused(engine):
    rogue = Action("call", [ToolCall("c1", "traffic_fine_payment", {})])
    e, _ = scripted(engine, [rogue, rogue])
    r = asyncio.run(e.ask(TurnRequest("부산 응급실 병상", mode="mock")))
    assert r.stop_reason == "invalid_arguments"
    assert not any(c["status"] == "ok" for c in r.calls)


def test_malformed_json_arguments_never_reach_an_adapter(engine):
    junk = Action("call", [ToolCall("c1", "nmc_emergency_beds", None, raw_arguments='{"sido": ')])
    e, _ = scripted(engine, [junk, junk])
    r = asyncio.run(e.ask(TurnRequest("부산 응급실 병상", mode="mock")))
    assert r.stop_reason == "invalid_arguments"
    assert not [ev for ev in r.events if ev.type == "call_started"]


def test_step_budget_stops_with_budget_exhausted(engine):
    r = asyncio.run(engine.ask(TurnRequest("동아대 승학캠퍼스 근처 응급실 알려줘", mode="mock", max_steps=1)))
    # Only the place was found (the means, not the ER list asked for): the stop still says the
    # steps ran out, and what was found is shown rather than thrown away.
    assert r.stop_reason == "budget_exhausted"
    assert ids(r) == ["kakao_keyword_search"]
    assert "동아대학교 승학캠퍼스" in r.answer and "허용된 단계를 모두 씀" in r.answer


def test_context_budget_compacts_older_tool_results(engine):
    r = asyncio.run(engine.ask(TurnRequest("동아대 승학캠퍼스 근처 응급실 알려줘", mode="mock", context_budget_tokens=50)))
    compactions = [e for e in r.events if e.type == "compaction"]
    assert compactions and compactions[0].data["after_tokens"] < compactions[0].data["before_tokens"]
    assert r.stop_reason == "completed"


def test_a_slow_model_meets_the_turn_deadline_with_a_clean_stop(engine):
    class Sleepy:
        name = "sleepy"

        async def plan(self, ctx, on_delta=None):
            await asyncio.Event().wait()  # never set: only the deadline ends it

    e = TurnEngine(engine.catalog, engine.retriever, engine.dispatcher, Sleepy(), store=engine.store)
    r = asyncio.run(e.ask(TurnRequest("부산 응급실 빈 병상 있어?", mode="mock", deadline_s=0.2)))
    assert r.stop_reason == "channel_unavailable" and r.layer == "plan"
    assert r.error and r.error["code"] == "provider_timeout"
    assert r.events[-1].type == "stop" and [e.type for e in r.events].count("stop") == 1
