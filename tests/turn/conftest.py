"""Turn tests run on the embedded default: offline planner, Mock dispatch, SQLite store."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.generated import build_generated

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    committed = REPO / "generated"
    if (committed / "catalog.json").exists() and (committed / "index" / "documents.json").exists():
        return committed
    out = tmp_path_factory.mktemp("generated")
    build_generated(out)
    return out


@pytest.fixture(scope="session")
def catalog(generated: Path):
    from ummaya.runtime.catalog import Catalog

    return Catalog.load(generated)


@pytest.fixture(scope="session")
def retriever(generated: Path):
    from ummaya.runtime.retrieve import Retriever

    return Retriever.load(generated)


@pytest.fixture
def store(tmp_path: Path):
    from ummaya.runtime.store import open_store

    s = open_store(f"sqlite:///{tmp_path / 'turn.sqlite3'}")
    yield s
    s.close()


@pytest.fixture
def engine(catalog, retriever, store, monkeypatch: pytest.MonkeyPatch):
    from ummaya.runtime.assemble import build_engine, fixed_clock
    from ummaya.runtime.dispatch import Dispatcher
    from ummaya.runtime.scenarios import SCENARIO_CLOCK

    # The embedded default: no credentials in the environment → Mock, labelled.
    for var in ("DATA_GO_KR_SERVICE_KEY", "KAKAO_REST_API_KEY", "JUSO_CONFM_KEY", "SGIS_CONSUMER_KEY", "SGIS_CONSUMER_SECRET"):
        monkeypatch.delenv(var, raising=False)
    # The scenarios' pinned moment, for the turn, the planner and Mock's calendar alike.
    clock = fixed_clock(SCENARIO_CLOCK)
    return build_engine(catalog.root, catalog=catalog, retriever=retriever, dispatcher=Dispatcher(catalog, env={}, clock=clock),
                        store=store, clock=clock)
