"""Issue 9 item 5 / issue 11 item 3: one personal-data guard before dispatch, for every planner."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from ummaya.runtime.guard.personal import contains_personal, guard_arguments
from ummaya.runtime.plan.protocol import Action, PlanContext, ToolCall

from .conftest import Talk, args_of, calls

PHONE = "010-1234-5678"


def test_a_locate_query_keeps_just_the_place(catalog) -> None:
    m = catalog.get("kakao_keyword_search")
    cleaned, found = guard_arguments(m, {"query": f"제 번호 {PHONE}인데 부산역"})
    assert cleaned == {"query": "부산역"}
    assert [(r.field, r.kinds, r.action) for r in found] == [("query", ("phone",), "removed")]
    assert PHONE not in json.dumps([r.event() for r in found], ensure_ascii=False)


def test_nothing_left_is_dropped(catalog) -> None:
    cleaned, found = guard_arguments(catalog.get("kakao_keyword_search"), {"query": "900101-1234567"})
    assert cleaned == {} and found[0].action == "dropped" and found[0].kinds == ("rrn",)


def test_declared_personal_field_of_a_protected_adapter_keeps_its_value(catalog) -> None:
    m = catalog.get("welfare_application_submit")  # gate: send, consent notice, phone: x-slot phone
    args = {"service_name": "주거급여", "person_name": "최현우", "birth_date": "1990-05-14", "phone": PHONE}
    cleaned, found = guard_arguments(m, args)
    assert cleaned == args and not found


def test_personal_data_elsewhere_in_a_protected_adapter_is_removed(catalog) -> None:
    m = catalog.get("welfare_application_submit")
    cleaned, found = guard_arguments(m, {"service_name": "주거급여", "person_name": "최현우",
                                         "birth_date": "1990-05-14", "region_name": f"하단동 {PHONE}"})
    assert cleaned["region_name"] == "하단동" and found[0].field == "region_name"


def test_a_read_only_adapter_takes_no_personal_data(catalog) -> None:
    cleaned, found = guard_arguments(catalog.get("mfds_easy_drug_info"), {"drug_name": "타이레놀 a@b.com"})
    assert cleaned == {"drug_name": "타이레놀"} and found[0].kinds == ("email",)


class LeakyPlanner:
    """A planner (a model, say) that copies the whole request into a locate query."""

    name = "leaky"

    async def plan(self, ctx: PlanContext, on_delta: Any = None) -> Action:
        if ctx.evidence:
            return Action(kind="answer", text="done")
        return Action(kind="call", calls=[ToolCall("c1", "kakao_keyword_search", {"query": ctx.request})])


def test_the_guard_runs_for_every_planner(catalog, retriever, store) -> None:
    from ummaya.runtime.assemble import build_engine
    from ummaya.runtime.dispatch import Dispatcher
    from ummaya.runtime.turn import TurnRequest

    eng = build_engine(catalog.root, catalog=catalog, retriever=retriever, store=store,
                       dispatcher=Dispatcher(catalog, env={}), planner=LeakyPlanner())
    r = asyncio.run(eng.ask(TurnRequest(f"제 번호 {PHONE}인데 부산역 어디야", session_id="leak", mode="mock")))
    assert calls(r) == ["kakao_keyword_search"]
    assert args_of(r, "kakao_keyword_search") == {"query": "부산역"}
    assert not contains_personal(r.calls[0]["upstream_url"] or "")
    red = [e for e in r.events if e.type == "redaction"]
    assert red and red[0].data == {"adapter_id": "kakao_keyword_search", "field": "query", "kinds": ["phone"], "action": "removed"}
    # The event names the kind and the field, never the value — in the live events and the trace.
    assert PHONE not in json.dumps([e.model_dump() for e in r.events if e.type == "redaction"], ensure_ascii=False)
    stored = store.get_trace(r.trace_id)
    assert PHONE not in json.dumps(stored.calls, ensure_ascii=False)


def test_only_personal_data_as_a_place_asks_again(talk: Talk) -> None:
    assert talk("근처 약국").stop_reason == "needs_input"
    r = talk("010-7777-8888")
    assert r.stop_reason == "needs_input" and not [c for c in r.calls if c["status"] not in ("refused",)]
    # The pending question is still the pharmacy's: a place now resumes it.
    r = talk("하단동")
    assert calls(r) == ["kakao_keyword_search", "nmc_pharmacies"]


def test_phone_before_near_never_reaches_kakao(talk: Talk) -> None:
    r = talk(f"제 번호 {PHONE}인데 부산역 근처 약국")
    assert calls(r) == ["kakao_keyword_search", "nmc_pharmacies"]
    assert args_of(r, "kakao_keyword_search") == {"query": "부산역"}
    for c in r.calls:
        assert not contains_personal(c["upstream_url"] or "") and not contains_personal(c["arguments"])
