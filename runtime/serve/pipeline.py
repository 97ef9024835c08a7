"""One request through the pipeline: received → resolved → retrieving → reranking → generating →
completed | failed, as one sequence of API events that both response modes are built from.

``prepare`` does everything that can refuse a request before it starts (release resolution,
retrieval policy, query normalisation, consents, planner configuration) and raises ``ApiError``.
``answer_events`` then runs the turn and yields ``ApiEvent``s — ``metadata`` first, ``evidence``,
``tool_call``, ``tool_result`` and ``permission`` as the turn goes, ``delta``s, and exactly one
terminal ``completed`` or ``error``. The SSE response writes them as they come; the JSON response
folds the same events (answer = the concatenated deltas), so the two cannot disagree.

The turn runs on the release's ``TurnService`` (runtime/service.py, ``Service.turns``), the one
every surface uses, derived for this request rather than changed:

* the release's retriever is already reranked as every surface's is (runtime/retrieve/rerank.py,
  wrapped when the release is loaded); the request only observes it (``RankingSeen``: the
  retrieving/reranking/generating states, the rerank report and scores of its trace);
* the turn runs in its own task and its events are forwarded as they come (tool calls and
  evidence as they happen; the answer's deltas once the engine has checked and framed it);
* the turn's one trace is the engine's (runtime/turn/turn_trace.py), in the schema every surface
  shares; the request is told where it came from (``TraceOrigin``: surface, release alias, key
  fingerprint) and the service leaves the trace pending (``write_traces=False``) so that the
  server completes it with what only it knows (``RequestState.served``: its request states, the
  rerank report, the public error code) and stores it through the server's batched writer before
  ``completed`` is sent (``Service.write_trace``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from ummaya.runtime.request_context import RequestError, clean_request, detect_language
from ummaya.runtime.events import UPSTREAM_STOPS
from ummaya.runtime.turn import TraceOrigin, TurnRequest
from ummaya.runtime.turn.turn_trace import Served

from .api_errors import ApiError, error_body, provider_error

log = logging.getLogger("ummaya.serve")

PRIMITIVES = ("locate", "find", "check", "send")
TIERS = ("live", "mock", "handoff")
MAX_FILTER_VALUES = 16
MAX_FILTER_CHARS = 100
STAGE_ENDS = frozenset({"candidates", "call_finished"})  # where a streamed turn yields the loop


@dataclass
class ApiEvent:
    seq: int
    event: str
    data: dict[str, Any]


@dataclass
class RequestState:
    """What the serving layer knows about one request: its origin (``origin``) and what it adds to
    the request's one trace (``served``, runtime/turn/turn_trace.py)."""

    endpoint: str  # "answer" | "retrieve"
    trace_id: str
    received_wall: datetime
    stream: bool = False  # the client asked for SSE
    t0: float = field(default_factory=time.perf_counter)
    marks: list[tuple[str, float]] = field(default_factory=list)
    release_id: str | None = None
    release_alias: str | None = None
    query: str | None = None
    session_id: str | None = None
    owner: str | None = None  # the caller's API key fingerprint (auth.py), None with keys off
    trace_stored: bool = True  # False when the store could not keep the trace (never claimed)
    session_issued: bool = True  # False when the store could not issue the session (none to continue)
    rerank: dict[str, Any] = field(default_factory=dict)
    scores: dict[str, float] = field(default_factory=dict)
    error: dict[str, Any] | None = None

    def mark(self, state: str) -> None:
        # States only move forward: a second retrieval in one turn (the dialogue's reading of an
        # elliptical request) does not enter "retrieving" again.
        if all(s != state for s, _ in self.marks):
            self.marks.append((state, time.perf_counter()))

    @property
    def surface(self) -> Any:
        # The citizen page (runtime/serve/page.py) is an SSE client of /v1/answer that sends
        # nothing telling it apart from any other, so its turns are "http_sse" too.
        if self.endpoint == "retrieve":
            return "http_retrieve"
        return "http_sse" if self.stream else "http_json"

    def origin(self) -> TraceOrigin:
        return TraceOrigin(self.surface, self.release_alias, self.owner)

    def served(self, events: list[Any] | None = None) -> Served:
        """What this server adds to the request's trace (runtime/turn/turn_trace.py)."""
        return Served(states=self.states(), timings=self.timings(), rerank=self.rerank, error=self.error,
                      events=[e.model_dump() for e in events or []], created_at=self.received_wall)

    def ms_since_start(self, t: float) -> float:
        return round((t - self.t0) * 1000, 3)

    def states(self) -> list[dict[str, Any]]:
        return [{"state": s, "at": (self.received_wall + timedelta(seconds=t - self.t0)).isoformat()}
                for s, t in self.marks]

    def timings(self) -> dict[str, float]:
        out: dict[str, float] = {}
        at = {s: t for s, t in self.marks}
        pairs = (("resolve_ms", "received", "resolved"), ("retrieve_ms", "retrieving", "reranking"),
                 ("rerank_ms", "reranking", None), ("generate_ms", "generating", None))
        order = [s for s, _ in self.marks]
        for name, a, b in pairs:
            if a not in at:
                continue
            if b is None:
                i = order.index(a)
                nxt = self.marks[i + 1][1] if i + 1 < len(self.marks) else time.perf_counter()
                out[name] = round((nxt - at[a]) * 1000, 3)
            elif b in at:
                out[name] = round((at[b] - at[a]) * 1000, 3)
        end = self.marks[-1][1] if self.marks else time.perf_counter()
        out["total_ms"] = round((end - self.t0) * 1000, 3)
        return out


