"""Assemble a turn engine from the project's parts: catalog, retriever, dispatcher, planner, store.

The defaults themselves (the embedded offline planner, SQLite in the state folder, the deployment's
retention policy) live in one place, ``TurnService.load`` (runtime/service.py), so the surfaces,
the evals and the suites cannot drift apart.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, TypeGuard, get_args

from .catalog import Catalog
from .turn import TurnEngine

PlannerName = Literal["offline", "openai"]


def _known(name: str) -> TypeGuard[PlannerName]:
    return name in get_args(PlannerName)


def planner_named(name: str) -> PlannerName:
    """``name`` as a planner name, or ValueError: names come from the command line and settings."""
    if _known(name):
        return name
    raise ValueError(f"unknown planner '{name}' ({', '.join(get_args(PlannerName))})")


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
    raise ValueError(f"unknown planner '{name}' ({', '.join(get_args(PlannerName))})")


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
    """The engine of ``TurnService.load`` (runtime/service.py), for the evals and suites that
    drive the engine itself. ``clock``: the engine's "now" (a callable returning an aware
    datetime); None = the wall clock. Scenarios and evals pin it (``fixed_clock``), so an
    answer's dates — and Mock's move to today — are the same everywhere."""
    from .service import TurnService

    return TurnService.load(generated, planner=planner, store=store, catalog=catalog, retriever=retriever,
                            dispatcher=dispatcher, retention=retention, clock=clock).engine


def fixed_clock(at: str) -> Any:
    """A clock that always says ``at`` (ISO 8601 with its offset, e.g. 2026-12-01T10:00:00+09:00)."""
    import datetime as dt

    moment = dt.datetime.fromisoformat(at)
    if moment.tzinfo is None:
        raise ValueError(f"clock {at!r} needs a UTC offset (e.g. +09:00)")
    return lambda: moment
