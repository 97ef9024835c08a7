"""The one turn API: ``TurnService`` assembles the turn engine from a compiled catalog and runs a
turn, or one adapter call proposed by an MCP host, through the same stages.

Every surface is a renderer of what it returns: the CLI (``ask``, ``chat``), ``POST /v1/answer``
(JSON folds the very events SSE streams), MCP (``ask`` and the adapter tools) and the page (which
reads the SSE stream). No surface builds an engine of its own, so none can pick another retriever,
language or stop for the same request (tests/serve/test_every_surface.py holds them to that).

A service is cheap to derive: ``using(retriever=…, planner=…)`` gives one for a single request
(the server's per-request reranking retriever, the planner a request names) over the same catalog,
dispatcher and store. Its engine is built once and kept, so sessions and consents held in memory
(no store) last as long as the service does.

One trace per turn (runtime/turn/turn_trace.py): the engine builds it, in one schema whatever the
surface (the request's ``TraceOrigin`` says which), and stores it before the turn's ``stop`` —
through ``trace_writer`` (the server's batched writer) when the service has one, else straight into
the store. A server that adds what it knows around the turn (its request states, public error
code) derives a service with ``write_traces=False``, completes the pending trace
(``TurnResult.trace``) and stores it with ``commit`` / ``commit_nowait`` — the same sink.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

from ummaya.model.manifest import Manifest

from .catalog import Catalog
from .events import Event
from .turn import TraceOrigin, TurnEngine, TurnRequest, TurnResult
from .turn.turn_trace import PendingTrace, Served
from .turn.values import MCP_TOOL, CallEnd


@dataclass
class TurnService:
    """A compiled catalog with what a turn runs on: retriever, dispatcher, planner, store, the
    retention policy and the clock (None = the wall clock). ``trace_writer``: the server's batched
    trace writer (None: traces go straight into the store). ``write_traces=False``: the caller
    completes each turn's pending trace and stores it with ``commit`` (the server)."""

    catalog: Catalog
    retriever: Any
    dispatcher: Any
    planner: Any
    store: Any = None
    retention: Any = None
    clock: Callable[[], Any] | None = None
    widen_providers: int = 2
    write_traces: bool = True
    trace_writer: Any = None
    release_alias: str | None = None

    @classmethod
    def load(cls, generated: Path | None = None, *, planner: Any = "offline", store: Any = "default",
             catalog: Catalog | None = None, retriever: Any = None, dispatcher: Any = None,
             retention: Any = None, clock: Any = None, policy: Any = None, rerank: bool = True) -> TurnService:
        """The defaults every local surface shares: the catalog under ``generated`` (or the one
        given), the retriever ``policy`` describes (default: the policy a release is published
        with, runtime/retrieve/policy.py), reranked and cut to that policy's budget as the server
        ranks (``rerank=False``: the retriever's own order, for retrieval measurements), a
        dispatcher on ``clock``, SQLite in the state folder (``store="default"``; None keeps
        sessions in memory), the deployment's retention policy and the named planner
        (``"offline"``, ``"openai"``) or a planner object."""
        from .plan.choice import make_planner, planner_named
        from .dispatch import Dispatcher
        from .retrieve.policy import RetrievalPolicy
        from .store import open_store
        from .store.records import RetentionPolicy

        catalog = catalog or Catalog.load(generated)
        policy = policy or RetrievalPolicy()
        retriever = retriever or policy.retriever(catalog.root, catalog=catalog)
        if rerank:
            retriever = reranked(retriever, catalog, policy)
        dispatcher = dispatcher or (Dispatcher(catalog, clock=clock) if clock is not None else Dispatcher(catalog))
        if store == "default":
            store = open_store(None)
        planner_obj = make_planner(planner_named(planner), clock=clock) if isinstance(planner, str) else planner
        return cls(catalog, retriever, dispatcher, planner_obj, store=store,
                   retention=retention or RetentionPolicy.from_env(), clock=clock,
                   widen_providers=policy.rerank.widen)

    def using(self, **changes: Any) -> TurnService:
        """The same service with some parts swapped (a request's retriever or planner)."""
        return dataclasses.replace(self, **changes)

    @cached_property
    def engine(self) -> TurnEngine:
        return TurnEngine(self.catalog, self.retriever, self.dispatcher, self.planner, store=self.store,
                          retention=self.retention, widen_providers=self.widen_providers,
                          write_traces=self.write_traces, trace_writer=self.trace_writer,
                          release_alias=self.release_alias, clock=self.clock)

    # -- a turn ---------------------------------------------------------------------------------
    def stream(self, request: TurnRequest,
               sink: Callable[[TurnResult], None] | None = None) -> AsyncIterator[Event]:
        """The turn's events as they happen, ``stop`` last; ``sink`` receives the outcome they
        fold into. Raises ``RequestError`` before the first event for a request that cannot
        start a turn (empty, too long)."""
        return self.engine.run(request, sink=sink)

    async def answer(self, request: TurnRequest) -> TurnResult:
        """The whole turn: its typed outcome (its trace is stored by the time it returns)."""
        return await self.engine.ask(request)

    # -- the trace ------------------------------------------------------------------------------
    async def commit(self, pending: PendingTrace, served: Served | None = None) -> bool:
        """Store a pending trace, completed with what a server saw (``served``), and wait for its
        commit; False (logged) when the store could not keep it."""
        return await self.engine.traces.commit(pending, served)

    def commit_nowait(self, pending: PendingTrace, served: Served | None = None) -> None:
        """Store a pending trace without waiting (a client that left mid-turn)."""
        self.engine.traces.commit_nowait(pending, served)

    # -- one adapter call (MCP) ---------------------------------------------------------------------
    async def call_adapter(self, m: Manifest, arguments: dict[str, Any], *, session_id: str, mode: Any,
                           request: str, citizen_texts: list[str], planner: str,
                           render: Callable[[CallEnd], str], language: Literal["ko", "en"] = "ko",
                           origin: TraceOrigin = MCP_TOOL) -> CallEnd:
        """One call the planner did not propose, through the turn's own stages
        (``TurnEngine.call_adapter``); ``render`` writes the text the trace keeps as the answer."""
        end, _turn = await self.engine.call_adapter(
            m, arguments, session_id=session_id, mode=mode, request=request,
            citizen_texts=citizen_texts, planner=planner, render=render, language=language,
            origin=origin)
        return end

    def grant(self, session_id: str, m: Manifest) -> str:
        """Record the citizen's consent to ``m`` in ``session_id`` (hash-chained with a store)."""
        return self.engine.grant(session_id, m)

    def resolve_tier(self, adapter_id: str, mode: Any) -> str:
        return self.dispatcher.resolve_tier(adapter_id, mode)