@dataclass
class Prepared:
    state: RequestState
    loaded: Any  # releases.LoadedRelease
    query: str
    top_k: int
    filters: dict[str, Any] | None
    planner: Any = None
    turn: TurnRequest | None = None


# -- the engine, wrapped ---------------------------------------------------------------------------

class RankingSeen:
    """What a request's states and trace see of the release's ranking (runtime/retrieve/rerank.py
    ``RerankingRetriever``): the retrieving and reranking states, the rerank report and the
    reranked scores evidence is ordered by. It only observes: the ranking is every surface's."""

    def __init__(self, state: RequestState, *, generating: bool = True):
        self.state, self.generating = state, generating

    def stage(self, name: str) -> None:
        self.state.mark(name)

    def reranked(self, report: Any) -> None:
        self.state.scores = {r.adapter_id: r.score for r in report.ranked}
        self.state.rerank = report.as_dict()
        if report.kept and self.generating:
            self.state.mark("generating")


# -- preparing a request ---------------------------------------------------------------------------

def check_filters(filters: dict[str, Any] | None, allowed: list[str]) -> dict[str, Any] | None:
    if not filters:
        return None
    out: dict[str, Any] = {}
    for key, value in filters.items():
        if key not in allowed:
            raise ApiError("unknown_filter", f"unknown filter '{key}' (this release allows: "
                           f"{', '.join(allowed) or 'none'})")
        if value is None:
            continue
        values = [value] if isinstance(value, str) else value
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            raise ApiError("invalid_filter", f"filter '{key}' must be a string or a list of strings")
        if not values or len(values) > MAX_FILTER_VALUES:
            raise ApiError("invalid_filter", f"filter '{key}' needs 1 to {MAX_FILTER_VALUES} values")
        for v in values:
            if not v.strip() or len(v) > MAX_FILTER_CHARS:
                raise ApiError("invalid_filter", f"filter '{key}' has an empty or over-long value")
        known = {"primitive": PRIMITIVES, "tier": TIERS}.get(key)
        if known is not None:
            bad = [v for v in values if v not in known]
            if bad:
                raise ApiError("invalid_filter", f"filter '{key}': {', '.join(map(repr, bad))} is "
                               f"not one of {', '.join(known)}")
        out[key] = value
    return out or None


def resolve(service: Any, state: RequestState, alias: str) -> Any:
    """Alias or id → stored release; no fallback."""
    release = service.store.resolve(alias)
    if release is None:
        raise ApiError("release_not_found", f"no release or alias {alias!r} "
                       f"(GET /v1/releases lists them)")
    state.release_id, state.release_alias = release.release_id, release.alias
    return release


