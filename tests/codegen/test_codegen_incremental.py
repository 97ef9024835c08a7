"""An incremental build (per-adapter caches, only changed files written) writes exactly what a
build from scratch writes (issue 23): these tests compare every output byte for byte."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from ummaya.codegen import builder as b
from ummaya.codegen.emit_cache import Cache
from ummaya.codegen.emit_lock import dumps_indented, item_json, splice_list

from tests.codegen.project import KAKAO, NMC, edit, outputs


def _registry_only(src, dest):
    dest.mkdir(parents=True)
    shutil.copytree(src / "registry", dest / "registry")
    return dest


def _clean_build(root, tmp_path, name):
    """The same registry built in another folder with a cold cache."""
    fresh = _registry_only(root, tmp_path / name)
    result = b.build(fresh, cache=Cache(tmp_path / f"{name}-cache"), force=True)
    assert result.plan.ok, result.plan.problems
    return outputs(fresh)


@pytest.mark.parametrize("index_worker", [False, True], ids=["kiwi-inline", "kiwi-worker"])
def test_editing_one_manifest_then_rebuilding_equals_a_clean_build(project, tmp_path, monkeypatch, index_worker):
    if index_worker:  # the worker path a cold build of many texts takes
        monkeypatch.setattr(b._IndexJob, "INLINE_MAX", -1)
    cache = Cache(tmp_path / "cache")
    first = b.build(project, cache=cache)
    assert first.plan.ok, first.plan.problems
    before = outputs(project)
    untouched = project / "generated" / "manifest.schema.json"
    untouched_mtime = untouched.stat().st_mtime_ns

    # A new Korean search hint (new words for Kiwi) and a new summary in another adapter.
    edit(project / KAKAO, "  ko: [장소 검색, ", "  ko: [새로 고친 검색어 하나, 장소 검색, ")
    edit(project / NMC, "  ko: 위치(위도·경도)에서", "  ko: 고친 요약. 위치(위도·경도)에서")
    second = b.build(project, cache=cache)
    assert second.plan.ok and not second.noop
    incremental = outputs(project)
    assert incremental["generated/catalog.json"] != before["generated/catalog.json"]
    assert "새로 고친 검색어 하나" in incremental["generated/index/documents.json"].decode("utf-8")
    # The per-adapter llms page cache must not serve the old page of the edited adapters.
    kakao_page = f"llms/adapters/{os.path.splitext(os.path.basename(KAKAO))[0]}.md"
    nmc_page = f"llms/adapters/{os.path.splitext(os.path.basename(NMC))[0]}.md"
    assert "새로 고친 검색어 하나" in incremental[kakao_page].decode("utf-8") and incremental[kakao_page] != before[kakao_page]
    assert "고친 요약." in incremental[nmc_page].decode("utf-8")
    assert incremental == _clean_build(project, tmp_path, "clean")
    # Only changed files are written: the schema's bytes did not change, so neither did the file.
    assert untouched.stat().st_mtime_ns == untouched_mtime


def test_removing_an_adapter_removes_its_outputs_as_a_clean_build_does(built, tmp_path):
    cache = Cache(tmp_path / "cache")
    b.build(built, cache=cache, force=True)
    gone = os.path.splitext(os.path.basename(NMC))[0]
    assert (built / "generated" / "fixtures" / gone).is_dir()
    (built / NMC).unlink()
    edit(built / KAKAO, f"belongs_to: {gone}", "belongs_to: null")
    result = b.build(built, cache=cache)
    assert result.plan.ok, result.plan.problems
    assert not (built / "generated" / "fixtures" / gone).exists()  # stale files and their folder gone
    assert outputs(built) == _clean_build(built, tmp_path, "clean")


def test_a_symlinked_folder_inside_generated_is_replaced_not_written_through(built, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    fixtures = built / "generated" / "fixtures"
    victim = next(p for p in fixtures.iterdir() if p.is_dir())
    shutil.rmtree(victim)
    victim.symlink_to(outside, target_is_directory=True)
    result = b.build(built, cache=Cache(tmp_path / "cache"), force=True)
    assert result.plan.ok
    assert list(outside.iterdir()) == []  # nothing written through the link
    assert not victim.is_symlink()
    assert outputs(built) == _clean_build(built, tmp_path, "clean")


def test_a_no_op_after_an_incremental_build(project, tmp_path):
    cache = Cache(tmp_path / "cache")
    b.build(project, cache=cache)
    edit(project / KAKAO, "  ko: [장소 검색, ", "  ko: [한 줄 더, 장소 검색, ")
    assert not b.build(project, cache=cache).noop
    assert b.build(project, cache=cache).noop


TRICKY = [
    {"b": [1, -2, 3.5, 1e300, -0.0, float("nan"), float("inf"), -float("inf")], "a": {}},
    {"s": "줄\n바꿈 \"따옴표\" \\ \t \x00 \u2028 \U0001f600", "e": [], "n": None, "t": True, "f": False},
    [[], [{}], [[1]], ("tuple", 2)],
    "just a string",
    12345678901234567890,
    {"nested": {"z": [{"y": {"x": [None]}}]}},
    {1: "an int key falls back to json.dumps"},
]


@pytest.mark.parametrize("indent", [1, 2, 4])
@pytest.mark.parametrize("obj", TRICKY)
def test_fast_indented_json_matches_the_standard_encoder(obj, indent):
    assert dumps_indented(obj, indent) == json.dumps(obj, ensure_ascii=False, sort_keys=True, indent=indent)


@pytest.mark.parametrize("indent", [1, 2])
@pytest.mark.parametrize("items", [[], [{"id": "a", "v": [1, 2]}], [{"id": "b"}, "x", 3, [], {"k": {"l": []}}]])
def test_spliced_list_matches_encoding_the_whole(items, indent):
    head = {"format": 1, "release_id": "r", "zzz": [1]}
    whole = json.dumps({**head, "adapters": items}, ensure_ascii=False, sort_keys=True, indent=indent)
    assert splice_list(head, "adapters", [item_json(i, indent) for i in items], indent) == whole


def _problems(result):
    return sorted(str(p) for p in result.plan.problems)


@pytest.mark.parametrize("change", ["fixture body", "manifest url", "slot table"])
def test_a_changed_input_invalidates_the_cached_link_checks(built, tmp_path, change):
    """Link's per-adapter verdicts (own checks and fixture checks) are cached by input hashes:
    changing a fixture body, the manifest or shared registry data (the slot table) must give the
    problems a cold build gives."""
    cache = Cache(tmp_path / "cache")
    assert b.build(built, cache=cache, force=True).plan.ok
    if change == "fixture body":
        # A recorded fixture (parsed through the adapter's parser) whose body no longer matches.
        body = built / "registry/kakao/fixtures/kakao_keyword_search/busan_city_hall_single.json"
        body.write_text('{"documents": [], "meta": {"total_count": 0, "pageable_count": 0, "is_end": true}}', encoding="utf-8")
    elif change == "manifest url":
        edit(built / KAKAO, "url: https://developers.kakao.com/docs/latest/ko/local/dev-guide#search-by-keyword",
             "url: https://10.0.0.1/docs")
    else:
        # The slot type the adapters' x-slot names is renamed: their own check_extensions now fails.
        edit(built / "registry/_slots/slots.yaml", "  - name: place\n", "  - name: place_renamed\n")
    cached = b.build(built, cache=cache, force=True)
    cold = b.build(_registry_only(built, tmp_path / "cold"), cache=Cache(tmp_path / "cold-cache"), force=True)
    assert _problems(cached), "the edit should be refused"
    assert _problems(cached) == _problems(cold)
    if change == "slot table":
        assert any(p.startswith(KAKAO) and "undeclared slot type 'place'" in p for p in _problems(cached))
    if change == "fixture body":
        assert any(p.startswith(KAKAO) and "busan_city_hall_single" in p for p in _problems(cached))


def test_the_generator_hash_memo_is_dropped_when_what_it_reads_changes(tmp_path, monkeypatch):
    monkeypatch.setattr(b, "_GENERATOR_MEMO", {})
    fresh = b.generator_hash()
    monkeypatch.setattr(b, "_GENERATOR_MEMO", {})
    assert b.generator_hash(tmp_path) == fresh  # computed, then saved
    memo = tmp_path / "stat" / "generator.json"
    saved = json.loads(memo.read_bytes())
    saved["value"] = "stale"
    saved["at"] = saved["at"] + 10**9  # trusted: clearly newer than every source
    memo.write_text(json.dumps(saved))
    monkeypatch.setattr(b, "_GENERATOR_MEMO", {})
    assert b.generator_hash(tmp_path) == "stale"  # the memo is what answers
    # A library version the bytes depend on changes: the memo no longer matches.
    monkeypatch.setattr(b, "_GENERATOR_MEMO", {})
    monkeypatch.setattr(b, "_version", lambda dist: "99.0")
    assert b.generator_hash(tmp_path) not in ("stale", fresh)
