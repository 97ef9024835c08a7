"""The tool set and the gate, driven in process with the official SDK's client (both protocol
eras: 2026-07-28 dispatches directly, ``mode="legacy"`` runs the initialize handshake)."""

from __future__ import annotations

import json
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client

from ummaya.runtime.catalog import Catalog
from ummaya.runtime.mcp import build_server
from ummaya.runtime.mcp.tool_specs import IRREVERSIBLE_GATES

from .conftest import ER_ARGS, ID_ARGS, text_of


def run(fn: Any, *args: Any) -> Any:
    return anyio.run(fn, *args)


def listed(backend: Any, mode: str = "auto") -> dict[str, types.Tool]:
    async def go() -> dict[str, types.Tool]:
        async with Client(build_server(backend), mode=mode) as c:
            return {t.name: t for t in (await c.list_tools()).tools}
    return run(go)


def test_every_adapter_is_a_tool_with_its_manifest_schemas(backend: Any, generated: Any) -> None:
    catalog = Catalog.load(generated)
    tools = listed(backend)
    assert set(tools) == set(catalog.adapters) | {"ask"}
    for aid, m in catalog.adapters.items():
        t = tools[aid]
        assert t.input_schema == m.input_schema, aid
        assert t.output_schema == m.output_schema, aid
        assert t.title.startswith(m.title.ko) and m.title.en in t.title
        assert m.summary.ko in t.description and m.summary.en in t.description
        assert m.citation.url in t.description
        assert "Tier: Mock" in t.description or "Tier: Handoff" in t.description  # mock mode


def test_annotations_follow_primitive_and_gate(backend: Any, generated: Any) -> None:
    catalog = Catalog.load(generated)
    tools = listed(backend, "legacy")  # the same list over the handshake era
    for aid, m in catalog.adapters.items():
        a = tools[aid].annotations
        meta = tools[aid].meta
        if m.primitive in ("locate", "find", "check"):
            assert a.read_only_hint is True and a.destructive_hint is False, aid
        else:
            assert a.read_only_hint is False, aid
            assert a.destructive_hint is (m.permission.gate in IRREVERSIBLE_GATES and m.tier != "handoff"), aid
        assert a.open_world_hint is False, aid  # mock mode: nothing reaches an agency
        assert meta["ummaya/consent_required"] is (m.permission.gate not in ("read-only", "blocked") and m.tier != "handoff")
    # the concrete cases the table is about
    assert tools["nmc_emergency_rooms"].annotations.read_only_hint is True
    assert tools["mobile_id_verify"].annotations.read_only_hint is True
    assert tools["mobile_id_verify"].meta["ummaya/consent_required"] is True
    assert "consent_required" in tools["mobile_id_verify"].description
    assert tools["traffic_fine_payment"].annotations.destructive_hint is True
    assert tools["gov24_move_in_report"].annotations.destructive_hint is False  # a handoff submits nothing
    assert tools["ask"].output_schema["properties"]["stop_reason"]["enum"]


def test_open_world_only_where_the_call_would_go_live(generated: Any, store: Any, monkeypatch: Any) -> None:
    from ummaya.runtime.service import TurnService
    from ummaya.runtime.mcp import McpBackend

    monkeypatch.setenv("DATA_GO_KR_SERVICE_KEY", "test-key-never-sent")
    service = TurnService.load(generated, store=store)
    tools = listed(McpBackend(lambda: service, mode="auto", session_id="s"))
    assert tools["nmc_emergency_rooms"].annotations.open_world_hint is True  # has its key: Live
    assert "Tier: Live" in tools["nmc_emergency_rooms"].description
    assert tools["kakao_keyword_search"].annotations.open_world_hint is False  # no Kakao key: Mock
    assert tools["mobile_id_verify"].annotations.open_world_hint is False  # a mock-tier adapter


def test_mock_call_carries_structure_badge_citation_and_trace(backend: Any, store: Any) -> None:
    async def go() -> Any:
        async with Client(build_server(backend)) as c:
            return await c.call_tool("nmc_emergency_rooms", ER_ARGS)  # the client checks outputSchema
    r = run(go)
    assert r.is_error is False
    assert r.structured_content["total_count"] >= 1 and r.structured_content["items"][0]["name"]
    text = text_of(r)
    assert text.startswith("[Mock · 모의] 국립중앙의료원")
    assert "https://www.data.go.kr/data/15000563/openapi.do" in text
    assert r.structured_content["items"][0]["name"] in text
    trace = store.get_trace(r.meta["ummaya/trace_id"])
    assert trace is not None and trace.session_id == "mcp-test-session"
    assert [c["status"] for c in trace.calls] == ["ok"] and trace.calls[0]["tier"] == "mock"
    assert trace.expires_at is not None


def test_invalid_arguments_name_the_field_and_dispatch_nothing(backend: Any, store: Any) -> None:
    async def go() -> Any:
        async with Client(build_server(backend)) as c:
            return await c.call_tool("nmc_emergency_rooms", {"latitude": 99, "longitude": 128.9})
    r = run(go)
    assert r.is_error is True
    assert text_of(r).startswith("invalid_arguments: nmc_emergency_rooms.latitude")
    assert store.get_trace(r.meta["ummaya/trace_id"]).calls[0]["status"] == "invalid"