async def prepare(service: Any, req: Any, state: RequestState, *, answer: bool) -> Prepared:
    if service.traces.full():  # back-pressure: refuse new work rather than queue without bound
        raise ApiError("trace_backlog", f"{service.traces.capacity} traces are waiting to be stored")
    if req.project_id != service.settings.project_id or req.knowledge_base_id != service.settings.knowledge_base_id:
        raise ApiError("knowledge_base_not_found",
                       f"this server serves project {service.settings.project_id!r}, knowledge "
                       f"base {service.settings.knowledge_base_id!r}")
    release = resolve(service, state, req.release_alias)
    loaded = await service.releases.aload(release)
    state.mark("resolved")
    policy = loaded.policy
    raw_filters = req.filters.model_dump(exclude_none=True) if req.filters is not None else None
    if req.filters is not None and req.filters.model_extra:
        raw_filters = {**(raw_filters or {}), **req.filters.model_extra}
    filters = check_filters(raw_filters, policy.allowed_filters)
    top_k = min(req.top_k or policy.default_top_k, policy.max_top_k)
    try:
        query = clean_request(req.query)
    except RequestError as exc:
        raise ApiError(exc.code, exc.message) from None
    state.query = query
    prepared = Prepared(state, loaded, query, top_k, filters)
    if req.session_id is not None:
        await check_session(service, req.session_id, state.owner)
    if answer:
        unknown = [a for a in req.consents if a not in loaded.catalog.adapters]
        if unknown:
            raise ApiError("unknown_adapter", f"consent for unknown adapter(s): {', '.join(unknown)}")
        prepared.planner = service.planner_for(req.generation)
        mode = "mock" if service.settings.mode_ceiling == "mock" else req.mode
        # The first turn gets a new server-issued id, only once nothing else can refuse it. A store
        # that cannot issue one (full, busy, down) does not stop a lookup: the turn runs in a
        # session of its own, and the answer offers none to continue (session_id null).
        session_id = req.session_id
        if session_id is None:
            from ummaya.runtime.store.records import StoreFault, new_id

            try:
                session_id = await asyncio.to_thread(service.store.issue_session, state.owner)
            except StoreFault as exc:
                log.error("no session issued (%s): the turn runs without one", exc.code)
                state.session_issued = False
                session_id = f"unissued-{new_id()}"
        state.session_id = session_id
        prepared.turn = TurnRequest(query, session_id=session_id, mode=mode,
                                    consents=tuple(req.consents), top_k=top_k, filters=filters,
                                    trace_id=state.trace_id, policy=req.policy,
                                    context_budget_tokens=req.generation.context_tokens,
                                    origin=state.origin())
    return prepared


async def check_session(service: Any, session_id: str, owner: str | None) -> None:
    """Only an id this server issued (to the same API key) and used within UMMAYA_SESSION_TTL_MIN
    (60) continues a session: a client-chosen or guessed id is refused, never adopted — it would
    share another citizen's consents and place."""
    from ummaya.runtime.dialogue.state import session_ttl

    if not await asyncio.to_thread(service.store.issued_session, session_id, owner,
                                   idle=session_ttl()):
        raise ApiError("session_not_found", "no such session, or it expired (session ids are "
                       "issued by the server on the first turn: send no session_id to start one)")


# -- retrieve --------------------------------------------------------------------------------------

def retrieve_result(service: Any, p: Prepared, language: str) -> dict[str, Any]:
    retriever = p.loaded.retriever.observing(RankingSeen(p.state, generating=False))
    kept = retriever.search(p.query, top_k=p.top_k, filters=p.filters)
    cands = []
    ranked = {r["adapter_id"]: r for r in p.state.rerank.get("ranked", [])}
    for i, c in enumerate(kept):
        m = p.loaded.catalog.get(c.adapter_id)
        from ummaya.runtime.evidence import citation_of

        r = ranked.get(c.adapter_id, {})
        cands.append({
            "rank": i + 1, "score": c.score,
            "content": {"title": getattr(m.title, language), "summary": getattr(m.summary, language)},
            "citation": citation_of(m),
            "metadata": {"adapter_id": m.id, "primitive": m.primitive, "tier": m.tier,
                         "domain": c.domain, "agency": c.agency, "text_score": c.text_score,
                         "coverage": c.coverage, "signals": r.get("signals", {}),
                         "requires": sorted(m.requires), "provides": sorted(m.provides)},
        })
    p.state.mark("completed")
    return {"trace_id": p.state.trace_id,
            "release": {"id": p.state.release_id, "alias": p.state.release_alias},
            "candidates": cands, "dropped": p.state.rerank.get("dropped", []),
            "policy": p.loaded.policy.model_dump(mode="json")}


# -- answer ----------------------------------------------------------------------------------------

