"""Optional OpenTelemetry export of every turn as a span tree (the ``otel`` extra).

Off unless the standard ``OTEL_EXPORTER_OTLP_ENDPOINT`` or ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``
is set (and ``OTEL_SDK_DISABLED`` is not ``true``): then the engine hands each turn's event stream
to one subscriber here, which, when the turn stops, writes the spans from the events' own
timestamps and gives them to the SDK's batch processor (exported off the turn's path, OTLP/HTTP,
configured by the standard ``OTEL_EXPORTER_OTLP_*`` and ``OTEL_SERVICE_NAME`` variables). Without
those variables nothing here runs and ``opentelemetry`` is never imported; with them but without
the extra, one warning says so and turns run as before.

The tree follows the GenAI semantic conventions::

    invoke_agent ummaya                 gen_ai.operation.name=invoke_agent, gen_ai.agent.name
    ├── context / retrieve / validate / gate / project / answer   (ummaya.stage)
    ├── chat <planner>                  gen_ai.operation.name=chat, gen_ai.request.model
    └── dispatch
        └── execute_tool <adapter id>   gen_ai.operation.name=execute_tool, gen_ai.tool.name, …

Attributes carry what the stored trace carries, redacted the same way (wire/redact.py
``redact_value`` over every value, credentials stripped): never the citizen's or the answer's
text, never a raw personal value, never a key. The session id is a bearer token, so only a digest
of it goes out (``gen_ai.conversation.id``).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from collections.abc import Callable
from typing import Any

log = logging.getLogger("ummaya.telemetry")

ENDPOINT_VARS = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
_UNSET: Any = object()
_tracer: Any = _UNSET
_provider: Any = None
_worker: _Worker | None = None


def configured(env: dict[str, str] | os._Environ[str] | None = None) -> bool:
    env = os.environ if env is None else env
    if (env.get("OTEL_SDK_DISABLED") or "").strip().lower() == "true":
        return False
    return any((env.get(k) or "").strip() for k in ENDPOINT_VARS)


def _make_tracer() -> Any:
    if not configured():
        return None
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError:
        log.warning("OTEL_EXPORTER_OTLP_* is set but the otel extra is not installed "
                    "(pip install 'ummaya[otel]'): no spans are exported")
        return None
    global _provider
    provider = TracerProvider(resource=Resource.create({"service.name": os.environ.get("OTEL_SERVICE_NAME") or "ummaya"}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    _provider = provider
    return provider.get_tracer("ummaya")


def install(tracer_provider: Any | None) -> None:
    """Use this tracer provider (tests: the SDK's in-memory exporter); None switches export off;
    ``reset()`` goes back to reading the environment."""
    global _tracer, _provider
    _tracer = tracer_provider.get_tracer("ummaya") if tracer_provider is not None else None
    _provider = tracer_provider


def reset() -> None:
    global _tracer, _provider
    flush()
    if _provider is not None and hasattr(_provider, "shutdown"):
        _provider.shutdown()
    _tracer, _provider = _UNSET, None


def flush(timeout_ms: int = 10_000) -> bool:
    """Write the spans of every finished turn and export what the batch processor holds (a
    short-lived process, such as ``ummaya ask``, calls this before it exits; so does atexit)."""
    if _worker is not None:
        _worker.drain(timeout_ms / 1000)
    if _provider is not None and hasattr(_provider, "force_flush"):
        return bool(_provider.force_flush(timeout_ms))
    return True


class _Worker:
    """One daemon thread that turns finished turns' events into spans, off the turn's path: the
    turn only appends its events and, when it stops, hands them over."""

    def __init__(self) -> None:
        import queue
        import threading

        self.queue: queue.Queue[TurnSpans] = queue.Queue()
        self.thread = threading.Thread(target=self._loop, name="ummaya-otel", daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        while True:
            turn = self.queue.get()
            try:
                turn.export()
            except Exception:  # noqa: BLE001 - telemetry never fails a turn, nor the next one
                log.exception("could not export a turn's spans")
            finally:
                self.queue.task_done()

    def drain(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while self.queue.unfinished_tasks and time.monotonic() < deadline:
            time.sleep(0.002)


def _submit(turn: TurnSpans) -> None:
    global _worker
    if _worker is None:
        import atexit

        _worker = _Worker()
        atexit.register(flush)
    _worker.queue.put(turn)


def turn_observer() -> TurnSpans | None:
    """A subscriber for one turn's events, or None when export is off (the usual case)."""
    global _tracer
    if _tracer is _UNSET:
        _tracer = _make_tracer()
    return TurnSpans(_tracer) if _tracer is not None else None


# -- one turn -----------------------------------------------------------------------------------

STAGE_SPAN = {"context": "context", "retrieve": "retrieve", "validate": "validate", "gate": "gate",
              "dispatch": "dispatch", "project": "project", "answer": "answer"}


def _attr(value: Any) -> Any:
    """An attribute value OTel accepts: primitives as they are, lists of one primitive type, and
    anything else as compact JSON."""
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, str) for v in value):
        return list(value)
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


