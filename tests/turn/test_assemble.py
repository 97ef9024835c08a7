"""build_engine wires one catalog through the turn: the retriever ranks with the engine's own."""

from __future__ import annotations

from pathlib import Path


def test_the_retriever_uses_the_engines_catalog_not_a_second_load(generated: Path, tmp_path: Path, monkeypatch):
    from ummaya.runtime import catalog as catalog_module
    from ummaya.runtime.assemble import build_engine
    from ummaya.runtime.store import open_store

    loads: list[Path] = []
    real = catalog_module.Catalog.load.__func__

    def counting(cls, folder=None):
        loads.append(Path(folder))
        return real(cls, folder)

    monkeypatch.setattr(catalog_module.Catalog, "load", classmethod(counting))
    store = open_store(f"sqlite:///{tmp_path / 'turn.sqlite3'}")
    try:
        engine = build_engine(generated, store=store)
        assert engine.retriever._catalog() is engine.catalog
        # Ranking a request that needs the runnable check reads manifests: still the one catalog.
        engine.retriever.search("동아대 승학캠퍼스 근처 응급실 알려줘", top_k=5)
        assert loads == [generated]
    finally:
        store.close()
