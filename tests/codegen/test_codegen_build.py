"""The build's outputs: reproducible bytes, a no-op rebuild, per-adapter reuse, and artifacts the
runtime can load."""

from __future__ import annotations

import json
import os

import pytest

from ummaya.codegen import builder as b
from ummaya.codegen.emit_cache import Cache
from ummaya.codegen.emit_lock import release_id
from ummaya.runtime.catalog import Catalog

from tests.codegen.project import KAKAO, NMC, edit, make_project, outputs, run


def test_same_inputs_same_bytes_in_two_folders(tmp_path):
    # Two separate folders and two separate cold caches: nothing may depend on where or when.
    roots = [make_project(tmp_path / name) for name in ("one", "two")]
    for i, root in enumerate(roots):
        result = b.build(root, cache=Cache(tmp_path / f"cache{i}"))
        assert result.plan.ok, result.plan.problems
    first, second = outputs(roots[0]), outputs(roots[1])
    assert first == second
    assert "generated/catalog.json" in first and "llms/llms.txt" in first
    for path, data in first.items():
        text = data.decode("utf-8", errors="replace")
        assert "\r\n" not in text, path
        assert "timestamp" not in text.lower(), path


def test_warm_cache_gives_the_same_bytes_as_cold(built, tmp_path):
    before = outputs(built)
    result = b.build(built, force=True)  # session cache is warm by now
    assert result.plan.ok
    assert outputs(built) == before


def test_noop_rebuild_writes_nothing(built):
    # Its speed (target ≤ 1 s) is a figure of bench/build.py, not an assertion here.
    catalog = built / "generated" / "catalog.json"
    mtime = catalog.stat().st_mtime_ns
    result = run("build", "--root", str(built))
    assert result.exit_code == 0
    assert result.stdout.startswith("up to date: release ")
    assert catalog.stat().st_mtime_ns == mtime


def test_a_damaged_output_is_not_a_noop(built):
    (built / "llms" / "llms.txt").write_text("tampered\n")
    result = run("build", "--root", str(built), "-q")
    assert result.stdout.startswith("built release ")
    assert not (built / "llms" / "llms.txt").read_text().startswith("tampered")


def test_editing_one_schema_regenerates_only_that_adapters_models(built):
    messages: list[str] = []
    edit(built / NMC, "          hospital_type: {type: [string, \"null\"]}\n", "          hospital_type: {type: [string, \"null\"]}\n          level: {type: [string, \"null\"]}\n")
    result = b.build(built, progress=messages.append)
    assert result.plan.ok, result.plan.problems
    assert any("datamodel-code-generator over 2 schemas (2 adapters cached)" in m for m in messages), messages
    model = (built / "generated/models/nmc_emergency_rooms_output.py").read_text()
    assert "level: str | None = None" in model


def test_a_summary_edit_reuses_every_model(built):
    messages: list[str] = []
    edit(built / KAKAO, "en: Find a place by name", "en: Find a place by its name")
    result = b.build(built, progress=messages.append)
    assert result.plan.ok
    assert not any("datamodel-code-generator" in m for m in messages), messages


def test_catalog_loads_with_profiles_merged(built):
    catalog = Catalog.load(built / "generated")
    assert catalog.ids == ["gov24_move_in_report", "kakao_keyword_search", "nmc_emergency_rooms"]
    nmc = catalog.get("nmc_emergency_rooms")
    # From the data_go_kr profile, not from the manifest itself.
    assert nmc.upstream.base_url == "https://apis.data.go.kr"
    assert nmc.upstream.auth.param == "serviceKey"
    assert nmc.upstream.envelope.kind == "data_go_kr"
    for fx in nmc.fixtures:
        src = built / "registry/nmc/fixtures/nmc_emergency_rooms" / fx.response
        assert catalog.fixture_path(nmc.id, fx.response).read_bytes() == src.read_bytes()


def test_release_id_is_the_hash_of_every_input(built):
    lock = json.loads((built / "generated/registry.lock").read_bytes())
    assert lock["release_id"] == release_id(lock["inputs"])
    assert json.loads((built / "generated/catalog.json").read_bytes())["release_id"] == lock["release_id"]
    assert "registry/nmc/fixtures/nmc_emergency_rooms/busan_saha_multi.xml" in lock["inputs"]
    # One byte of one fixture body changes the release.
    body = built / "registry/nmc/fixtures/nmc_emergency_rooms/key_not_registered.xml"
    body.write_bytes(body.read_bytes() + b"\n")
    plan = b.plan_build(built)
    assert plan.ok and plan.release_id != lock["release_id"]