class TurnSpans:
    """Collects one turn's events; writes the span tree when the ``stop`` event arrives."""

    def __init__(self, tracer: Any):
        self.tracer = tracer
        self.t0_ns = time.time_ns()
        self.events: list[Any] = []
        self.result: Any = None

    def __call__(self, event: Any) -> None:
        self.events.append(event)
        if event.type == "stop":
            _submit(self)

    def wrap_sink(self, sink: Callable[[Any], None] | None) -> Callable[[Any], None]:
        def keep(result: Any) -> None:
            self.result = result
            if sink is not None:
                sink(result)
        return keep

    def _ns(self, t_ms: float) -> int:
        return self.t0_ns + int(t_ms * 1_000_000)

    def export(self) -> None:
        from opentelemetry import trace
        from opentelemetry.trace import Status, StatusCode

        from ummaya.wire.credentials import env_secrets, strip_credentials_value
        from ummaya.wire.redact import redact_value

        secrets = env_secrets()

        def clean(value: Any) -> Any:
            """What the stored trace does to a value: personal data redacted, credentials out."""
            return strip_credentials_value(redact_value(value, keys=True), secrets)

        events = self.events
        started = next((e for e in events if e.type == "turn_started"), None)
        stop = events[-1]
        sd = started.data if started is not None else {}
        planner = str(sd.get("planner") or "planner")
        root_attrs: dict[str, Any] = {
            "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "ummaya",
            "ummaya.trace_id": sd.get("trace_id"), "ummaya.release_id": sd.get("release_id"),
            "ummaya.mode": sd.get("mode"), "ummaya.language": sd.get("language"),
            "ummaya.policy": sd.get("policy"), "ummaya.planner": planner,
            "ummaya.stop_reason": stop.data.get("stop_reason"), "ummaya.layer": stop.data.get("layer"),
        }
        if sd.get("session_id"):
            root_attrs["gen_ai.conversation.id"] = hashlib.sha256(str(sd["session_id"]).encode()).hexdigest()[:32]
        r = self.result
        if r is not None:
            root_attrs["ummaya.grounded"] = bool(getattr(r, "grounded", True))
            for k, v in (getattr(r, "usage", None) or {}).items():
                if k in ("prompt_tokens", "completion_tokens"):
                    root_attrs["gen_ai.usage." + ("input_tokens" if k == "prompt_tokens" else "output_tokens")] = int(v)
        root_attrs = {k: (clean(v) if isinstance(v, str) else v) for k, v in root_attrs.items()}
        root = self.tracer.start_span("invoke_agent ummaya", start_time=self.t0_ns,
                                      attributes={k: _attr(v) for k, v in root_attrs.items() if v is not None})
        root_ctx = trace.set_span_in_context(root)
        # Consecutive events of one stage are one span, from where the previous stage ended.
        runs: list[tuple[str, list[Any]]] = []
        for e in events:
            if e.type in ("turn_started", "stop"):
                continue
            if runs and runs[-1][0] == e.stage:
                runs[-1][1].append(e)
            else:
                runs.append((e.stage, [e]))
        prev_end = 0.0
        for stage, run in runs:
            start, end = prev_end, max(run[-1].t_ms, prev_end)
            attrs: dict[str, Any] = {"ummaya.stage": stage}
            if stage == "plan":
                name = f"chat {planner}"
                attrs |= {"gen_ai.operation.name": "chat", "gen_ai.request.model": planner,
                          "gen_ai.provider.name": "ummaya.offline" if planner == "offline" else "openai"}
            else:
                name = STAGE_SPAN.get(stage, stage)
            for e in run:
                d = e.data  # only registry ids and enums are read raw; free text goes through clean()
                if e.type == "candidates":
                    attrs["ummaya.candidates"] = [c.get("adapter_id") for c in d.get("candidates") or []]
                elif e.type == "plan":
                    # a model may name anything as an adapter: its ids go through clean() too
                    attrs |= {"ummaya.plan.action": d.get("action"), "ummaya.plan.step": d.get("step"),
                              "ummaya.plan.calls": clean([str(c.get("adapter_id")) for c in d.get("calls") or []])}
                elif e.type == "validation":
                    attrs[f"ummaya.validation.{clean(str(d.get('adapter_id')))}"] = _attr(clean({"ok": d.get("ok"), "errors": d.get("errors")}))
                elif e.type == "permission":
                    attrs[f"ummaya.permission.{clean(str(d.get('adapter_id')))}"] = d.get("decision")
                elif e.type == "answer":
                    attrs["ummaya.grounded"] = bool(d.get("grounded", True))
            span = self.tracer.start_span(name, context=root_ctx, start_time=self._ns(start),
                                          attributes={k: _attr(v) for k, v in attrs.items() if v is not None})
            if stage == "dispatch":
                self._tool_spans(run, trace.set_span_in_context(span), clean, Status, StatusCode)
            span.end(end_time=self._ns(end))
            prev_end = end
        if stop.data.get("stop_reason") not in ("completed", "needs_input", "handoff_required", "consent_required"):
            root.set_status(Status(StatusCode.ERROR, str(stop.data.get("stop_reason"))))
        root.end(end_time=self._ns(max(stop.t_ms, prev_end)))

    def _tool_spans(self, run: list[Any], ctx: Any, clean: Any, Status: Any, StatusCode: Any) -> None:
        started = {e.data.get("call_id"): e for e in run if e.type == "call_started"}
        for e in run:
            if e.type != "call_finished":
                continue
            s = started.get(e.data.get("call_id"), e)
            a, b = s.data, e.data
            attrs = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": b.get("adapter_id"),
                     "gen_ai.tool.call.id": b.get("call_id"), "gen_ai.tool.type": "function",
                     "gen_ai.tool.call.arguments": clean(a.get("arguments")), "ummaya.primitive": a.get("primitive"),
                     "ummaya.tier": b.get("tier"), "ummaya.status": b.get("status"),
                     "ummaya.latency_ms": b.get("latency_ms"), "ummaya.upstream_url": clean(b.get("upstream_url")),
                     "ummaya.fixture": b.get("fixture")}
            err = clean(b.get("error"))
            if err:
                attrs["error.type"] = (err.get("code") if isinstance(err, dict) else str(err)) or "error"
            span = self.tracer.start_span(f"execute_tool {b.get('adapter_id')}", context=ctx,
                                          start_time=self._ns(s.t_ms),
                                          attributes={k: _attr(v) for k, v in attrs.items() if v is not None})
            if err:
                span.set_status(Status(StatusCode.ERROR, str(attrs["error.type"])))
            span.end(end_time=self._ns(max(e.t_ms, s.t_ms)))
