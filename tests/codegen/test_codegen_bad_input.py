"""Bad input: `ummaya build` exits non-zero, prints every problem as `path:line: message`, and
leaves generated/ and llms/ exactly as they were."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.codegen.project import GOV24, KAKAO, NMC, edit, line_of, outputs, run


def build_fails(root: Path) -> list[str]:
    before = outputs(root)
    result = run("build", "--root", str(root), "-q")
    assert result.exit_code == 1, result.output
    assert outputs(root) == before, "a failed build must not touch generated/ or llms/"
    assert "left untouched" in result.stderr
    return [line for line in result.stderr.splitlines() if line.startswith("registry/")]


def test_yaml_syntax_error(built):
    path = built / NMC
    edit(path, "domain: health", "domain: health: emergency")
    problems = build_fails(built)
    line = line_of(path, "domain: health: emergency")
    assert problems == [f"{NMC}:{line}: YAML syntax error: mapping values are not allowed here"]


def test_unknown_key(built):
    path = built / NMC
    edit(path, "domain: health\n", "domain: health\ncolour: blue\n")
    problems = build_fails(built)
    assert problems == [f"{NMC}:{line_of(path, 'colour: blue')}: colour: unknown key 'colour'"]


def test_wrong_type(built):
    path = built / KAKAO
    edit(path, "primitive: locate", "primitive: [locate]")
    problems = build_fails(built)
    line = line_of(path, "primitive: [locate]")
    assert len(problems) == 1 and problems[0].startswith(f"{KAKAO}:{line}: primitive: "), problems


def test_duplicate_id_reported_at_both_files(built):
    other = built / "registry" / "other" / "nmc_emergency_rooms.yaml"
    other.parent.mkdir()
    shutil.copy(built / NMC, other)
    shutil.copytree(built / "registry/nmc/fixtures", other.parent / "fixtures")
    problems = build_fails(built)
    rel_other = "registry/other/nmc_emergency_rooms.yaml"
    id_line = line_of(built / NMC, "id: nmc_emergency_rooms")
    assert any(p.startswith(f"{NMC}:{id_line}: duplicate adapter id 'nmc_emergency_rooms'") for p in problems), problems
    assert any(p.startswith(f"{rel_other}:{id_line}: duplicate adapter id 'nmc_emergency_rooms'") for p in problems), problems


def test_missing_fixture_file(built):
    (built / "registry/nmc/fixtures/nmc_emergency_rooms/busan_saha_multi.xml").unlink()
    problems = build_fails(built)
    line = line_of(built / NMC, "response: busan_saha_multi.xml")
    assert problems == [
        f"{NMC}:{line}: fixtures.0 (busan_saha_multi): fixture file not found: "
        "registry/nmc/fixtures/nmc_emergency_rooms/busan_saha_multi.xml"
    ]


def test_fixture_failing_its_schema(built):
    path = built / KAKAO
    # A request the input schema refuses (query is required) and an expected output of the wrong type.
    edit(path, "request: {query: 부산시청}", "request: {place: 부산시청}")
    edit(path, "      total_count: 0\n", "      total_count: none\n")
    problems = build_fails(built)
    req_line = line_of(path, "request: {place: 부산시청}")
    total_line = line_of(path, "total_count: none")
    assert f"{KAKAO}:{req_line}: fixtures.1 (busan_city_hall_single): request does not match input_schema at (root): 'query' is a required property" in problems
    assert f"{KAKAO}:{total_line}: fixtures.2 (no_match): expected does not match output_schema at total_count: 'none' is not of type 'integer'" in problems


def test_requires_a_slot_nothing_provides(built):
    # Without the locate adapter's `provides`, nothing fills the coordinates the ER finder needs.
    edit(built / KAKAO, "provides: [coordinates, latitude, longitude, place]\n", "")
    problems = build_fails(built)
    line = line_of(built / NMC, "requires: [coordinates]")
    assert problems == [
        f"{NMC}:{line}: requires: no adapter provides slot 'coordinates' and the planner cannot take it from the request text"
    ]


def test_negative_example_naming_no_adapter(built):
    edit(built / GOV24, "belongs_to: null", "belongs_to: juso_postcode")
    problems = build_fails(built)
    line = line_of(built / GOV24, "belongs_to: juso_postcode")
    assert problems == [f"{GOV24}:{line}: negative_examples.0.belongs_to: no adapter with id 'juso_postcode'"]


def test_unknown_profile(built):
    edit(built / NMC, "profile: data_go_kr", "profile: data_go_kr_v2")
    problems = build_fails(built)
    line = line_of(built / NMC, "profile: data_go_kr_v2")
    assert problems == [f"{NMC}:{line}: upstream.profile: unknown profile 'data_go_kr_v2' (known: data_go_kr, kakao)"]


def test_every_problem_is_listed_sorted(built):
    edit(built / NMC, "domain: health\n", "domain: health\ncolour: blue\n")
    edit(built / NMC, "version: 1.0.0", "version: one")
    (built / "registry/kakao/fixtures/kakao_keyword_search/no_match.json").unlink()
    edit(built / GOV24, "belongs_to: null", "belongs_to: nowhere")
    problems = build_fails(built)
    expected = [
        f"{GOV24}:{line_of(built / GOV24, 'belongs_to: nowhere')}:",
        f"{KAKAO}:{line_of(built / KAKAO, 'response: no_match.json')}:",
        f"{NMC}:{line_of(built / NMC, 'version: one')}:",
        f"{NMC}:{line_of(built / NMC, 'colour: blue')}:",
    ]
    assert len(problems) == 4, problems
    for want in expected:
        assert any(p.startswith(want) for p in problems), (want, problems)
    assert problems == sorted(problems, key=lambda p: (p.split(":")[0], int(p.split(":")[1])))


@pytest.mark.parametrize("flag", [[], ["--check"]])
def test_build_in_a_folder_without_registry(tmp_path, flag):
    result = run("build", "--root", str(tmp_path), *flag)
    assert result.exit_code == 2
    assert "no registry/ folder" in result.stderr
