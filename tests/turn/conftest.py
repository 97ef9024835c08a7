"""Turn tests run on the embedded default: offline planner, Mock dispatch, SQLite store."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def build_generated(out: Path) -> Path:
    """A generated/ folder built from registry/ (used when the committed one is absent)."""
    from ummaya.codegen.emit_index import emit_index
    from ummaya.codegen.loader import load_registry
    from ummaya.codegen.resolve import resolve_manifest

    reg, problems = load_registry(REPO)
    assert not problems, "\n".join(map(str, problems))
    out.mkdir(parents=True, exist_ok=True)
    ms = [resolve_manifest(m.manifest, reg.profiles) for m in reg.manifests]
    (out / "catalog.json").write_text(json.dumps(
        {"format": 1, "release_id": "test", "adapters": [m.model_dump(mode="json") for m in ms]},
        ensure_ascii=False))
    for lm in reg.manifests:
        d = out / "fixtures" / lm.id
        d.mkdir(parents=True, exist_ok=True)
        for f in lm.manifest.fixtures:
            if f.response:
                shutil.copy(lm.fixtures_dir / f.response, d / f.response)
    for rel, data in emit_index([m.manifest for m in reg.manifests]).items():
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_bytes(data)
    return out


@pytest.fixture(scope="session")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    committed = REPO / "generated"
    if (committed / "catalog.json").exists() and (committed / "index" / "documents.json").exists():
        return committed
    return build_generated(tmp_path_factory.mktemp("generated"))


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
    from ummaya.runtime.assemble import build_engine
    from ummaya.runtime.dispatch import Dispatcher

    # The embedded default: no credentials in the environment → Mock, labelled.
    for var in ("DATA_GO_KR_SERVICE_KEY", "KAKAO_REST_API_KEY", "JUSO_CONFM_KEY", "SGIS_CONSUMER_KEY", "SGIS_CONSUMER_SECRET"):
        monkeypatch.delenv(var, raising=False)
    return build_engine(catalog.root, catalog=catalog, retriever=retriever, dispatcher=Dispatcher(catalog, env={}), store=store)