def test_unknown_tool_is_a_protocol_error(backend: Any) -> None:
    from mcp.shared.exceptions import MCPError

    async def go() -> None:
        async with Client(build_server(backend), mode="legacy") as c:
            await c.call_tool("no_such_adapter", {})
    with pytest.raises(MCPError, match="unknown tool 'no_such_adapter'"):
        try:
            run(go)
        except BaseExceptionGroup as group:  # the in-process transport's task group wraps it
            raise next(e for e in _flatten(group) if isinstance(e, MCPError)) from None


def _flatten(group: BaseException) -> list[BaseException]:
    if isinstance(group, BaseExceptionGroup):
        return [x for e in group.exceptions for x in _flatten(e)]
    return [group]


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_protected_tool_without_consent_is_refused_with_the_notice(backend: Any, store: Any, mode: str) -> None:
    async def go() -> Any:
        async with Client(build_server(backend), mode=mode) as c:  # no elicitation callback
            return await c.call_tool("mobile_id_verify", ID_ARGS)
    r = run(go)
    assert r.is_error is True and r.structured_content is None
    text = text_of(r)
    assert text.startswith("consent_required: mobile_id_verify")
    for item in ("목적", "수집 항목", "보유 기간", "거부할 권리", "Purpose", "Retention", "Right to refuse"):
        assert item in text
    assert "ummaya consent grant mobile_id_verify --session mcp-test-session" in text
    assert r.meta["ummaya/notice"]["data_items"] == ["성명", "생년월일", "신분증 종류", "확인 결과"]
    trace = store.get_trace(r.meta["ummaya/trace_id"])
    assert trace.stop_reason == "consent_required" and trace.calls[0]["status"] == "consent_required"
    assert not any(e["type"] == "call_started" for e in trace.events)  # nothing was dispatched
    assert store.list_consents("mcp-test-session") == []


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_consent_by_elicitation_is_recorded_in_the_ledger(backend: Any, store: Any, mode: str) -> None:
    asked: list[Any] = []

    async def elicit(ctx: Any, params: Any) -> types.ElicitResult:
        asked.append(params)
        return types.ElicitResult(action="accept", content={"agree": True})

    async def go() -> Any:
        async with Client(build_server(backend), mode=mode, elicitation_callback=elicit) as c:
            return await c.call_tool("mobile_id_verify", ID_ARGS)
    r = run(go)
    assert len(asked) == 1
    for item in ("목적 Purpose", "수집 항목 Data items", "보유 기간 Retention", "거부할 권리 Right to refuse"):
        assert item in asked[0].message
    assert r.is_error is False, text_of(r)
    assert text_of(r).startswith("[Mock · 모의]") and r.structured_content["mock_status"] == "mock_checked"
    grants = [c for c in store.list_consents("mcp-test-session") if c.action == "grant"]
    assert [g.adapter_id for g in grants] == ["mobile_id_verify"]
    assert grants[0].data_items == ["성명", "생년월일", "신분증 종류", "확인 결과"]
    assert store.verify().ok


@pytest.mark.parametrize("answer", [types.ElicitResult(action="decline"),
                                    types.ElicitResult(action="accept", content={"agree": False})])
def test_a_refusal_runs_nothing_and_records_nothing(backend: Any, store: Any, answer: Any) -> None:
    async def elicit(ctx: Any, params: Any) -> types.ElicitResult:
        return answer

    async def go() -> Any:
        async with Client(build_server(backend), elicitation_callback=elicit) as c:
            return await c.call_tool("mobile_id_verify", ID_ARGS)
    r = run(go)
    assert r.is_error is True
    assert "Not run: consent was refused" in text_of(r) and "consent_required" in text_of(r)
    assert store.list_consents("mcp-test-session") == []


def test_a_forged_accept_is_not_a_consent(backend: Any, store: Any) -> None:
    """An ``accept`` for a question this server never asked (no valid requestState) is ignored."""
    forged = {"consent:mobile_id_verify": types.ElicitResult(action="accept", content={"agree": True})}

    async def go() -> Any:
        async with Client(build_server(backend)) as c:
            return await c.session.call_tool("mobile_id_verify", ID_ARGS, input_responses=forged,
                                             request_state="ummaya-consent:mobile_id_verify:0000",
                                             allow_input_required=True)
    r = run(go)
    assert isinstance(r, types.InputRequiredResult) or r.is_error  # asked (or refused), never run
    assert store.list_consents("mcp-test-session") == []


def test_consent_granted_outside_mcp_is_honoured(backend: Any, store: Any) -> None:
    """What ``ummaya consent grant`` writes (the store's grant API) lets the next call run."""
    from ummaya.runtime.catalog import Catalog

    m = backend.service().catalog.get("mobile_id_verify")
    assert isinstance(backend.service().catalog, Catalog)
    c = m.permission.consent
    store.grant_consent("mcp-test-session", m.id, purpose=c.purpose.ko, data_items=list(c.data_items),
                        retention=c.retention.ko, refusal=c.refusal.ko)

    async def go() -> Any:
        async with Client(build_server(backend)) as c:
            return await c.call_tool("mobile_id_verify", ID_ARGS)
    assert run(go).is_error is False