async def answer_events(service: Any, p: Prepared, *, live: bool = True) -> AsyncIterator[ApiEvent | None]:
    """The turn as API events; never raises (failures end in an ``error`` event). ``live``
    (streams): a ``None`` between events means "nothing more is ready now — send what you have";
    events that become ready together go out in one write, and every event goes out as soon as the
    turn waits on anything (an upstream, the model) or ends."""
    state = p.state
    turn = p.turn
    if turn is None:  # prepare(answer=True) always sets it; a retrieve request has none
        raise ValueError("answer_events needs a request prepared with answer=True")
    queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
    results: list[Any] = []
    seen_events: list[Any] = []
    turns = service.turns(p.loaded).using(retriever=p.loaded.retriever.observing(RankingSeen(state)),
                                          planner=p.planner, write_traces=False)

    async def drive() -> None:
        try:
            async for e in turns.stream(turn, sink=results.append):
                queue.put_nowait(("engine", e))
                if live and e.type in STAGE_ENDS:
                    # A turn on mock dispatch never waits on I/O; at each stage boundary let the
                    # loop write what is ready and start other requests (their first event).
                    await asyncio.sleep(0)
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # noqa: BLE001 - reported as internal_error, logged
            queue.put_nowait(("exc", exc))
        finally:
            queue.put_nowait(("end", None))

    seq = 0

    def ev(name: str, data: dict[str, Any]) -> ApiEvent:
        nonlocal seq
        e = ApiEvent(seq, name, data)
        seq += 1
        return e

    call_ids: dict[str, str] = {}
    facts = p.loaded.facts
    held: list[dict[str, Any]] = []  # evidence waits for its rank until the answer starts
    n_evidence = 0

    def ranked_evidence() -> list[ApiEvent]:
        """The held evidence, ranked by the policy's rule (rerank.evidence_order)."""
        nonlocal n_evidence
        out = []
        for item in evidence_order(held):
            n_evidence += 1
            out.append(ev("evidence", {"rank": n_evidence, **item}))
        held.clear()
        return out

    provider_err: dict[str, str] | None = None
    crash: BaseException | None = None
    finished = False
    task: asyncio.Task[None] | None = None
    try:
        # metadata goes out before the turn starts: the first event never waits for retrieval
        yield ev("metadata", {"trace_id": state.trace_id,
                              "release": {"id": state.release_id, "alias": state.release_alias},
                              "session_id": turn.session_id,
                              "language": detect_language(p.query), "planner": p.planner.name,
                              "mode": turn.mode})
        task = asyncio.create_task(drive())
        while True:
            if live and queue.empty():
                yield None  # FLUSH: the writer sends what it holds before we wait for more
            kind, item = await queue.get()
            if kind == "end":
                break
            if kind == "exc":
                crash = item
                continue
            e = item
            seen_events.append(e)
            t, d = e.type, e.data
            if t == "turn_started":
                state.session_id = d.get("session_id")
            elif t == "delta":
                for e in ranked_evidence():
                    yield e
                # ``part`` (and its ``evidence_id``) lets a client lay the answer out: evidence text
                # in its card, the located place on one line, the boundary below (runtime/compose.py Part).
                yield ev("delta", {"text": d["text"], **{k: d[k] for k in ("part", "evidence_id") if k in d}})
            elif t == "permission":
                perm = {"adapter_id": d["adapter_id"], "gate": d["gate"], "decision": d["decision"]}
                if d["decision"] == "consent_required":  # what a client must show to ask for it
                    perm["notice"] = consent_notice(p.loaded.catalog, d["adapter_id"])
                yield ev("permission", perm)
            elif t == "call_started":
                call_ids[d["adapter_id"]] = d["call_id"]
                yield ev("tool_call", {"call_id": d["call_id"], "adapter_id": d["adapter_id"],
                                       "primitive": d["primitive"], "tier": d["tier"],
                                       "arguments": d["arguments"]})
            elif t == "call_finished":
                yield ev("tool_result", {k: d.get(k) for k in ("call_id", "adapter_id", "tier", "status",
                                                                "latency_ms", "fixture", "error")})
            elif t == "evidence":
                aid = d["adapter_id"]
                held.append({
                    "score": state.scores.get(aid), "content": d.get("summary") or {},
                    "citation": d.get("citation") or {},
                    "metadata": {"evidence_id": d["evidence_id"], "call_id": call_ids.get(aid),
                                 "adapter_id": aid, "primitive": facts[aid].primitive if aid in facts else None, "tier": d["tier"],
                                 "status": d["status"], "freshness": d.get("freshness")}})
            elif t == "error":
                provider_err = {"code": d.get("code", ""), "message": d.get("message", "")}
        for e in ranked_evidence():
            yield e
        result = results[0] if results else None
        if crash is not None or result is None:
            if crash is not None:
                log.error("turn crashed", exc_info=crash)
            state.error = {"code": "internal_error", "message": "the turn failed unexpectedly"}
        elif result.error or provider_err:
            err = result.error or provider_err or {}
            code, message = provider_error(err.get("code", ""), err.get("message", ""))
            state.error = {"code": code, "message": message, "provider_code": err.get("code")}
        elif result.stop_reason in UPSTREAM_STOPS:
            detail = next((c["error"] for c in reversed(result.calls) if c.get("error")), None)
            state.error = {"code": result.stop_reason,
                           "message": result.answer.strip() or result.stop_reason,
                           "upstream": detail}
        state.mark("failed" if state.error else "completed")
        await service.write_trace(state, result, seen_events)
        finished = True
        if state.error or result is None:  # no result always set state.error above
            err = state.error or {"code": "internal_error", "message": "the turn failed unexpectedly"}
            yield ev("error", error_body(err["code"], err["message"],
                                         state.trace_id if state.trace_stored else None))
        else:
            done = {"trace_id": state.trace_id if state.trace_stored else None,
                    "stop_reason": result.stop_reason, "layer": result.layer, "grounded": result.grounded,
                    "removed_claims": result.removed_claims, "usage": usage_of(result),
                    "calls": result.calls, "session_id": result.session_id if state.session_issued else None,
                    "language": result.language}
            if not state.trace_stored:  # said plainly, and no id is offered for a trace that is not there
                done["trace_stored"] = False
            yield ev("completed", done)
    finally:
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
        terminal = bool(state.marks) and state.marks[-1][0] in ("completed", "failed")
        if not finished and not terminal:  # the client went away (or we were cancelled) mid-turn
            state.error = state.error or {"code": "client_disconnected",
                                          "message": "the client disconnected before the answer completed"}
            state.mark("failed")
            service.write_trace_sync(state, results[0] if results else None, seen_events)
        # (terminal but not finished: the trace write was already under way when the client left)


