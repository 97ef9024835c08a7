"""Issue 12's link rules: mappings and fixtures keep to the documented response; every fixture
declares its provenance; fields the service masks are masked in fixtures. Each problem located."""

from __future__ import annotations

from tests.codegen.project import NMC, edit, line_of, run
from tests.codegen.test_codegen_bad_input import build_fails

GUIDE = "국립중앙의료원 전국 응급의료기관 정보 조회 서비스 OpenAPI 활용가이드 (getEgytLcinfoInqire) V4"
BODY = "registry/nmc/fixtures/nmc_emergency_rooms/busan_saha_multi.xml"


def test_mapping_a_field_the_operation_does_not_return_is_a_located_error(built):
    path = built / NMC
    edit(path, "    hospital_type: dutyDivName\n", "    hospital_type: dutyEmclsName\n")
    problems = build_fails(built)
    line = line_of(path, "hospital_type: dutyEmclsName")
    assert f"{NMC}:{line}: upstream.fields.hospital_type: 'dutyEmclsName' is not in the documented response of this operation ({GUIDE})" in problems


def test_a_fixture_carrying_an_undocumented_field_is_a_located_error(built):
    edit(built / BODY, "<dutyDivName>종합병원</dutyDivName>", "<dutyDivName>종합병원</dutyDivName><dutyEmclsName>지역응급의료센터</dutyEmclsName>")
    problems = build_fails(built)
    line = line_of(built / NMC, "response: busan_saha_multi.xml")
    assert problems == [
        f"{NMC}:{line}: fixtures.0 (busan_saha_multi): body has 'dutyEmclsName' (record 0) which the documented response ({GUIDE}) lacks"
    ]


def test_a_live_adapter_without_documented_response_fields_is_a_located_error(built):
    path = built / NMC
    text = path.read_text(encoding="utf-8")
    start = text.index("  response_fields:\n")
    end = text.index("requires:", start)
    path.write_text(text[:start] + text[end:], encoding="utf-8")
    problems = build_fails(built)
    assert problems == [
        f"{NMC}:{line_of(path, 'upstream:')}: upstream.response_fields: a live adapter declares its operation's documented response fields (guide: {{name, version}}, record: [...])"
    ]


def test_a_fixture_without_provenance_is_a_located_error(built):
    path = built / NMC
    edit(path, "  - name: busan_saha_multi\n    source: synthetic\n", "  - name: busan_saha_multi\n")
    problems = build_fails(built)
    line = line_of(path, "- name: busan_saha_multi")
    assert problems == [
        f"{NMC}:{line}: fixtures.0 (busan_saha_multi): no 'source' — declare recorded (with recorded_on), documented (with guide: {{name, version}}) or synthetic"
    ]


def test_documented_needs_a_guide_and_recorded_needs_a_date(built):
    path = built / NMC
    edit(path, "  - name: busan_saha_multi\n    source: synthetic\n", "  - name: busan_saha_multi\n    source: recorded\n")
    problems = build_fails(built)
    assert any("recorded fixture carries its recording date" in p for p in problems), problems


def test_a_field_the_service_masks_must_be_masked_in_fixtures(built):
    path = built / NMC
    edit(path, "    record: [cnt,", "    masked: [dutyTel1]\n    record: [cnt,")
    problems = build_fails(built)
    line = line_of(path, "response: busan_saha_multi.xml")
    assert problems == [
        f"{NMC}:{line}: fixtures.0 (busan_saha_multi): 'dutyTel1' (record 0) unmasked — the live service masks it (e.g. 김**, 010********), so must the fixture"
    ]


def test_check_prints_fixture_provenance_per_adapter(built):
    result = run("check", "--root", str(built))
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert "fixture provenance (recorded / documented / synthetic, per adapter):" in lines
    row = next(line for line in lines if line.strip().startswith("nmc_emergency_rooms"))
    assert "documented 1/2 (50%)" in row and "synthetic 1/2 (50%)" in row
    page = (built / "llms/adapters/nmc_emergency_rooms.md").read_text(encoding="utf-8")
    assert "Fixture provenance: documented 1/2 (50%), synthetic 1/2 (50%)" in page