def test_lock_summarises_each_interface(built):
    lock = json.loads((built / "generated/registry.lock").read_bytes())
    nmc = lock["adapters"]["nmc_emergency_rooms"]
    assert nmc["input_required"] == ["latitude", "longitude"]
    assert nmc["input_properties"] == ["latitude", "limit", "longitude"]
    assert "items[].hospital_id" in nmc["output_fields"] and "total_count" in nmc["output_fields"]
    assert (nmc["primitive"], nmc["tier"], nmc["version"]) == ("find", "live", "1.0.0")
    assert set(lock["outputs"]) == set(outputs(built)) - {"generated/registry.lock"}


def test_preserved_index_cache_survives_the_swap(built):
    keep = built / "generated/index/whoosh/abc/segment.seg"
    keep.parent.mkdir(parents=True)
    keep.write_bytes(b"binary")
    result = b.build(built, force=True)
    assert result.plan.ok
    assert keep.read_bytes() == b"binary"
    assert "generated/index/whoosh/abc/segment.seg" not in b.drift(built, result.plan.outputs).removed


def test_manifest_schema_is_published(built):
    schema = json.loads((built / "generated/manifest.schema.json").read_bytes())
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert "fixtures" in schema["properties"]


def test_a_changed_fixture_body_is_parsed_again_not_served_from_cache(built):
    from ummaya.codegen.link import load_parser

    if load_parser()[0] is None:
        import pytest

        pytest.skip("ummaya.runtime.dispatch.parse_fixture not available")
    body = built / "registry/nmc/fixtures/nmc_emergency_rooms/busan_saha_multi.xml"
    text = body.read_text(encoding="utf-8")
    first_name = text.split("<dutyName>", 1)[1].split("</dutyName>", 1)[0]
    body.write_text(text.replace(f"<dutyName>{first_name}</dutyName>", "<dutyName>다른병원</dutyName>", 1), encoding="utf-8")
    result = run("build", "--root", str(built), "-q")
    assert result.exit_code == 1
    assert f"fixtures.0 (busan_saha_multi): items[0].name: parser output has '다른병원', fixture expects '{first_name}'" in result.stderr


def test_inline_and_worker_builds_write_the_same_bytes(built, monkeypatch):
    before = outputs(built)
    monkeypatch.setenv("UMMAYA_BUILD_WORKERS", "0")
    result = b.build(built, force=True, cache=Cache(built.parent / "fresh-cache"))
    assert result.plan.ok
    assert outputs(built) == before


KIWI_THEN_BUILD = """
import sys
from pathlib import Path
from ummaya.model.analysis import kiwi
kiwi().tokenize("동아대 근처 응급실 알려줘")  # Kiwi's threads now exist in this process
from ummaya.codegen.builder import build
from ummaya.codegen.emit_cache import Cache
result = build(Path(sys.argv[1]), force=True, cache=Cache(Path(sys.argv[2])))
print("built", result.plan.ok)
"""


def test_a_build_in_a_process_that_already_used_kiwi_finishes(project, tmp_path):
    # A cold cache, so the index and models workers really start. With a forked worker this hung
    # forever (the child waited on Kiwi locks whose threads did not exist in it).
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "UMMAYA_BUILD_WORKERS"}
    done = subprocess.run([sys.executable, "-c", KIWI_THEN_BUILD, str(project), str(tmp_path / "cold-cache")], capture_output=True, text=True, timeout=180, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "built True"
    assert (project / "generated/index/documents.json").is_file()


def test_the_build_never_forks_this_process(project, tmp_path, monkeypatch):
    calls = []
    real_fork = os.fork
    monkeypatch.setattr(os, "fork", lambda: calls.append("fork") or real_fork())
    result = b.build(project, force=True, cache=Cache(tmp_path / "cold-cache"))
    assert result.plan.ok
    assert calls == []


def test_a_failing_worker_reports_its_traceback():
    job = b._Background().submit(int, "not a number")
    with pytest.raises(RuntimeError, match="(?s)build worker failed:.*ValueError: invalid literal"):
        job.result()
