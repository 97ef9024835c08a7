"""Assemble a turn engine from the project's parts: catalog, retriever, dispatcher, planner, store.

One place decides the defaults (the embedded offline planner, SQLite in the state folder, the
deployment's retention policy), so the CLI, the chat and the server cannot drift apart.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from .catalog import Catalog
from .turn import TurnEngine

PlannerName = Literal["offline", "openai"]


def make_planner(name: PlannerName = "offline", *, fallback: str | None = None,
                 env: Any = None, clock: Any = None, **overrides: Any) -> Any:
    """The named planner. ``openai`` reads ``UMMAYA_LLM_*`` from ``env`` (default: the process
    environment) with ``overrides`` (base_url/model/profile/timeout_s/context_tokens …) on top;
    ``fallback="offline"`` wraps it so a failing provider hands the turn to the offline planner.
    ``clock`` pins the offline planner's "now" (scenarios and evals)."""
    if name == "offline":
        from .plan.offline import OfflinePlanner

        return OfflinePlanner(clock) if clock is not None else OfflinePlanner()
    if name == "openai":
        import os

        from .plan.openai_compat import ENV_BASE_URL, ENV_MODEL, OpenAICompatPlanner
        from .plan.profiles import ENV_PROFILE

        env = dict(os.environ if env is None else env)
        for key, var in (("base_url", ENV_BASE_URL), ("model", ENV_MODEL), ("profile", ENV_PROFILE)):
            if overrides.get(key):
                env[var] = str(overrides.pop(key))
            overrides.pop(key, None)
        planner = OpenAICompatPlanner.from_env(env, **overrides)
        if fallback == "offline":
            from .plan.fallback import FallbackPlanner
            from .plan.offline import OfflinePlanner

            return FallbackPlanner(planner, OfflinePlanner(clock) if clock is not None else OfflinePlanner())
        if fallback not in (None, "none"):
            raise ValueError(f"unknown fallback '{fallback}' (offline)")
        return planner
    raise ValueError(f"unknown planner '{name}' (offline, openai)")


def build_engine(
    generated: Path | None = None,
    *,
    planner: PlannerName | Any = "offline",
    store: Any = "default",
    catalog: Catalog | None = None,
    retriever: Any = None,
    dispatcher: Any = None,
    retention: Any = None,
    clock: Any = None,
) -> TurnEngine:
    """``clock``: the engine's "now" (a callable returning an aware datetime) for the turn, the
    offline planner and a dispatcher built here; None = the wall clock. Scenarios and evals pin it
    (``fixed_clock``), so an answer's dates — and Mock's move to today — are the same everywhere."""
    from .dispatch import Dispatcher
    from .retrieve import Retriever
    from .store import open_store
    from .store.records import RetentionPolicy

    catalog = catalog or Catalog.load(generated)
    retriever = retriever or Retriever.load(catalog.root, catalog=catalog)
    dispatcher = dispatcher or (Dispatcher(catalog, clock=clock) if clock is not None else Dispatcher(catalog))
    if store == "default":
        store = open_store(None)
    retention = retention or RetentionPolicy.from_env()
    planner_obj = make_planner(planner, clock=clock) if isinstance(planner, str) else planner
    return TurnEngine(catalog, retriever, dispatcher, planner_obj, store=store, retention=retention, clock=clock)


def fixed_clock(at: str) -> Any:
    """A clock that always says ``at`` (ISO 8601 with its offset, e.g. 2026-12-01T10:00:00+09:00)."""
    import datetime as dt

    moment = dt.datetime.fromisoformat(at)
    if moment.tzinfo is None:
        raise ValueError(f"clock {at!r} needs a UTC offset (e.g. +09:00)")
    return lambda: moment
