"""The engine the planner tests ask: built from the committed catalog, offline planner, on a
SQLite store of the module's own (sessions never leak between test modules)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    from ummaya.runtime.assemble import build_engine
    from ummaya.runtime.store import open_store

    store = open_store(f"sqlite:///{tmp_path_factory.mktemp('plan') / 's.sqlite3'}")
    yield build_engine(store=store)
    store.close()
