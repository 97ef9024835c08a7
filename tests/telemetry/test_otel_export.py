"""Issue 22 item 5: each turn as an OpenTelemetry span tree (GenAI semantic conventions), redacted
like the stored trace; off — and never imported — without the OTEL_EXPORTER_OTLP_* variables."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
PHONE, RRN = "010-9876-5432", "900101-1234567"

pytest.importorskip("opentelemetry.sdk", reason="the otel extra is not installed (pip install 'ummaya[otel]')")

from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402

from ummaya.runtime import telemetry  # noqa: E402


@pytest.fixture(scope="module")
def engine() -> Any:
    from ummaya.runtime.assemble import build_engine
    from ummaya.runtime.catalog import Catalog
    from ummaya.runtime.dispatch import Dispatcher

    catalog = Catalog.load(REPO / "generated")
    return build_engine(REPO / "generated", catalog=catalog, dispatcher=Dispatcher(catalog, env={}), store=None)


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    telemetry.install(provider)
    try:
        yield exporter
    finally:
        telemetry.reset()


def ask(engine: Any, query: str, **kw: Any) -> Any:
    from ummaya.runtime.turn import TurnRequest

    result = asyncio.run(engine.ask(TurnRequest(query, mode="mock", **kw)))
    assert telemetry.flush(10_000)  # spans are written off the turn's path, by one worker thread
    return result


def all_attribute_text(finished: Any) -> str:
    return json.dumps([{k: v if isinstance(v, (str, int, float, bool)) else list(v)
                        for k, v in (s.attributes or {}).items()} for s in finished], ensure_ascii=False)


def test_a_turn_is_a_span_tree_with_genai_attributes(engine: Any, spans: InMemorySpanExporter) -> None:
    r = ask(engine, "동아대 승학캠퍼스 근처 응급실 알려줘", session_id="s-otel-secret-token")
    finished = spans.get_finished_spans()
    by_name = {s.name: s for s in finished}
    root = by_name["invoke_agent ummaya"]
    assert root.parent is None
    assert root.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert root.attributes["ummaya.stop_reason"] == r.stop_reason
    assert root.attributes["ummaya.trace_id"] == r.trace_id
    assert "s-otel-secret-token" not in all_attribute_text(finished)  # a bearer token: digest only
    assert len(root.attributes["gen_ai.conversation.id"]) == 32
    children = [s for s in finished if s.parent is not None and s.parent.span_id == root.context.span_id]
    names = [s.name for s in sorted(children, key=lambda s: s.start_time)]
    for stage in ("retrieve", "chat offline", "validate", "gate", "dispatch", "answer"):
        assert stage in names, names
    tools = [s for s in finished if s.name.startswith("execute_tool ")]
    assert len(tools) == len([c for c in r.calls if c["status"] != "refused"])
    dispatch_ids = {s.context.span_id for s in children if s.name == "dispatch"}
    for t in tools:
        assert t.parent.span_id in dispatch_ids
        assert t.attributes["gen_ai.operation.name"] == "execute_tool"
        assert t.attributes["gen_ai.tool.name"] in {c["adapter_id"] for c in r.calls}
        assert t.attributes["ummaya.tier"] == "mock"
    for s in finished:  # every span lies inside its parent's time
        assert s.end_time >= s.start_time
        if s.parent is not None:
            parent = next(p for p in finished if p.context.span_id == s.parent.span_id)
            assert parent.start_time <= s.start_time and s.end_time <= parent.end_time
    assert len({s.context.trace_id for s in finished}) == 1


def test_no_personal_value_or_credential_leaves_in_a_span(engine: Any, spans: InMemorySpanExporter,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DATA_GO_KR_SERVICE_KEY", "sk-live-abcdef0123456789")
    ask(engine, f"제 번호 {PHONE} 주민번호 {RRN} 인데 부산역 근처 약국 알려줘")
    text = all_attribute_text(spans.get_finished_spans())
    assert spans.get_finished_spans()
    for raw in (PHONE, RRN, "01098765432", "9001011234567", "sk-live-abcdef0123456789", "약국 알려줘"):
        assert raw not in text


def test_without_the_variables_nothing_is_exported_or_imported() -> None:
    code = ("import sys, asyncio; from ummaya.runtime.assemble import build_engine;"
            "from ummaya.runtime.turn import TurnRequest;"
            f"e = build_engine({str(REPO / 'generated')!r}, store=None);"
            "asyncio.run(e.ask(TurnRequest('부산역 근처 약국', mode='mock')));"
            "print(any(m.startswith('opentelemetry') for m in sys.modules))")
    env = {k: v for k, v in __import__("os").environ.items() if not k.startswith("OTEL_")}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


class _Receiver(BaseHTTPRequestHandler):
    bodies: list[tuple[str, str, bytes]] = []

    def do_POST(self) -> None:  # noqa: N802
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        type(self).bodies.append((self.path, self.headers.get("Content-Type", ""), body))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


def test_exported_over_otlp_http_to_a_local_receiver(engine: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    server = ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
    _Receiver.bodies = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{server.server_address[1]}")
        monkeypatch.setenv("OTEL_SERVICE_NAME", "ummaya-test")
        telemetry.reset()
        r = ask(engine, "부산역 근처 약국")
        assert telemetry.flush(10_000)
    finally:
        telemetry.reset()
        server.shutdown()
        server.server_close()
    posts = [b for b in _Receiver.bodies if b[0] == "/v1/traces"]
    assert posts and all(ct == "application/x-protobuf" for _, ct, _ in posts)
    names, service, trace_ids = [], set(), set()
    for _, _, body in posts:
        req = ExportTraceServiceRequest.FromString(body)
        for rs in req.resource_spans:
            service |= {a.value.string_value for a in rs.resource.attributes if a.key == "service.name"}
            for ss in rs.scope_spans:
                for s in ss.spans:
                    names.append(s.name)
                    for a in s.attributes:
                        if a.key == "ummaya.trace_id":
                            trace_ids.add(a.value.string_value)
    assert service == {"ummaya-test"}
    assert "invoke_agent ummaya" in names and any(n.startswith("execute_tool ") for n in names)
    assert trace_ids == {r.trace_id}


def test_a_broken_exporter_never_fails_a_turn(engine: Any, caplog: pytest.LogCaptureFixture) -> None:
    class Boom:
        def start_span(self, *a: Any, **k: Any) -> Any:
            raise RuntimeError("collector down")

    class Provider:
        def get_tracer(self, name: str) -> Any:
            return Boom()

    telemetry.install(Provider())
    try:
        r = ask(engine, "부산역 근처 약국")
        r2 = ask(engine, "내일 부산 날씨 어때?")
    finally:
        telemetry.reset()
    assert r.stop_reason and r2.stop_reason
    assert "could not export" in caplog.text
