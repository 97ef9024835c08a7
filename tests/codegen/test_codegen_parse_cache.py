"""The parse cache: unchanged files are not re-parsed, and nothing about errors changes."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ummaya.model import documents as loader  # the YAML parser moved to the model layer
from ummaya.codegen.loader import ParseCache, load_registry, manifest_paths

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def registry_copy(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "registry", tmp_path / "registry")
    return tmp_path


def _count_parses(monkeypatch) -> list[str]:
    parsed: list[str] = []
    real = loader._parse_text

    def counting(text: str):
        parsed.append(text[:40])
        return real(text)

    monkeypatch.setattr(loader, "_parse_text", counting)
    return parsed


def test_unchanged_files_come_from_the_cache_exactly(registry_copy, tmp_path, monkeypatch):
    cache = ParseCache(tmp_path / "parse")
    first, problems = load_registry(registry_copy, cache)
    assert not problems and len(first.manifests) == len(manifest_paths(registry_copy)) > 0
    parsed = _count_parses(monkeypatch)
    second, problems = load_registry(registry_copy, cache)
    assert not problems and parsed == []  # nothing re-parsed
    for a, b in zip(first.manifests, second.manifests):
        assert a.manifest == b.manifest
        assert a.source.data == b.source.data and a.source.lines == b.source.lines
    # one edit: only that file is parsed again, and the edit is seen
    path = next((registry_copy / "registry").rglob("kakao_keyword_search.yaml"))
    path.write_text(path.read_text(encoding="utf-8").replace("version: 1.0.0", "version: 1.0.1", 1), encoding="utf-8")
    third, _ = load_registry(registry_copy, cache)
    assert len(parsed) == 1
    assert third.by_id()["kakao_keyword_search"].manifest.version == "1.0.1"


def test_errors_are_never_served_from_the_cache(registry_copy, tmp_path):
    cache = ParseCache(tmp_path / "parse")
    path = next((registry_copy / "registry").rglob("nmc_pharmacies.yaml"))
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("tier: live", "tier: live\n  bad: [", 1), encoding="utf-8")
    for _ in range(2):  # the same message and line, parse after parse
        _, problems = load_registry(registry_copy, cache)
        assert [p.path.endswith("nmc_pharmacies.yaml") and "YAML syntax error" in p.message for p in problems] == [True]
    # a document that parses but does not validate keeps its exact line from the cached map
    path.write_text(text.replace("tier: live", "tier: sometimes", 1), encoding="utf-8")
    lines = {str(p) for p in load_registry(registry_copy, cache)[1]}
    assert lines == {str(p) for p in load_registry(registry_copy, cache)[1]} and len(lines) == 1
    want = text.splitlines().index("tier: live") + 1
    assert f"nmc_pharmacies.yaml:{want}:" in next(iter(lines))


def test_an_unreadable_cache_entry_is_a_miss(tmp_path):
    cache = ParseCache(tmp_path)
    key = cache.key(b"x: 1\n")
    cache._path(key).parent.mkdir(parents=True)
    cache._path(key).write_bytes(b"not marshal")
    assert cache.get(key) is None