class RerankFacts(Mapping[str, Any]):
    """What reranking reads of the adapters of ``catalog``, by id: its primitive, tier, slots and
    the size of the tool schema the planner is shown (runtime/retrieve/rerank.py
    ``facts_for``), computed for one adapter the first time a ranking reads it. A turn reads the
    facts of its few candidates; computing them for every adapter (``tool_for`` builds each
    one's tool schema) at every cold start was work no turn used. ``dict(facts)`` still gives them
    all (the server does, once per release)."""

    def __init__(self, catalog: Catalog) -> None:
        self._catalog = catalog
        self._done: dict[str, Any] = {}

    def __getitem__(self, adapter_id: str) -> Any:
        f = self._done.get(adapter_id)
        if f is None:
            from .plan.openai_tools import tool_for
            from .retrieve.rerank import facts_for

            m = self._catalog.adapters[adapter_id]
            f = self._done[adapter_id] = facts_for(m, tool_for(m))
        return f

    def __contains__(self, adapter_id: object) -> bool:
        return adapter_id in self._catalog.adapters

    def __iter__(self) -> Iterator[str]:
        return iter(self._catalog.adapters)

    def __len__(self) -> int:
        return len(self._catalog.adapters)


def rerank_facts(catalog: Catalog) -> RerankFacts:
    """The rerank facts of ``catalog``'s adapters, by id, each computed when first read."""
    return RerankFacts(catalog)


def reranked(retriever: Any, catalog: Catalog, policy: Any) -> Any:
    """``retriever`` reranked by ``catalog``'s adapters and cut to ``policy``'s budget — the one
    ranking of every surface (a retriever that already is one is kept as it is)."""
    from .retrieve.rerank import RerankingRetriever

    if isinstance(retriever, RerankingRetriever):
        return retriever
    return RerankingRetriever(retriever, rerank_facts(catalog), policy.rerank)
