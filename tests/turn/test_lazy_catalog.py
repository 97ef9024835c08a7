"""The catalog validates an adapter when it is first read, and the rerank facts are computed for
the adapters a ranking reads: a cold turn pays for its candidates, not for the whole registry —
and reads the same manifests and facts it would have read eagerly."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ummaya.model.manifest import Manifest
from ummaya.runtime.catalog import Catalog, CatalogError, CompiledAdapters
from ummaya.runtime.service import rerank_facts


def test_adapters_validate_on_first_read_and_equal_the_eager_ones(generated: Path) -> None:
    cat = Catalog.load(generated)
    assert isinstance(cat.adapters, CompiledAdapters)
    raw = json.loads((generated / "catalog.json").read_bytes())["adapters"]
    ids = [a["id"] for a in raw]
    assert sorted(cat.adapters) == sorted(ids) and len(cat.adapters) == len(ids)
    assert ids[0] in cat.adapters and "no_such_adapter" not in cat.adapters
    assert cat.adapters.validated() == 0
    first = cat.adapters[ids[0]]
    assert first == Manifest.model_validate(raw[0]) and cat.adapters[ids[0]] is first
    assert cat.adapters.validated() == 1
    assert cat.adapters.get("no_such_adapter") is None
    with pytest.raises(CatalogError):
        cat.get("no_such_adapter")


def test_locate_providers_validate_only_locate_adapters(generated: Path) -> None:
    cat = Catalog.load(generated)
    eager = Catalog(cat.root, cat.release_id, {k: Manifest.model_validate(v) for k, v in cat.adapters._raw.items()})
    assert cat.locate_providers == eager.locate_providers and cat.locate_providers
    n_locate = sum(1 for a in cat.adapters._raw.values() if a["primitive"] == "locate")
    assert cat.adapters.validated() == n_locate < len(cat.adapters)


def test_rerank_facts_are_lazy_and_the_same(generated: Path) -> None:
    from ummaya.runtime.plan.openai_tools import tool_for
    from ummaya.runtime.retrieve.rerank import catalog_facts

    cat = Catalog.load(generated)
    facts = rerank_facts(cat)
    some = sorted(cat.adapters)[3]
    assert some in facts and "no_such_adapter" not in facts and len(facts) == len(cat.adapters)
    one = facts[some]
    assert cat.adapters.validated() == 1
    assert dict(facts) == catalog_facts(cat.adapters.values(), tool_for)
    assert facts[some] is one


def test_an_adapter_that_does_not_validate_is_named_when_read(generated: Path, tmp_path: Path) -> None:
    raw = json.loads((generated / "catalog.json").read_bytes())
    broken = raw["adapters"][0]["id"]
    raw["adapters"][0]["primitive"] = "teleport"
    folder = tmp_path / "generated"
    shutil.copytree(generated / "understand", folder / "understand")
    (folder / "catalog.json").write_text(json.dumps(raw), encoding="utf-8")
    cat = Catalog.load(folder)
    assert cat.adapters[raw["adapters"][1]["id"]].id == raw["adapters"][1]["id"]
    with pytest.raises(CatalogError, match=broken):
        cat.adapters[broken]
