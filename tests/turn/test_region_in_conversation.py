"""Issue 17 stage 3: a district name several 시·도 have (중구, 동구, 서구) is read inside the
시·도 the conversation carries — by the planner, by the engine's provenance check and by the
correction of a locate step's region slots — through the one shared reader
(understand/places.region_within)."""

from __future__ import annotations

import asyncio
import json

import pytest

from ummaya.runtime.plan.protocol import Action, ToolCall
from ummaya.runtime.turn import TurnEngine, TurnRequest


class Scripted:
    """A planner that proposes what it is told (the rule under test is the engine's)."""

    name = "scripted"

    def __init__(self, *actions: Action):
        self.actions = list(actions)

    async def plan(self, ctx, on_delta=None):
        return self.actions.pop(0) if self.actions else Action(kind="answer", text="")


def call(adapter_id: str, args: dict) -> Action:
    return Action(kind="call", calls=[ToolCall("c", adapter_id, args, json.dumps(args))])


def args_of(result, adapter: str) -> dict | None:
    return next((c["arguments"] for c in result.calls if c["adapter_id"] == adapter), None)


def converse(engine, session: str, *messages: str):
    async def run():
        return [await engine.ask(TurnRequest(m, session_id=session, mode="mock")) for m in messages]

    return asyncio.run(run())


def test_the_shared_reader_reads_a_district_inside_the_carried_sido():
    from ummaya.runtime.understand.places import region_within

    daegu = {"region_code": "2726000000"}  # 대구 수성구, as a locate step left it
    assert region_within("중구 사고다발지역은?", daegu).sigungu_code == "27110"
    assert region_within("부산 중구는?", daegu).sigungu_code == "26110"  # a text naming its own 시·도 keeps it
    assert region_within("중구는?", {}) is None  # alone it says no 시·도
    assert region_within("수영구는?", daegu).sido_code == "26"  # a district of one 시·도 only


def test_a_district_code_read_inside_the_conversations_sido_passes_the_provenance_check(engine):
    first, then = converse(engine, "u3-daegu", "대구 수성구 교통사고 다발지역 알려줘", "중구 사고다발지역은?")
    assert args_of(then, "koroad_accident_hotspots") == {"sido_code": "27", "gugun_code": "110"}
    assert then.stop_reason == "completed"
    assert not [e for e in then.events if e.type == "check" and e.data["check"] == "chained_provenance"]


def test_a_district_code_of_another_sido_is_still_refused(engine):
    converse(engine, "u3-guess", "대구 수성구 교통사고 다발지역 알려줘")
    guess = {"sido_code": "11", "gugun_code": "140"}  # 서울 중구, in a conversation about 대구
    scripted = TurnEngine(engine.catalog, engine.retriever, engine.dispatcher,
                          Scripted(call("koroad_accident_hotspots", guess), call("koroad_accident_hotspots", guess)),
                          store=engine.store)
    [r] = converse(scripted, "u3-guess", "중구 사고다발지역은?")
    assert r.stop_reason == "invalid_arguments"
    assert not [c for c in r.calls if c.get("status") == "ok"]


@pytest.mark.parametrize("before, follow_up, sido, gugun", [
    ("울산 남구 사고다발지역 어디야?", "동구는?", "31", "170"),
    ("인천 남동구 교통사고 많은 곳", "서구도 알려줘", "28", "260"),
])
def test_a_replayed_locate_record_does_not_override_the_district_the_citizen_named(engine, before, follow_up, sido, gugun):
    # Mock replays a juso record recorded for another city; the codes follow the named district.
    _first, then = converse(engine, f"u3-{follow_up}", before, follow_up)
    assert args_of(then, "koroad_accident_hotspots") == {"sido_code": sido, "gugun_code": gugun}