def evidence_order(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``score_desc_adapter_id_asc``: the reranked score of the adapter that produced the evidence,
    descending; ties by adapter id, then arrival order (a stable sort); evidence of an adapter
    outside the reranked pool (a widened provider: no score) last. Evidence is ranked once all the
    turn's evidence is in — when the answer starts or the turn ends — so a rank, once sent, never
    changes; evidence arriving after the answer started (none does today) follows in this order."""
    return sorted(items, key=lambda e: (e["score"] is None, -(e["score"] or 0.0), e["metadata"]["adapter_id"]))


def consent_notice(catalog: Any, adapter_id: str) -> dict[str, Any] | None:
    """The four items shown before consent (purpose, data items, retention, the right to refuse),
    in both languages, with the adapter's title: a client builds its consent dialog from this."""
    m = catalog.adapters.get(adapter_id)
    c = m.permission.consent if m is not None else None
    if c is None:
        return None
    return {"title": m.title.model_dump(), "agency": {"ko": m.agency.name_ko, "en": m.agency.name_en},
            "purpose": c.purpose.model_dump(), "data_items": list(c.data_items),
            "retention": c.retention.model_dump(), "refusal": c.refusal.model_dump()}


def usage_of(result: Any) -> dict[str, int]:
    u = {k: int(v) for k, v in (result.usage or {}).items()}
    for k in ("prompt_tokens", "completion_tokens", "total_tokens"):
        u.setdefault(k, 0)
    return u


def fold(events: list[ApiEvent]) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """The JSON answer from the very events a stream sends: (answer, None) or (None, error)."""
    meta = next(e.data for e in events if e.event == "metadata")
    last = events[-1]
    if last.event == "error":
        return None, last.data
    done = last.data
    return {
        "trace_id": done.get("trace_id", meta["trace_id"]), "release": meta["release"],
        "evidence": [e.data for e in events if e.event == "evidence"],
        "calls": done["calls"],
        "answer": "".join(e.data["text"] for e in events if e.event == "delta"),
        "stop_reason": done["stop_reason"], "grounded": done["grounded"],
        "removed_claims": done["removed_claims"], "usage": done["usage"],
        "session_id": done["session_id"], "language": done["language"],
        **({"trace_stored": False} if done.get("trace_stored") is False else {}),
    }, None


def language_of(query: str) -> str:
    return detect_language(query)
