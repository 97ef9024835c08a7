"""Each turn stage alone, with a fresh log and typed inputs — no engine around it."""

from __future__ import annotations

import asyncio
import datetime as dt

import pytest

from ummaya.runtime.request_context import Session
from ummaya.runtime.permission import MemoryConsentBook
from ummaya.runtime.plan.protocol import Action, ToolCall
from ummaya.runtime.turn.checks import run_checks
from ummaya.runtime.turn.context import build_context
from ummaya.runtime.turn.dispatch import dispatch
from ummaya.runtime.turn.gate import gate
from ummaya.runtime.turn.log import TurnLog
from ummaya.runtime.turn.plan import plan_step
from ummaya.runtime.turn.project import project
from ummaya.runtime.turn.retrieve import retrieve
from ummaya.runtime.turn.validate import validate
from ummaya.runtime.turn.values import (
    Candidates, CheckInput, Planned, Refusal, Stop, TurnRequest, TurnState,
)


def ctx_for(query: str, **kw):
    req = TurnRequest(query, mode="mock", **kw)
    return build_context(req, query, Session("s-test"), "T1",
                         clock=lambda: dt.datetime(2026, 12, 1, 11, 0, tzinfo=dt.timezone(dt.timedelta(hours=9))))


def test_context_is_typed_and_copies_the_session_slots():
    session = Session("s1", {"place": "부산역"})
    c = build_context(TurnRequest("거기 날씨"), "거기 날씨", session, "T9")
    assert c.language == "ko" and c.citizen_texts == ["거기 날씨"] and c.clock.tzinfo is not None
    c.slots["place"] = "서울역"
    assert session.slots["place"] == "부산역", "the working copy never writes through to the session"


def test_retrieve_alone_widens_with_a_locate_provider(catalog, retriever):
    log = TurnLog()
    cands = retrieve(retriever, catalog, ctx_for("동아대 근처 응급실"), TurnRequest("x"), log)
    assert "nmc_emergency_rooms" in cands.by_id
    assert any(catalog.get(a).primitive == "locate" for a in cands.by_id)
    assert [e.type for e in log.take()] == ["candidates"]


def test_retrieve_alone_stops_with_no_adapter(catalog, retriever):
    with pytest.raises(Stop) as s:
        retrieve(retriever, catalog, ctx_for("삼성전자 주가 얼마야?"), TurnRequest("x"), TurnLog())
    assert s.value.reason == "no_adapter"


def test_validate_alone_reports_each_call(catalog):
    by_id = {"nmc_emergency_beds": catalog.get("nmc_emergency_beds")}
    calls = [ToolCall("a", "nmc_emergency_beds", {"sido": "Atlantis"}), ToolCall("b", "nmc_emergency_beds", {"sido": "부산광역시"})]
    log = TurnLog()
    checked = validate(calls, by_id, TurnState(messages=[]), log)
    assert checked.errors[0] and not checked.errors[1]
    assert [e.data["ok"] for e in log.take()] == [False, True]


def test_checks_hook_runs_every_check_and_logs_refusals(catalog):
    class Refuse:
        name = "always"

        def __call__(self, given):
            return [Refusal("always", c.adapter_id, "sido", "needs_input", "no", ["sido_name"]) for c in given.calls]

    log = TurnLog()
    calls = [ToolCall("a", "nmc_emergency_beds", {"sido": "부산광역시"})]
    refusals = run_checks([Refuse()], CheckInput(ctx_for("부산"), calls, {}, MemoryConsentBook()), log)
    assert [r.field for r in refusals] == ["sido"]
    assert [e.type for e in log.take()] == ["check"]


def test_gate_alone_stops_a_protected_call_without_consent(catalog):
    m = catalog.get("welfare_application_submit")
    st = TurnState(messages=[])
    with pytest.raises(Stop) as s:
        gate([ToolCall("c", m.id, {})], {m.id: m}, ctx_for("복지 신청"), st, TurnLog(), book=MemoryConsentBook(),
             grant=lambda sid, mm: "x", call_row=lambda c, status: {"adapter_id": c.adapter_id, "status": status})
    assert s.value.reason == "consent_required" and st.calls[-1]["status"] == "consent_required"


def test_plan_step_alone_holds_every_word_of_the_planner(catalog):
    class Narrator:
        name = "narrator"

        async def plan(self, ctx, on_delta=None):
            on_delta("위치부터 찾아볼게요. ")
            return Action("call", [ToolCall("c", "nmc_emergency_beds", {"sido": "부산광역시"})])

    log, st = TurnLog(), TurnState(messages=[])
    planned = asyncio.run(plan_step(Narrator(), ctx_for("부산 응급실"), Candidates([], []), st, 0, log))
    assert isinstance(planned, Planned) and planned.narration.startswith("위치부터")
    assert st.deltas == [] and [e.type for e in log.take()] == ["plan"]


def test_dispatch_and_project_alone(catalog):
    from ummaya.runtime.dispatch import Dispatcher

    m = catalog.get("nmc_emergency_beds")
    ctx, st, log = ctx_for("부산 응급실 병상"), TurnState(messages=[]), TurnLog()
    done = asyncio.run(dispatch(Dispatcher(catalog, env={}), [ToolCall("c", m.id, {"sido": "부산광역시"})], {m.id: m}, ctx, st, log))
    assert project(done, ctx, st, log) is None
    assert [e.type for e in log.take()] == ["call_started", "call_finished", "evidence"]
    (_, ev), = st.evidence
    assert ev.tier == "mock" and ev.output is not None, "the full output is kept beside the trimmed summary"
    assert st.messages[-1]["role"] == "tool"


def test_dispatch_past_the_deadline_is_channel_unavailable(catalog):
    class Slow:
        def resolve_tier(self, adapter_id, mode):
            return "live"

        async def call(self, adapter_id, arguments, mode="auto"):
            await asyncio.Event().wait()  # never set: only the deadline ends it

    m = catalog.get("nmc_emergency_beds")

    async def run():
        ctx = ctx_for("부산 응급실 병상")
        ctx.deadline = asyncio.get_running_loop().time() + 0.05
        st, log = TurnState(messages=[]), TurnLog()
        done = await dispatch(Slow(), [ToolCall("c", m.id, {"sido": "부산광역시"})], {m.id: m}, ctx, st, log)
        return done, st, project(done, ctx, st, log)

    done, st, stop = asyncio.run(run())
    assert done[0].outcome.error_code == "TURN_DEADLINE" and st.calls[0]["status"] == "error"
    assert stop is not None and stop.reason == "channel_unavailable"
