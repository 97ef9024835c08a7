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


def make_planner(name: PlannerName = "offline") -> Any:
    if name == "offline":
        from .plan.offline import OfflinePlanner

        return OfflinePlanner()
    if name == "openai":
        from .plan.openai_compat import OpenAICompatPlanner

        return OpenAICompatPlanner.from_env()
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
) -> TurnEngine:
    from .dispatch import Dispatcher
    from .retrieve import Retriever
    from .store import open_store
    from .store.models import RetentionPolicy

    catalog = catalog or Catalog.load(generated)
    retriever = retriever or Retriever.load(catalog.root)
    dispatcher = dispatcher or Dispatcher(catalog)
    if store == "default":
        store = open_store(None)
    retention = retention or RetentionPolicy.from_env()
    planner_obj = make_planner(planner) if isinstance(planner, str) else planner
    return TurnEngine(catalog, retriever, dispatcher, planner_obj, store=store, retention=retention)
