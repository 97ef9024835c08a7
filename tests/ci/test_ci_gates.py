"""ummaya check: drift, coverage and scenario gates; ummaya new adapter; ummaya adapters."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest

from ummaya.ci.coverage import coverage_gaps
from ummaya.ci.scenario_gate import scenario_coverage, scenario_failures
from ummaya.codegen.loader import load_registry
from ummaya.runtime.scenarios import load_scenarios, run_scenario, scenario_engine
from ummaya.runtime.store import open_store

from tests.codegen.project import GOV24, KAKAO, NMC, copy_project, edit, line_of, run

REPO = Path(__file__).resolve().parents[2]


def test_check_passes_on_a_fresh_build(built):
    result = run("check", "--root", str(built))
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("check passed (drift, coverage, placeholders, scenarios)")


def test_editing_a_manifest_without_rebuilding_is_drift(built):
    edit(built / NMC, "en: Emergency rooms near a location", "en: Emergency rooms close to a location")
    result = run("check", "--root", str(built))
    assert result.exit_code == 1
    assert "drift:" in result.stderr
    for path in ("generated/catalog.json", "generated/registry.lock", "llms/adapters/nmc_emergency_rooms.md", "llms/llms.txt"):
        assert f"    {path}" in result.stderr, path
    assert "check failed: drift" in result.stderr
    # And the same through `ummaya build --check`, which also leaves the tree alone.
    result = run("build", "--check", "--root", str(built), "-q")
    assert result.exit_code == 1
    assert "changed: " in result.stderr and "llms/adapters/nmc_emergency_rooms.md" in result.stderr
    assert "Emergency rooms near a location" in (built / "llms/adapters/nmc_emergency_rooms.md").read_text()


def test_drift_names_missing_and_stale_files(built):
    (built / "llms/adapters/kakao_keyword_search.md").unlink()
    (built / "generated/models/stray.py").write_text("x = 1\n")
    result = run("build", "--check", "--root", str(built), "-q")
    assert result.exit_code == 1
    assert "missing (build would add): 1\n  llms/adapters/kakao_keyword_search.md" in result.stderr
    assert "stale (build would remove): 1\n  generated/models/stray.py" in result.stderr
    assert run("build", "--root", str(built), "-q").exit_code == 0
    assert run("build", "--check", "--root", str(built), "-q").exit_code == 0
    assert not (built / "generated/models/stray.py").exists()


def test_coverage_gates_report_each_gap_with_its_line(project):
    edit(project / NMC, "    - 친구가 갑자기 쓰러졌어 병원 어디로 가야 해\n", "")
    edit(project / NMC, "    - 지금 문 연 응급실 어디 있어?\n", "")
    edit(project / NMC, "    - 아이가 열이 너무 나는데 가까운 응급실\n", "")
    edit(project / GOV24, "  en: [move-in report, moving house, change of address, Gov24]", "  en: []")
    # A live adapter down to one fixture.
    text = (project / KAKAO).read_text()
    (project / KAKAO).write_text(text[: text.index("  - name: busan_city_hall_single")])
    registry, problems = load_registry(project)
    assert problems == []
    gaps = [str(g) for g in coverage_gaps(registry, parsed=None)]
    assert f"{NMC}:{line_of(project / NMC, '  ko:', line_of(project / NMC, 'examples:'))}: nmc_emergency_rooms: examples.ko has 1, needs at least 3" in gaps
    assert f"{GOV24}:{line_of(project / GOV24, '  en: []')}: gov24_move_in_report: search_hints.en is empty (hints must be bilingual)" in gaps
    assert f"{KAKAO}:{line_of(project / KAKAO, 'fixtures:')}: kakao_keyword_search: a live adapter needs at least 2 fixtures (a normal response and an edge), has 1" in gaps
    assert len(gaps) == 3, gaps
    result = run("check", "--root", str(project))
    assert result.exit_code == 1 and "coverage: 3 gap(s)" in result.stderr


def test_coverage_requires_every_fixture_to_have_parsed(built):
    registry, _ = load_registry(built)
    parsed = {"kakao_keyword_search": ["donga_seunghak_multi", "busan_city_hall_single", "no_match"], "nmc_emergency_rooms": ["busan_saha_multi", "key_not_registered"]}
    gaps = [str(g) for g in coverage_gaps(registry, parsed)]
    line = line_of(built / KAKAO, "- name: key_missing_401")
    assert gaps == [f"{KAKAO}:{line}: kakao_keyword_search: fixture 'key_missing_401' does not parse through the adapter's parser to its expected result"]


SCENARIOS = """\
scenarios:
  - id: er_near_campus
    request: 동아대 승학캠퍼스 근처 응급실 알려줘
    expect:
      calls: [kakao_keyword_search, nmc_emergency_rooms]
      stop_reason: completed
      answer_contains: [응급]
  - id: move_in
    request: 부산 사하구 하단동으로 이사했는데 전입신고 어떻게 해?
    language: ko
    expect: {calls: [gov24_move_in_reportt], stop_reason: handoff_required, answer_contains: []}
