"""One trace per turn, in one schema for every surface.

The engine builds a turn's trace (``PendingTrace``) as the turn ends; nothing else builds one. What
a surface knows that the engine does not comes in typed: before the turn, ``TraceOrigin`` on the
request (the surface, the release alias, the caller's key fingerprint); around it, ``Served`` from
a server (its request states with wall-clock times, timings, the rerank report, the public error
code). So the CLI, ``/v1/answer`` JSON and SSE and MCP store rows with the same columns and the
same ``meta`` keys (``META_KEYS``; a value the surface does not have is None or empty, never a
missing key) — tests/serve/test_one_trace.py holds them to that.

Where the trace goes is a ``TraceSink``: straight into the store in the caller's thread (the CLI,
``ummaya mcp`` over stdio, the evals), or through the server's batched writer thread
(runtime/store/trace_writer.py), whose future resolves once the trace's batch has committed — the
server sends ``completed`` only after that, and an MCP call over HTTP returns only after that.
A trace never turns an answer into a failure: a trace that could not be stored is logged and the
turn says so (``trace_stored = False``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from .provenance import turn_personal_values
from .values import TraceOrigin, TurnResult

_log = logging.getLogger("ummaya.turn")

# Every stored trace's meta has exactly these keys, whatever surface wrote it.
META_KEYS = ("surface", "policy", "rerank", "error", "candidates", "usage", "language", "layer",
             "grounded", "removed_claims")


@dataclass
class Served:
    """What a server learned about one request around its turn: its own request states (with
    wall-clock times; they replace the engine's), its timings, the rerank report and the public
    error it answered with (code, message and, for a provider or upstream, the detail)."""

    states: list[dict[str, Any]] | None = None
    timings: dict[str, float] | None = None
    rerank: dict[str, Any] = field(default_factory=dict)
    error: dict[str, Any] | None = None
    events: list[dict[str, Any]] | None = None  # what it saw of a turn that never finished
    created_at: datetime | None = None


@dataclass
class PendingTrace:
    """A trace not yet stored: the turn's result (None for a request refused before its turn, or
    one whose turn never finished) and what the engine measured. ``record`` makes the row."""

    trace_id: str
    origin: TraceOrigin
    created_at: datetime
    query: str | None
    release_id: str | None = None
    session_id: str | None = None
    policy: str | None = None
    states: list[dict[str, Any]] = field(default_factory=list)  # [{"state", "at"}]
    timings: dict[str, float] = field(default_factory=dict)
    result: TurnResult | None = None
    catalog: Any = None  # for the personal values the stored row masks

    @classmethod
    def of_turn(cls, result: TurnResult, *, origin: TraceOrigin, query: str, policy: str | None,
                states: list[dict[str, Any]], seconds: float, catalog: Any) -> PendingTrace:
        """A finished turn: the engine's states (``t_ms`` since the turn began) on the wall clock."""
        from ..store.records import utcnow

        start = utcnow() - timedelta(seconds=seconds)
        return cls(result.trace_id, origin, start, query, release_id=result.release_id,
                   session_id=result.session_id, policy=policy,
                   states=[{"state": s["state"], "at": (start + timedelta(milliseconds=s["t_ms"])).isoformat()}
                           for s in states],
                   timings={"total_ms": round(seconds * 1000, 3)}, result=result, catalog=catalog)

    def record(self, served: Served | None = None) -> Any:
        """The stored row (``store.records.Trace``)."""
        from ..store.records import Trace

        served = served or Served()
        r = self.result
        states = served.states if served.states is not None else self.states
        timings = dict(served.timings if served.timings is not None else self.timings)
        timings.setdefault("total_ms", 0.0)
        if r is not None:
            events = [e.model_dump() for e in r.events]
        else:
            events = list(served.events or [])
        meta: dict[str, Any] = {
            "surface": self.origin.surface, "policy": self.policy, "rerank": served.rerank,
            "error": served.error if served.error is not None else (r.error if r is not None else None),
            "candidates": r.candidates if r is not None else [],
            "usage": r.usage if r is not None else {},
            "language": r.language if r is not None else None,
            "layer": r.layer if r is not None else None,
            "grounded": r.grounded if r is not None else None,
            "removed_claims": r.removed_claims if r is not None else [],
        }
        return Trace(
            trace_id=self.trace_id, created_at=served.created_at or self.created_at,
            release_id=self.release_id, release_alias=self.origin.release_alias,
            session_id=r.session_id if r is not None else self.session_id,
            stop_reason=r.stop_reason if r is not None else None,
            state=states[-1]["state"] if states else "received", states=states, timings=timings,
            request_text=self.query, answer_text=r.answer if r is not None else None,
            events=events, calls=list(r.calls) if r is not None else [], meta=meta,
            owner=self.origin.owner,
        )

    def personal(self) -> list[Any]:
        """The personal values the turn handled, which the stored row masks wherever they occur."""
        if self.result is None or self.catalog is None:
            return []
        return turn_personal_values(self.result, self.catalog)

    def job(self, retention: Any, served: Served | None = None) -> Callable[[], tuple[Any, Any, Any]]:
        """What the writer's thread runs: the row, the retention policy, the personal values (so
        building and redacting the row happen off the event loop too)."""
        return lambda: (self.record(served), retention, self.personal())


class TraceSink:
    """Where traces go: ``writer`` (the server's ``TraceWriter``) or, without one, straight into
    ``store`` in the caller's thread; nowhere without a store."""

    def __init__(self, store: Any, retention: Any = None, writer: Any = None):
        self.store, self.retention, self.writer = store, retention, writer

    def submit(self, pending: PendingTrace, served: Served | None = None) -> Future[Any]:
        """Hand the trace on; the future resolves to the stored row (None: nothing to store) once
        it is committed, or to the store's error."""
        job = pending.job(self.retention, served)
        if self.writer is not None:
            fut: Future[Any] = self.writer.submit(job)
            return fut
        fut = Future()
        if self.store is None:
            fut.set_result(None)
            return fut
        try:
            trace, policy, personal = job()
            self.store.put_trace(trace, policy, personal=personal)
        except Exception as exc:  # noqa: BLE001 - handed to the waiter, like the writer's
            fut.set_exception(exc)
        else:
            fut.set_result(trace)
        return fut

    async def commit(self, pending: PendingTrace, served: Served | None = None) -> bool:
        """Store the trace and wait until it is committed (the event loop runs on meanwhile when a
        writer stores it). False, logged, when it could not be stored; the turn's result says so."""
        try:
            await asyncio.wrap_future(self.submit(pending, served))
        except Exception as exc:  # noqa: BLE001 - a trace never turns an answer into a failure
            self._not_stored(pending, exc)
            return False
        return True

    def commit_nowait(self, pending: PendingTrace, served: Served | None = None) -> None:
        """Store the trace without waiting (a client that left: no answer is sent as completed)."""
        fut = self.submit(pending, served)

        def logged(f: Future[Any]) -> None:
            exc = f.exception()
            if exc is not None:
                self._not_stored(pending, exc)

        fut.add_done_callback(logged)

    @staticmethod
    def _not_stored(pending: PendingTrace, exc: BaseException) -> None:
        if pending.result is not None:
            pending.result.trace_stored = False
        code = getattr(exc, "code", None)
        if code:
            _log.warning("trace %s not stored (%s)", pending.trace_id, code)
        else:
            _log.error("could not store trace %s", pending.trace_id, exc_info=exc)
