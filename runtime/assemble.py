"""Assemble a turn engine from the project's parts: catalog, retriever, dispatcher, planner, store.

The defaults themselves (the embedded offline planner, SQLite in the state folder, the deployment's
retention policy) live in one place, ``TurnService.load`` (runtime/service.py), so the surfaces,
the evals and the suites cannot drift apart.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .catalog import Catalog
from .plan.choice import PlannerName, make_planner, planner_named
from .service import TurnService
from .turn import TurnEngine

__all__ = ["PlannerName", "build_engine", "fixed_clock", "make_planner", "planner_named"]



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
    return TurnService.load(generated, planner=planner, store=store, catalog=catalog, retriever=retriever,
                            dispatcher=dispatcher, retention=retention, clock=clock).engine


def fixed_clock(at: str) -> Any:
    """A clock that always says ``at`` (ISO 8601 with its offset, e.g. 2026-12-01T10:00:00+09:00)."""
    import datetime as dt

    moment = dt.datetime.fromisoformat(at)
    if moment.tzinfo is None:
        raise ValueError(f"clock {at!r} needs a UTC offset (e.g. +09:00)")
    return lambda: moment