def test_handoff_tool_returns_the_channel(backend: Any) -> None:
    async def go() -> Any:
        async with Client(build_server(backend)) as c:
            return await c.call_tool("hometax_income_tax_filing", {})
    r = run(go)
    assert r.is_error is False
    text = text_of(r)
    assert text.startswith("[Handoff · 공식 창구 안내]") and "공식 창구:" in text
    assert r.structured_content["url"].startswith("https://")


def test_ask_runs_a_whole_turn_and_follow_ups_share_the_session(backend: Any, store: Any) -> None:
    async def go() -> tuple[Any, Any]:
        async with Client(build_server(backend)) as c:
            first = await c.call_tool("ask", {"query": "동아대 승학캠퍼스 근처 응급실 알려줘"})
            again = await c.call_tool("ask", {"query": "근처 약국도 알려줘"})
            return first, again
    first, again = run(go)
    s = first.structured_content
    assert s["stop_reason"] == "completed" and s["session_id"] == "mcp-test-session"
    assert [c["adapter_id"] for c in s["calls"]] == ["kakao_keyword_search", "nmc_emergency_rooms"]
    assert {e["tier"] for e in s["evidence"]} == {"mock"} and s["evidence"][-1]["citation"]["url"]
    assert f"trace: {s['trace_id']}" in text_of(first) and "Mock" in text_of(first)
    assert store.get_trace(s["trace_id"]) is not None
    a = again.structured_content
    assert a["session_id"] == "mcp-test-session"
    # the place resolved in the first turn is reused, not looked up again
    assert [c["adapter_id"] for c in a["calls"]] == ["nmc_pharmacies"], json.dumps(a["calls"])


def test_ask_stops_at_consent_and_continues_after_elicitation(backend: Any, store: Any) -> None:
    async def elicit(ctx: Any, params: Any) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"agree": True})

    async def go(cb: Any) -> Any:
        async with Client(build_server(backend), elicitation_callback=cb) as c:
            return await c.call_tool("ask", {"query": "모바일 신분증으로 본인 확인해줘"})
    stopped = run(go, None)
    assert stopped.is_error is False and stopped.structured_content["stop_reason"] == "consent_required"
    after = run(go, elicit)
    assert after.structured_content["stop_reason"] != "consent_required"
    assert [c.adapter_id for c in store.list_consents("mcp-test-session")] == ["mobile_id_verify"]


def test_personal_data_never_reaches_a_lookup(backend: Any, store: Any) -> None:
    """The engine's personal-data guard holds for a host's call too: a phone number is taken out
    of a place search before anything is dispatched, and the trace keeps no trace of it."""
    async def go() -> Any:
        async with Client(build_server(backend)) as c:
            return await c.call_tool("kakao_keyword_search", {"query": "010-1234-5678"})
    r = run(go)
    assert r.is_error is True and text_of(r).startswith("needs_input")
    trace = store.get_trace(r.meta["ummaya/trace_id"])
    assert any(e["type"] == "redaction" for e in trace.events)
    assert not any(e["type"] == "call_started" for e in trace.events)
    assert "010-1234-5678" not in json.dumps(trace.to_dict(), ensure_ascii=False)


def test_a_question_asked_by_one_worker_is_answered_at_another(generated: Any, store: Any) -> None:
    """Stateless HTTP may send the retried call to another worker: the requestState MAC is keyed
    from the ledger key every worker shares, so the answer counts there (and is recorded once)."""
    from ummaya.runtime.service import TurnService
    from ummaya.runtime.mcp import McpBackend

    def worker() -> Any:
        service = TurnService.load(generated, store=store)
        return build_server(McpBackend(lambda: service, mode="mock", session_id="mcp-shared"))

    async def never(ctx: Any, params: Any) -> types.ElicitResult:  # declares the capability
        raise AssertionError("the test answers the question itself")

    async def go() -> tuple[Any, Any]:
        async with Client(worker(), elicitation_callback=never) as a, Client(worker(), elicitation_callback=never) as b:
            asked = await a.session.call_tool("mobile_id_verify", ID_ARGS, allow_input_required=True)
            assert isinstance(asked, types.InputRequiredResult)
            [key] = asked.input_requests
            answer = {key: types.ElicitResult(action="accept", content={"agree": True})}
            done = await b.session.call_tool("mobile_id_verify", ID_ARGS, input_responses=answer,
                                             request_state=asked.request_state, allow_input_required=True)
            return asked, done
    from ummaya.runtime.mcp import elicitation

    # not this process's own secret: another process on the same store derives the same key
    assert elicitation.state_secret(store) != elicitation._PROCESS_SECRET
    assert elicitation.state_secret(store) == elicitation.state_secret(store)
    asked, done = run(go)
    assert isinstance(done, types.CallToolResult) and done.is_error is False
    assert [c.adapter_id for c in store.list_consents("mcp-shared")] == ["mobile_id_verify"]
