"""S07: the provider-failure matrix. Every fault runs in both modes; the JSON status and the SSE
``error`` event carry the same stable code; a stream that fails after deltas ends with ``error``,
never ``completed``; the trace records ``failed`` with the same code.

Model provider faults come from the local fake OpenAI-compatible server (``generation.planner =
"openai"``, ``UMMAYA_LLM_BASE_URL`` pointing at it); adapter faults from a local upstream server
that the dispatcher is pointed at (``UMMAYA_BASE_URL_JUSO_ADDRESS_SEARCH``, ``mode: live`` with a
test key). Nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest

from tests.serve.conftest import client, parse_sse
from tests.support.fake_openai import FakeOpenAIServer, Slow, scenario, stream_tool_calls, unavailable
from tests.support.upstreams import Reply, UpstreamServer, html_error_page, juso_json

PROVIDER_QUERY = "동아대 승학캠퍼스 근처 약국 어디 있어?"
ADAPTER_QUERY = "세종대로 110 우편번호 뭐야?"
JUSO_PATH = "/addrlink/addrLinkApi.do"


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed when the socket is: connection refused


def located(items: list[Any]) -> list[Any]:
    """The model looks the place up first, then answers: answer text streams live only once there
    is evidence (before it, the turn holds the model's text until its step ends)."""
    return [stream_tool_calls([("kakao_keyword_search", '{"query": "동아대 승학캠퍼스"}')]), *items]


# fault name -> (kind, script items for ONE request, expected code, expected JSON status)
PROVIDER_FAULTS: dict[str, tuple[list[Any] | None, str, int]] = {
    "provider_timeout": ([Slow(3.0, None)], "provider_timeout", 504),
    "provider_connection_refused": (None, "provider_unavailable", 503),
    "provider_503": ([unavailable(503)], "provider_unavailable", 503),
    "provider_stream_cut_after_deltas": (located(scenario("stream_cut")), "provider_stream_cut", 502),
    "provider_unknown_model": (scenario("unknown_model_404"), "provider_capability", 502),
    "provider_no_tool_calling": (scenario("tools_unsupported_400"), "provider_capability", 502),
}
ADAPTER_FAULTS: dict[str, tuple[Reply, str, int]] = {
    "upstream_503": (Reply(status=503, body=html_error_page(503, "Service Unavailable"), content_type="text/html"),
                     "channel_unavailable", 503),
    "upstream_html_instead_of_json": (Reply(body=html_error_page(200, "maintenance"), content_type="text/html"),
                                      "adapter_error", 502),
    "upstream_refuses_key": (Reply(body=juso_json([], error_code="E0001", error_message="승인되지 않은 KEY 입니다.")),
                             "credential_missing", 503),
}
FAULTS = [*PROVIDER_FAULTS, *ADAPTER_FAULTS]


@pytest.fixture(scope="module")
def fake_llm() -> Any:
    with FakeOpenAIServer() as srv:
        yield srv


@pytest.fixture(scope="module")
def upstream() -> Any:
    with UpstreamServer() as srv:
        yield srv


def _request(fault: str, stream: bool) -> dict[str, Any]:
    if fault in PROVIDER_FAULTS:
        return {"query": PROVIDER_QUERY, "mode": "mock", "stream": stream,
                "generation": {"planner": "openai", "model": "fake-model", "timeout_s": 0.5}}
    return {"query": ADAPTER_QUERY, "mode": "live", "stream": stream}


@pytest.mark.parametrize("fault", FAULTS)
def test_failure_matrix_same_code_in_both_modes(fault: str, fake_llm: Any, upstream: Any, generated: Path,
                                                sqlite_url: str, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    if fault in PROVIDER_FAULTS:
        items, code, status = PROVIDER_FAULTS[fault]
        base = f"http://127.0.0.1:{closed_port()}/v1" if items is None else fake_llm.base_url
        monkeypatch.setenv("UMMAYA_LLM_BASE_URL", base)
        if items is not None:
            fake_llm.script.clear()
            fake_llm.push(*items, *scenario_copy(fault))
    else:
        reply, code, status = ADAPTER_FAULTS[fault]
        upstream.route(JUSO_PATH, reply)
        monkeypatch.setenv("JUSO_CONFM_KEY", "test-key-not-real")
        monkeypatch.setenv("UMMAYA_BASE_URL_JUSO_ADDRESS_SEARCH", upstream.url)
    with client(generated, sqlite_url, tmp_path) as c:
        # JSON
        r = c.post("/v1/answer", json=_request(fault, False))
        assert r.status_code == status, r.text
        err = r.json()["error"]
        assert set(err) == {"code", "message", "trace_id"} and err["code"] == code and err["message"]
        t = c.get(f"/v1/traces/{err['trace_id']}").json()
        assert t["state"] == "failed" and t["meta"]["error"]["code"] == code
        # SSE
        r = c.post("/v1/answer", json=_request(fault, True))
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
        events = parse_sse(r.text)
        kinds = [e["event"] for e in events]
        assert kinds[0] == "metadata" and kinds[-1] == "error"
        assert "completed" not in kinds and kinds.count("error") == 1
        sse_err = events[-1]["data"]["error"]
        assert sse_err["code"] == code and sse_err["trace_id"] == events[0]["data"]["trace_id"]
        assert sse_err["message"] == err["message"] or fault in PROVIDER_FAULTS  # provider text may name ports
        if fault == "provider_stream_cut_after_deltas":
            deltas = "".join(e["data"]["text"] for e in events if e["event"] == "delta")
            assert "동아대학교병원이 가장" not in deltas, "a cut answer was never checked: none of it is shown"
        t = c.get(f"/v1/traces/{sse_err['trace_id']}").json()
        assert t["state"] == "failed" and t["meta"]["error"]["code"] == code
        assert [s["state"] for s in t["states"]][-1] == "failed"
        assert c.get("/healthz").status_code == 200  # the server stays up


def scenario_copy(fault: str) -> list[Any]:
    """The same fault again, for the SSE request."""
    items = PROVIDER_FAULTS[fault][0] or []
    if fault == "provider_stream_cut_after_deltas":
        return located(scenario("stream_cut"))
    return list(items)


def test_provider_answer_is_framed_checked_and_the_same_in_json_and_sse(fake_llm: Any, generated: Path, sqlite_url: str,
                                                                        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The happy path over the same provider: the model's answer, claim-checked and framed, arrives
    as the same text in both modes. Its one sentence claims a Live hospital after only a Mock
    place lookup, so the check removes it and the evidence speaks instead (grounded: false)."""
    monkeypatch.setenv("UMMAYA_LLM_BASE_URL", fake_llm.base_url)
    fake_llm.script.clear()
    fake_llm.push(*located(scenario("text_answer")), *located(scenario("text_answer")))
    body = {"query": PROVIDER_QUERY, "mode": "mock", "generation": {"planner": "openai", "timeout_s": 5}}
    with client(generated, sqlite_url, tmp_path) as c:
        j = c.post("/v1/answer", json=body).json()
        events = parse_sse(c.post("/v1/answer", json={**body, "stream": True}).text)
    assert j["stop_reason"] == "completed"
    # summed over both model calls: the lookup (1024 + 38) and the answer (812 + 41)
    assert j["usage"]["prompt_tokens"] == 1024 + 812 and j["usage"]["completion_tokens"] == 38 + 41
    text = "".join(e["data"]["text"] for e in events if e["event"] == "delta")
    assert text == j["answer"] and text.startswith("[Mock · 모의]")
    assert "[Live · 국립중앙의료원]" not in text and j["grounded"] is False
    done = events[-1]
    assert done["event"] == "completed" and done["data"]["grounded"] is False
    assert done["data"]["removed_claims"] == j["removed_claims"] and "tier" in {r["kind"] for r in j["removed_claims"]}
    # the planner saw the reranked, budgeted candidates as tools
    sent = fake_llm.requests[-1].json
    assert 1 <= len(sent["tools"]) <= 5 + 2
