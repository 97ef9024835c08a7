"""The per-adapter build state (codegen/adapter_state.py): a build that reads unchanged adapters
from their state writes exactly what a build from scratch writes, reports exactly its problems,
and does not parse an unchanged manifest at all (issue 23 item 2)."""

from __future__ import annotations

import marshal
import shutil

import pytest

from ummaya.codegen import builder as b
from ummaya.codegen import loader
from ummaya.codegen.emit_cache import Cache

from tests.codegen.project import KAKAO, NMC, edit, outputs


def _cold(root, tmp_path, name):
    """The same registry in another folder, built with an empty cache (no state, no parts)."""
    fresh = tmp_path / name
    fresh.mkdir()
    shutil.copytree(root / "registry", fresh / "registry")
    result = b.build(fresh, cache=Cache(tmp_path / f"{name}-cache"), force=True)
    return result, fresh


@pytest.fixture
def loads(monkeypatch):
    """The ids of the LazyManifests some step had to parse after all."""
    seen: list[str] = []
    original = loader.LazyManifest._load

    def counting(self):
        if self._loaded is None:
            seen.append(self.id)
        return original(self)

    monkeypatch.setattr(loader.LazyManifest, "_load", counting)
    return seen


def _warm(project, cache):
    first = b.build(project, cache=cache)
    assert first.plan.ok, first.plan.problems
    return first


def test_an_edit_parses_only_the_edited_manifest_and_equals_a_cold_build(project, tmp_path, loads):
    cache = Cache(tmp_path / "cache")
    _warm(project, cache)
    edit(project / KAKAO, "  ko: [장소 검색, ", "  ko: [새로 고친 검색어 하나, 장소 검색, ")
    result = b.build(project, cache=cache)
    assert result.plan.ok, result.plan.problems
    lazy = [lm for lm in result.plan.registry.manifests if isinstance(lm, loader.LazyManifest)]
    # Every adapter but the edited one came from its state, and no step needed its manifest.
    assert sorted(lm.id for lm in lazy) == sorted(lm.id for lm in result.plan.registry.manifests if lm.rel != KAKAO)
    assert lazy and loads == []
    cold, fresh = _cold(project, tmp_path, "cold")
    assert cold.plan.ok
    assert outputs(project) == outputs(fresh)
    assert result.plan.parsed == cold.plan.parsed


def test_a_build_from_states_alone_equals_a_cold_build(built, tmp_path, loads):
    cache = Cache(tmp_path / "cache")
    b.build(built, cache=cache, force=True)
    again = b.build(built, cache=cache, force=True)  # every adapter from its state
    assert again.plan.ok
    assert all(isinstance(lm, loader.LazyManifest) for lm in again.plan.registry.manifests) and loads == []
    _, fresh = _cold(built, tmp_path, "cold")
    assert outputs(built) == outputs(fresh)


def test_an_edit_to_shared_registry_data_is_not_served_from_the_states(project, tmp_path, loads):
    cache = Cache(tmp_path / "cache")
    _warm(project, cache)
    # The profile is merged into each adapter using it (catalog, link verdicts): every state's key
    # names the shared registry files, so none is reused.
    edit(project / "registry/_profiles/kakao.yaml", "timeout_s: 5", "timeout_s: 7")
    result = b.build(project, cache=cache)
    assert result.plan.ok, result.plan.problems
    assert not any(isinstance(lm, loader.LazyManifest) for lm in result.plan.registry.manifests)
    assert '"timeout_s": 7' in (project / "generated/catalog.json").read_text(encoding="utf-8")
    _, fresh = _cold(project, tmp_path, "cold")
    assert outputs(project) == outputs(fresh)


def test_a_changed_fixture_body_misses_its_adapters_state(built, tmp_path):
    cache = Cache(tmp_path / "cache")
    b.build(built, cache=cache, force=True)
    body = built / "registry/nmc/fixtures/nmc_emergency_rooms/key_not_registered.xml"
    body.write_bytes(body.read_bytes() + b"\n")
    result = b.build(built, cache=cache)
    assert result.plan.ok, result.plan.problems
    fresh_ids = [lm.id for lm in result.plan.registry.manifests if not isinstance(lm, loader.LazyManifest)]
    assert fresh_ids == ["nmc_emergency_rooms"]
    _, fresh = _cold(built, tmp_path, "cold")
    assert outputs(built) == outputs(fresh)


def test_cross_adapter_problems_come_out_the_same_from_states(built, tmp_path):
    """Removing an adapter another one's negative example names: the survivor's reference is
    checked from its state, with the same message and line as a cold build gives."""
    cache = Cache(tmp_path / "cache")
    b.build(built, cache=cache, force=True)
    (built / NMC).unlink()
    warm = b.plan_build(built, cache=cache)
    cold, _ = _cold(built, tmp_path, "cold")
    assert any("belongs_to: no adapter with id 'nmc_emergency_rooms'" in p.message for p in warm.problems)
    assert warm.problems == cold.plan.problems


def test_a_state_missing_a_field_loads_the_manifest_and_gives_the_same_bytes(built, tmp_path, loads):
    cache = Cache(tmp_path / "cache")
    b.build(built, cache=cache, force=True)
    before = outputs(built)
    # A state written by a build that stopped short (or by an older generator's fields): the step
    # whose field is missing parses the manifest, and the bytes do not change.
    for path in (tmp_path / "cache" / "adapter").rglob("*.marshal"):
        state = marshal.loads(path.read_bytes())
        state.pop("catalog_part", None)
        state.pop("link", None)
        path.write_bytes(marshal.dumps(state))
    again = b.build(built, cache=cache, force=True)
    assert again.plan.ok, again.plan.problems
    assert sorted(loads) == sorted(lm.id for lm in again.plan.registry.manifests)
    assert outputs(built) == before


def test_a_damaged_state_file_is_a_miss(built, tmp_path):
    cache = Cache(tmp_path / "cache")
    b.build(built, cache=cache, force=True)
    before = outputs(built)
    for path in (tmp_path / "cache" / "adapter").rglob("*.marshal"):
        path.write_bytes(b"\x00not marshal")
    again = b.build(built, cache=cache, force=True)
    assert again.plan.ok, again.plan.problems
    assert not any(isinstance(lm, loader.LazyManifest) for lm in again.plan.registry.manifests)
    assert outputs(built) == before