"""


@pytest.fixture(scope="module")
def speaking_built(tmp_path_factory, pristine):
    """The small registry with the real registry's shared vocabulary and slots, built once: the
    offline planner reads places only through that vocabulary, so `ummaya check` can run
    scenarios here the way it runs the real ones."""
    root = copy_project(pristine, tmp_path_factory.mktemp("speaking") / "proj")
    for shared in ("_vocab", "_intents", "_emergency", "_channels", "_slots"):
        shutil.rmtree(root / "registry" / shared, ignore_errors=True)
        shutil.copytree(REPO / "registry" / shared, root / "registry" / shared)
    result = run("build", "--root", str(root), "-q")
    assert result.exit_code == 0, result.output
    return root


@pytest.fixture
def speaking(tmp_path, speaking_built):
    return copy_project(speaking_built, tmp_path / "proj")


def test_scenario_coverage_hook(speaking):
    built = speaking
    assert scenario_coverage(built) == []  # no scenario files yet: nothing to say
    folder = built / "registry/scenarios"
    folder.mkdir()
    (folder / "core.yaml").write_text(SCENARIOS, encoding="utf-8")
    problems = [str(p) for p in scenario_coverage(built)]
    # An invalid file is reported first and alone: coverage computed from it would be noise.
    assert problems == [
        f"registry/scenarios/core.yaml:{line_of(folder / 'core.yaml', 'gov24_move_in_reportt')}: scenarios.1.expect.calls.0: unknown adapter 'gov24_move_in_reportt' (not in the registry)",
    ]
    (folder / "core.yaml").write_text(SCENARIOS.replace("gov24_move_in_reportt", "kakao_keyword_search"), encoding="utf-8")
    assert [str(p) for p in scenario_coverage(built)] == [
        f"{GOV24}:{line_of(built / GOV24, 'id: gov24_move_in_report')}: gov24_move_in_report: no scenario in registry/scenarios/ expects a call to this adapter",
    ]
    result = run("check", "--root", str(built))
    # The uncovered adapter, and the scenario that now expects the wrong call, run and failing.
    move_in = line_of(folder / "core.yaml", "id: move_in")
    assert result.exit_code == 1 and "scenarios: 2 problem(s)" in result.stderr, result.stderr
    assert f"  registry/scenarios/core.yaml:{move_in}: move_in: calls ['gov24_move_in_report'] != expected ['kakao_keyword_search']" in result.stderr
    (folder / "core.yaml").write_text(SCENARIOS.replace("reportt", "report"), encoding="utf-8")
    assert scenario_coverage(built) == []
    # Scenarios are not build inputs: adding them does not make the build drift — and both pass.
    result = run("check", "--root", str(built))
    assert result.exit_code == 0, result.stderr


def test_a_scenario_the_strict_check_rejects_fails_ummaya_check(speaking):
    """The gate runs the scenarios through the very comparison the tests use
    (runtime.scenarios.check via run_scenario): whatever that rejects, `ummaya check` fails on,
    with the same words. Each tampering below keeps the file valid and every adapter covered."""
    folder = speaking / "registry/scenarios"
    folder.mkdir()
    tampered = (SCENARIOS.replace("reportt", "report")
                # the right calls in the wrong order: a set comparison would pass this
                .replace("calls: [kakao_keyword_search, nmc_emergency_rooms]", "calls: [nmc_emergency_rooms, kakao_keyword_search]")
                # a fact the answer does not state, and the wrong language
                .replace("answer_contains: []", "answer_contains: [등기소]").replace("language: ko", "language: en"))
    (folder / "core.yaml").write_text(tampered, encoding="utf-8")
    store = open_store(f"sqlite:///{speaking / 'strict.sqlite3'}")
    try:
        engine = scenario_engine(speaking / "generated", store=store)
        strict = {sc.id: asyncio.run(run_scenario(engine, sc)).problems for _, sc in load_scenarios(speaking)}
    finally:
        store.close()
    assert strict["er_near_campus"] == ["calls ['kakao_keyword_search', 'nmc_emergency_rooms'] != expected "
                                        "['nmc_emergency_rooms', 'kakao_keyword_search']"]
    assert sorted(strict["move_in"]) == ["answer does not state '등기소'", "language 'ko' != expected 'en'"]
    # The gate's worker processes (ci/scenario_gate.py; traces off) give the verdict run here, word
    # for word and in order, and so does running them in this process.
    scenarios = load_scenarios(speaking)
    here = scenario_failures(speaking, scenarios, jobs=1)
    assert scenario_failures(speaking, scenarios, jobs=2) == here
    assert [p.message for p in here] == [f"{i}: {p}" for i, ps in strict.items() for p in ps]
    result = run("check", "--root", str(speaking))
    assert result.exit_code == 1 and "check failed: scenarios" in result.stderr, result.stderr
    for scenario_id, problems in strict.items():
        line = line_of(folder / "core.yaml", f"id: {scenario_id}")
        for problem in problems:
            assert f"  registry/scenarios/core.yaml:{line}: {scenario_id}: {problem}\n" in result.stderr, problem
    assert "scenarios: 3 problem(s)" in result.stderr  # those, and nothing else


def test_check_rejects_a_misspelt_stop_reason_with_its_line(built):
    folder = built / "registry/scenarios"
    folder.mkdir()
    (folder / "core.yaml").write_text(SCENARIOS.replace("reportt", "report").replace("stop_reason: completed", "stop_reason: complete"), encoding="utf-8")
    result = run("check", "--root", str(built))
    assert result.exit_code == 1
    line = line_of(folder / "core.yaml", "stop_reason: complete")
    assert f"  registry/scenarios/core.yaml:{line}: scenarios.0.expect.stop_reason: unknown stop_reason 'complete' (one of: completed," in result.stderr
    assert "check failed: scenarios" in result.stderr


def test_new_adapter_scaffold_loads_and_builds(built):
    result = run("new", "adapter", "nmc_trauma_centres", "--domain", "health", "--root", str(built))
    assert result.exit_code == 0, result.output
    assert "created registry/nmc/nmc_trauma_centres.yaml" in result.stdout
    assert (built / "registry/nmc/fixtures/nmc_trauma_centres/normal_multi.xml").is_file()
    result = run("new", "adapter", "mois_seal_certificate", "--primitive", "send", "--agency", "MOIS", "--domain", "administration", "--root", str(built))
    assert result.exit_code == 0, result.output
    registry, problems = load_registry(built)
    assert problems == []
    assert {"nmc_trauma_centres", "mois_seal_certificate"} <= set(registry.by_id())
    result = run("build", "--root", str(built), "-q")
    assert result.exit_code == 0, result.output
    assert (built / "generated/clients/nmc_trauma_centres.py").is_file()


def test_new_adapter_refuses_bad_and_existing_ids(built):
    for bad in ("NmcThing", "nmc-thing", "1nmc", "nmc_emergency_rooms"):
        result = run("new", "adapter", bad, "--domain", "health", "--root", str(built))
        assert result.exit_code == 2, bad
        assert "ummaya new adapter:" in result.stderr
    assert not (built / "registry/nmc/NmcThing.yaml").exists()


def test_adapters_lists_the_catalog(built):
    result = run("adapters", "--json", "--root", str(built))
    rows = json.loads(result.stdout)["adapters"]
    assert [(r["adapter_id"], r["primitive"], r["tier"], r["agency"]) for r in rows] == [
        ("gov24_move_in_report", "send", "handoff", "MOIS"),
        ("kakao_keyword_search", "locate", "live", "KAKAO"),
        ("nmc_emergency_rooms", "find", "live", "NMC"),
    ]
    table = run("adapters", "--root", str(built)).stdout
    assert "nmc_emergency_rooms" in table and "3 adapters" in table
