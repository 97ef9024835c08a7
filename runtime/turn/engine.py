"""One turn: context → retrieve → plan → validate → checks → gate → dispatch → project → answer.

``TurnEngine.run`` only sequences the stage functions (one module each in this package, typed
values between them, see values.py) and hands their events on as they come: the loop runs until
the planner answers or asks, or a stage stops the turn. Every stage speaks through one ``Event``
stream (printed by the CLI, sent by SSE, kept by the trace store).
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any, Literal

from ummaya.model.manifest import Manifest

from .. import compose as ans
from ..catalog import Catalog
from ..request_context import Session, clean_request
from ..events import STOP_LAYER, UPSTREAM_STOPS, Event
from ..permission import ConsentBook, MemoryConsentBook
from ..plan.protocol import Planner, ProviderError, ToolCall
from ..telemetry import turn_observer
from .answer import answer_stop, ask_stop, asks_for_personal, finish, held_evidence_stop
from .chained import ChainedProvenance
from .checks import run_checks
from .context import build_context
from .dispatch import dispatch
from .emergency import emergency_opening
from .gate import gate
from .log import TurnLog
from .plan import plan_step
from .project import compact, project
from .provenance import ArgumentProvenance
from .turn_trace import PendingTrace, TraceSink
from .retrieve import retrieve, widen
from .scope import check_scope, narrow
from .validate import repair_budget_left, repair_or_stop, show_refused, validate
from .values import (
    ArgumentCheck,
    CallEnd,
    MCP_TOOL,
    CheckInput,
    Mode,
    Refusal,
    Stop,
    TraceOrigin,
    TurnContext,
    TurnRequest,
    TurnResult,
    TurnState,
)

_log = logging.getLogger("ummaya.turn")

DEFAULT_DEADLINE_S = 120.0
ENV_DEADLINE = "UMMAYA_TURN_DEADLINE_S"


def default_deadline_s(planner: Any = None) -> float:
    """UMMAYA_TURN_DEADLINE_S, else what the planner's server needs (a CPU model's profile asks
    for minutes), else 120 s."""
    try:
        if os.environ.get(ENV_DEADLINE):
            return float(os.environ[ENV_DEADLINE])
    except ValueError:
        pass
    wanted = getattr(planner, "turn_deadline_s", None)
    return float(wanted) if isinstance(wanted, (int, float)) and wanted > 0 else DEFAULT_DEADLINE_S


class TurnEngine:
    def __init__(
        self,
        catalog: Catalog,
        retriever: Any,
        dispatcher: Any,
        planner: Planner,
        *,
        store: Any = None,
        retention: Any = None,
        widen_providers: int = 2,
        write_traces: bool = True,
        trace_writer: Any = None,
        release_alias: str | None = None,
        argument_checks: Sequence[ArgumentCheck] | None = None,
        deadline_s: float | None = None,
        clock: Callable[[], Any] | None = None,
    ):
        """Every turn's trace is built here (turn_trace.py) and stored before its ``stop`` event
        is yielded: through ``trace_writer`` (the server's batched writer) when given, else straight
        into ``store``. ``write_traces=False``: the engine leaves the trace pending on the result
        (``TurnResult.trace``) for a caller that completes it with what it knows (the server's
        request states and public error code) and stores it through the same sink (``traces``).
        ``release_alias``: the alias this engine's release was resolved through, for its traces.
        ``argument_checks``: run between validate and gate, in order, after argument provenance
        and chained-argument provenance, which always run (checks.py, provenance.py, chained.py)."""
        self.catalog = catalog
        self.retriever = retriever
        self.dispatcher = dispatcher
        self.planner = planner
        self.store = store
        self.retention = retention
        self.consents: ConsentBook = store if store is not None else MemoryConsentBook()
        self.widen_providers = widen_providers
        self.write_traces = write_traces
        self.traces = TraceSink(store, retention, trace_writer)
        self.release_alias = release_alias
        self.argument_checks: list[ArgumentCheck] = [ArgumentProvenance(), ChainedProvenance(),
                                                     *(argument_checks or ())]
        self.deadline_s = deadline_s
        # The turn's "now" (KST); None = the wall clock. Scenarios and evals pin it.
        self.clock = clock
        self._sessions: dict[str, Session] = {}
        # Enforced for every planner, before any other argument check: personal data goes only into
        # declared personal fields of a consented protected adapter (runtime/guard/personal.py).
        from .checks import PersonalDataGuard

        self.personal_guard = PersonalDataGuard()

    # -- sessions: only explicitly carried slots survive a turn
    def load_session(self, session_id: str) -> Session:
        if self.store is not None:
            from ..store.records import StoreFault

            try:
                stored = self.store.get_session(session_id)
            except StoreFault as exc:  # a lookup still answers; the conversation starts afresh
                _log.warning("session %s not loaded (%s): the turn runs without it", "…", exc.code)
                return Session(session_id)
            if stored is not None:
                return Session(session_id, dict(stored.slots), stored.turns, dialogue=stored.dialogue)
            return Session(session_id)
        return self._sessions.setdefault(session_id, Session(session_id))

    def save_session(self, session: Session) -> None:
        session.turns += 1
        if self.store is not None:
            from ..store.records import Session as StoredSession

            expires = None
            if session.dialogue and session.dialogue.get("expires_at"):
                from ..store.records import parse_iso

                expires = parse_iso(session.dialogue["expires_at"])
            from ..store.records import StoreFault

            try:
                self.store.put_session(StoredSession(session.session_id, session.slots, session.turns,
                                                     dialogue=session.dialogue, dialogue_expires_at=expires))
            except StoreFault as exc:  # the answer stands; only the conversation's memory is lost
                _log.warning("session not saved (%s)", exc.code)
        else:
            self._sessions[session.session_id] = session

    def grant(self, session_id: str, m: Manifest) -> str:
        c = m.permission.consent
        if self.store is None or c is None:
            return self.consents.grant_consent(session_id, m)
        from ..store.records import LedgerBroken, StoreFault

        try:
            rec = self.store.grant_consent(
                session_id, m.id, purpose=c.purpose.ko, data_items=list(c.data_items),
                retention=c.retention.ko, refusal=c.refusal.ko,
            )
        except (LedgerBroken, StoreFault):  # nothing recorded; the gate then denies
            return ""
        return rec.consent_id

    async def ask(self, req: TurnRequest) -> TurnResult:
        results: list[TurnResult] = []
        async for _event in self.run(req, sink=results.append):
            pass
        return results[0]

    def context(self, req: TurnRequest, query: str, trace_id: str) -> TurnContext:
        """Stage 1 with this engine's sessions and deadline."""
        seconds = req.deadline_s if req.deadline_s is not None else (self.deadline_s or default_deadline_s(self.planner))
        session = self.load_session(req.session_id or f"s-{trace_id.lower()}")
        ctx = build_context(req, query, session, trace_id, clock=self.clock,
                            deadline=asyncio.get_running_loop().time() + seconds)
        ctx.catalog = self.catalog
        if req.session_id:
            from ..dialogue.given import session_key

            ctx.given_key = session_key(session.session_id, self.store)
        return ctx

    async def call_adapter(self, m: Manifest, arguments: dict[str, Any], *, session_id: str, mode: Mode,
                           request: str, citizen_texts: list[str], planner: str,
                           render: Callable[[CallEnd], str], language: Literal["ko", "en"] = "ko",
                           origin: TraceOrigin = MCP_TOOL) -> tuple[CallEnd, TurnResult]:
        """One call proposed by someone other than the planner (an MCP host), through the turn's
        own stages: validate → argument checks (the personal-data guard first) → gate → dispatch →
        project, logged as a turn and stored by this engine's trace writer. ``citizen_texts`` are
        what argument provenance reads as the citizen's words; ``render`` writes the text the
        caller shows for how the call ended, which the trace keeps as the answer."""
        from ..store.records import new_trace_id

        t0 = time.perf_counter()
        log = TurnLog(t0)
        ctx = self.context(TurnRequest(request, session_id=session_id, mode=mode), request, new_trace_id())
        ctx.language = language
        ctx.citizen_texts = list(citizen_texts)
        st = TurnState(messages=[{"role": "user", "content": request}])
        by_id = {m.id: m}
        call = ToolCall(id="call_1", adapter_id=m.id, arguments=arguments)
        log.state("received")
        log.emit("turn_started", "context", trace_id=ctx.trace_id, language=ctx.language,
                 session_id=session_id, mode=mode, release_id=self.catalog.release_id, planner=planner)
        stop: Stop | None = None
        output: dict[str, Any] | None = None
        try:
            checked = validate([call], by_id, st, log)
            if checked.problems:
                st.calls.append(self._row_maker(by_id, mode)(call, "invalid"))
                raise Stop("invalid_arguments", "; ".join(checked.problems), "; ".join(checked.problems))
            given = CheckInput(ctx, [call], by_id, self.consents)
            refusals = run_checks([self.personal_guard], given, log)
            for r in self.personal_guard.redactions:
                log.emit("redaction", "validate", **r.event())
            refusals += run_checks(self.argument_checks, given, log)
            if refusals:
                self._refuse(refusals, [call], by_id, ctx, st, log)
            self._gate([call], by_id, ctx, st, log)
            done = await dispatch(self.dispatcher, [call], by_id, ctx, st, log)
            output = done[0].outcome.output  # the full, schema-valid output (evidence is trimmed)
            stop = project(done, ctx, st, log)
        except Stop as s:
            stop = s
        reason = stop.reason if stop is not None else "completed"
        layer = stop.layer if stop is not None and stop.layer else STOP_LAYER.get(reason, "dispatch")
        end = CallEnd(ctx.trace_id, session_id, reason, layer, stop, output, st.calls, list(st.evidence))
        text = render(end)
        log.state("failed" if reason in UPSTREAM_STOPS else "completed")
        log.emit("stop", layer, stop_reason=reason, layer=layer, detail=stop.detail if stop else "")
        turn = TurnResult(
            trace_id=ctx.trace_id, stop_reason=reason, layer=layer, answer=text, language=ctx.language,
            release_id=self.catalog.release_id, session_id=session_id, calls=st.calls,
            evidence=[{"evidence_id": e.evidence_id, "adapter_id": e.adapter_id, "tier": e.tier,
                       "status": e.status, "citation": e.citation, "freshness": e.freshness,
                       "summary": e.summary} for _, e in st.evidence],
            events=log.events)
        turn.trace = self._pending(turn, origin, request, ctx, log, t0)
        if self.write_traces:
            await self.traces.commit(turn.trace)
        return end, turn

    async def run(
        self, req: TurnRequest, sink: Callable[[TurnResult], None] | None = None
    ) -> AsyncIterator[Event]:
        """Yield the turn's events; the last one is always ``stop``. Raises RequestError before
        the first event for a request that cannot start a turn (empty, too long)."""
        # The one subscriber every surface shares: OpenTelemetry export, when configured
        # (runtime/telemetry.py); None otherwise, and then nothing else happens here.
        observe = turn_observer()
        if observe is None:
            async for e in self._run(req, sink):
                yield e
            return
        async for e in self._run(req, observe.wrap_sink(sink)):
            observe(e)
            yield e

    async def _run(self, req: TurnRequest, sink: Callable[[TurnResult], None] | None) -> AsyncIterator[Event]:
        query = clean_request(req.query)
        from ..store.records import new_trace_id

        t0 = time.perf_counter()
        log = TurnLog(t0)
        ctx = self.context(req, query, req.trace_id or new_trace_id())
        st = TurnState(messages=[{"role": "user", "content": query}])
        cands = None
        log.state("received")
        log.emit("turn_started", "context", trace_id=ctx.trace_id, language=ctx.language,
                 session_id=ctx.session.session_id, mode=req.mode,
                 release_id=self.catalog.release_id, planner=self.planner.name, policy=ctx.policy)
        # An emergency is said first, before retrieval and whatever the turn then does.
        emergency_opening(ctx, st, log)
        for e in log.take():
            yield e
        stop_reason, stop_text, detail, error = "completed", "", "", None
        stop_parts = None
        layer: str | None = None
        try:
            log.state("retrieving")
            cands = retrieve(self.retriever, self.catalog, ctx, req, log, widen_providers=self.widen_providers)
            # The scope decision (scope.py) on the candidates: the planner never sees a protected
            # adapter for a service the request does not name below retrieval's best.
            cands = narrow(cands, ctx, self.consents, log)
            for e in log.take():
                yield e
            log.state("generating")
            by_id = cands.by_id
            st.carried = dict(ctx.slots)
            st.end_is_locate = _locating_is_the_request(cands.manifests, ctx)
            for step in range(req.max_steps):
                planned = await plan_step(self.planner, ctx, cands, st, step, log, req)
                if st.repair_kind == "ungrounded":  # that repair was this step's; it is used up
                    st.repair, st.repair_kind = None, "validation"
                for e in log.take():
                    yield e
                action = planned.action
                if action.kind == "answer":
                    stop = answer_stop(planned, ctx, st)
                    if stop is None:
                        continue  # no evidence yet: the planner gets one more step to find some
                    raise stop
                if action.kind == "ask":
                    # Consent comes before collection (개인정보 보호법 제15조): a protected adapter
                    # is never the reason to ask for personal data the citizen has not agreed to give.
                    st.asked = _asked(action)
                    check_scope(action.calls, cands, ctx, self.consents, log)
                    self._gate(action.calls, by_id, ctx, st, log, quiet_when_allowed=True)
                    if not action.calls and asks_for_personal(action.text):
                        # A model's question names no adapter; the protected candidates are the
                        # only reason to collect personal data, and their consent comes first.
                        protected = [ToolCall("", m.id, {}) for m in cands.manifests if m.permission.consent is not None]
                        check_scope(protected[:1], cands, ctx, self.consents, log)
                        self._gate(protected[:1], by_id, ctx, st, log, quiet_when_allowed=True)
                        if not protected:
                            action.text = ""  # nothing here needs it: ask for the request instead
                    raise ask_stop(planned, ctx, st)
                calls = self._fresh(action.calls, st, log)
                if not calls:
                    # The planner asked again for what it already has: the turn answers from it.
                    raise held_evidence_stop(ctx, st, "repeated_call", log)
                # A call goes ahead only for a service the request names (scope.py): checked
                # before its arguments, which are not worth repairing for the wrong service.
                check_scope(calls, cands, ctx, self.consents, log)
                checked = validate(calls, by_id, st, log)
                for e in log.take():
                    yield e
                if checked.problems and repair_or_stop(checked, ctx, st, self._row_maker(by_id, ctx.mode), req.repair_budget):
                    continue
                st.repair = None
                given = CheckInput(ctx, calls, by_id, self.consents, list(st.evidence))
                refusals = run_checks([self.personal_guard], given, log)
                for red in self.personal_guard.redactions:
                    log.emit("redaction", "validate", **red.event())
                refusals += run_checks(self.argument_checks, given, log)
                if refusals and all(r.repairable for r in refusals) \
                        and repair_budget_left(st, [r.adapter_id for r in refusals], req.repair_budget):
                    # A guessed coordinate or code: the planner is told which step supplies it.
                    for r in refusals:
                        st.repairs[r.adapter_id] = st.repairs.get(r.adapter_id, 0) + 1
                    errors = {c.id: "; ".join(r.message for r in refusals if r.adapter_id == c.adapter_id)
                              for c in calls if any(r.adapter_id == c.adapter_id for r in refusals)}
                    show_refused(st, calls, errors)
                    st.repair, st.repair_kind = "; ".join(r.message for r in refusals), "validation"
                    for e in log.take():
                        yield e
                    continue
                if refusals:
                    if refusals[0].reason == "needs_input":
                        refused = by_id.get(refusals[0].adapter_id)
                        # A locate step refused on the way: the question is still the pinned intent's.
                        pinned = ctx.frame.hints.pinned if ctx.frame is not None else None
                        asked_id = pinned if refused is not None and refused.primitive == "locate" and pinned else refusals[0].adapter_id
                        st.asked = {"adapter_id": asked_id, "missing": [s for r in refusals for s in r.missing],
                                    "arguments": next((c.arguments for c in calls if c.adapter_id == asked_id), {})}
                    self._refuse(refusals, calls, by_id, ctx, st, log)
                self._gate(calls, by_id, ctx, st, log)
                for e in log.take():
                    yield e
                done = await dispatch(self.dispatcher, calls, by_id, ctx, st, log)
                stop = project(done, ctx, st, log)
                for d in done:
                    if d.outcome.status != "error":
                        st.dispatched[_signature(d.call)] = d.call.id
                for e in log.take():
                    yield e
                if stop is not None:
                    raise stop
                compact(st, req.context_budget_tokens, log)
                for e in log.take():
                    yield e
            if st.evidence:
                # Steps ran out after something was found: that is answered, not thrown away.
                raise held_evidence_stop(ctx, st, "steps_exhausted", log)
            raise Stop("budget_exhausted", ans.compose_stop("budget_exhausted", ctx.language))
        except Stop as s:
            stop_reason, stop_text, detail, layer = s.reason, s.text, s.detail, s.layer
            stop_parts = s.parts
        except ProviderError as exc:
            if st.evidence:
                # The model failed after evidence was found (an empty reply, a 500, a cut stream):
                # the turn answers from what it holds, engine-framed and saying so. If that is
                # only a located place, the request is not answered: the failure stays the stop.
                held = held_evidence_stop(ctx, st, "model_error", log, code=exc.code, message=exc.message)
                stop_reason, stop_text, detail, layer = held.reason, held.text, held.detail, held.layer
                if held.reason != "completed":
                    error = {"code": exc.code, "message": exc.message}
                    log.emit("error", "plan", code=exc.code, message=exc.message)
            else:
                # The model provider is a channel too: when it fails the turn stops in the plan
                # layer, and the provider's stable code says which failure it was.
                stop_reason, error = "channel_unavailable", {"code": exc.code, "message": exc.message}
                layer = "plan"
                stop_text = ans.compose_model_stop(exc.code, ctx.language)
                log.emit("error", "plan", code=exc.code, message=exc.message)
        except TimeoutError:
            if ctx.deadline is None or asyncio.get_running_loop().time() < ctx.deadline:
                raise  # not the turn's deadline: a bug somewhere below, not a stop
            if log.stage == "plan" and st.evidence:
                held = held_evidence_stop(ctx, st, "turn_deadline", log, code="turn_deadline")
                stop_reason, stop_text, detail, layer = held.reason, held.text, held.detail, held.layer
            else:
                stop_reason, stop_text, detail, layer, error = self._deadline_stop(ctx, log)
        if req.session_id:  # a turn without a session carries nothing, so nothing is stored
            self._remember(ctx, query, stop_reason, st, log)
        text = finish(stop_text, ctx, st, log, reason=stop_reason, parts=stop_parts)
        if req.session_id:
            self.save_session(ctx.session)
        log.state("failed" if error else "completed")
        layer = layer or STOP_LAYER.get(stop_reason, "answer")
        stop_event = log.emit("stop", layer, stop_reason=stop_reason, layer=layer, detail=detail)
        for e in log.take()[:-1]:
            yield e
        result = TurnResult(
            trace_id=ctx.trace_id, stop_reason=stop_reason, layer=layer, answer=text,
            language=ctx.language, release_id=self.catalog.release_id, session_id=ctx.session.session_id,
            calls=st.calls,
            evidence=[{"evidence_id": e.evidence_id, "adapter_id": e.adapter_id, "tier": e.tier, "status": e.status,
                       "citation": e.citation, "freshness": e.freshness, "summary": e.summary} for _, e in st.evidence],
            candidates=cands.ranked if cands is not None else [], usage=st.usage, events=log.events, error=error,
            grounded=st.grounded, removed_claims=st.removed,
        )
        result.trace = self._pending(result, req.origin, query, ctx, log, t0)
        if self.write_traces:  # stored before the stop is yielded: no surface renders it sooner
            await self.traces.commit(result.trace)
        if sink:
            sink(result)
        yield stop_event

    # -- helpers the stages are given -----------------------------------------------------------

    def _remember(self, ctx: TurnContext, query: str, stop_reason: str, st: TurnState, log: TurnLog) -> None:
        """The dialogue state this turn leaves for the next (saved with the session)."""
        from ..dialogue import DialogueState, after_turn

        state = ctx.dialogue if ctx.dialogue is not None else DialogueState()
        outputs = {e.call_id: e.output for _, e in st.evidence}
        new = after_turn(state, ctx.frame, catalog=self.catalog, query=query, language=ctx.language,
                         policy=ctx.policy, stop_reason=stop_reason, asked=st.asked, calls=st.calls,
                         slots=ctx.slots, outputs=outputs, now=ctx.clock)
        from .days import turn_days

        new.days = [d.isoformat() for d in turn_days(ctx)]
        if ctx.given_key is not None:  # keyed digests only, never the words (dialogue/given.py)
            from ..dialogue.given import remember

            new.given = remember(state.given, ctx.given_key, query)
        ctx.session.dialogue = new.model_dump(mode="json")
        ctx.session.slots = new.carried_slots()
        log.emit("dialogue", "context", saved=new.view())

    def _gate(self, calls: list[ToolCall], by_id: dict[str, Manifest], ctx: TurnContext, st: TurnState,
              log: TurnLog, *, quiet_when_allowed: bool = False) -> None:
        gate(calls, by_id, ctx, st, log, book=self.consents, grant=self.grant,
             call_row=self._row_maker(by_id, ctx.mode), quiet_when_allowed=quiet_when_allowed)

    def _refuse(self, refusals: list[Refusal], calls: list[ToolCall], by_id: dict[str, Manifest],
                ctx: TurnContext, st: TurnState, log: TurnLog) -> None:
        """An argument check refused a call: nothing is dispatched. A request for input passes the
        gate first (consent before collection); the refused calls are recorded with the reason."""
        first = refusals[0]
        refused = [c for c in calls if c.adapter_id in {r.adapter_id for r in refusals}]
        if first.reason == "needs_input":
            self._gate(refused, by_id, ctx, st, log, quiet_when_allowed=True)
        row = self._row_maker(by_id, ctx.mode)
        for c in refused:
            st.calls.append(row(c, "refused"))
        if first.reason == "needs_input":
            missing = [s for r in refusals for s in r.missing]
            raise Stop("needs_input", ans.compose_ask(list(dict.fromkeys(missing)) or ["request"], ctx.language),
                       first.message, layer="validate")
        raise Stop(first.reason, first.citizen_text or ans.compose_stop(first.reason, ctx.language, first.message),
                   first.message, layer="validate")

    def _deadline_stop(self, ctx: TurnContext, log: TurnLog) -> tuple[str, str, str, str, dict[str, str] | None]:
        """The whole turn's deadline passed: a model still writing or an upstream still out is a
        channel that did not answer in time; anywhere else the turn ran out of budget."""
        where = log.stage
        if where in ("plan", "dispatch"):
            log.emit("error", where, code="turn_deadline", message="the turn's deadline passed")
            if where == "plan":
                return ("channel_unavailable", ans.compose_model_stop("turn_deadline", ctx.language),
                        "turn_deadline", "plan", {"code": "provider_timeout", "message": "the turn's deadline passed while the model was writing"})
            return ("channel_unavailable", ans.compose_stop("channel_unavailable", ctx.language, "TURN_DEADLINE"),
                    "TURN_DEADLINE", "dispatch", None)
        return ("budget_exhausted", ans.compose_stop("budget_exhausted", ctx.language), "turn_deadline", where, None)

    def _row_maker(self, by_id: dict[str, Manifest], mode: Mode) -> Callable[[ToolCall, str], dict[str, Any]]:
        def row(c: ToolCall, status: str) -> dict[str, Any]:
            m = by_id.get(c.adapter_id)
            tier = self.dispatcher.resolve_tier(m.id, mode) if m else "unknown"
            return {"call_id": c.id, "adapter_id": c.adapter_id, "primitive": m.primitive if m else None,
                    "tier": tier, "arguments": c.arguments, "status": status, "latency_ms": 0.0, "upstream_url": None, "fixture": None, "error": None}
        return row

    @staticmethod
    def _fresh(calls: list[ToolCall], st: TurnState, log: TurnLog) -> list[ToolCall]:
        """The step's calls less those already answered this turn (same adapter, same arguments):
        small models repeat a call until the step limit; the evidence they asked for is held."""
        fresh = [c for c in calls if _signature(c) not in st.dispatched]
        repeated = [c for c in calls if c not in fresh]
        if repeated:
            log.emit("loop", "plan", repeated=[{"adapter_id": c.adapter_id, "arguments": c.arguments,
                                                "answered_by": st.dispatched[_signature(c)]} for c in repeated],
                     dispatched=len(fresh))
        return fresh

    def _widen(self, cands: list[Manifest]) -> list[Manifest]:
        return widen(self.catalog, cands, self.widen_providers)

    def _pending(self, r: TurnResult, origin: TraceOrigin, query: str, ctx: TurnContext, log: TurnLog,
                 t0: float) -> PendingTrace:
        if origin.release_alias is None and self.release_alias is not None:
            origin = TraceOrigin(origin.surface, self.release_alias, origin.owner)
        return PendingTrace.of_turn(r, origin=origin, query=query, policy=ctx.policy, states=log.states,
                                    seconds=time.perf_counter() - t0, catalog=self.catalog)

def _locating_is_the_request(manifests: list[Manifest], ctx: TurnContext) -> bool:
    """The best candidate is a locate step and the request does not anchor on a place to look
    around (「동아대 어디야?」, not 「동아대 근처 응급실」): then a located place answers it — the
    offline planner's reading of the same request (plan/offline.py ``choose_target``)."""
    if not manifests or manifests[0].primitive != "locate":
        return False
    from ..understand.places import find_place

    return not find_place(ctx.request, ctx.language)


def _signature(c: ToolCall) -> str:
    import json

    return c.adapter_id + "\x00" + json.dumps(c.arguments, sort_keys=True, ensure_ascii=False, default=str)


def _asked(action: Any) -> dict[str, Any] | None:
    """What a planner's question is waiting for: the adapter it would run and the missing slots."""
    call = next((c for c in action.calls if c.adapter_id), None)
    if call is None:
        return None
    return {"adapter_id": call.adapter_id, "missing": list(action.missing), "arguments": dict(call.arguments or {})}
