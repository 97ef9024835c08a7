"""The placeholder gate: an untouched `ummaya new adapter` scaffold builds, but `ummaya check`
fails listing every placeholder with its line and what to fill."""

from __future__ import annotations

from ummaya.ci.placeholders import placeholder_gaps
from ummaya.codegen.loader import load_registry

from tests.codegen.project import NMC, edit, line_of, run

NEW = "registry/nmc/nmc_trauma_centres.yaml"


def test_an_untouched_scaffold_fails_check_with_every_placeholder_located(built):
    assert run("new", "adapter", "nmc_trauma_centres", "--domain", "health", "--root", str(built)).exit_code == 0
    assert run("build", "--root", str(built), "-q").exit_code == 0  # a scaffold builds, to iterate on
    result = run("check", "--root", str(built))
    assert result.exit_code == 1
    assert "check failed:" in result.stderr and "placeholders" in result.stderr.splitlines()[-1]
    lines = [ln.strip() for ln in result.stderr.splitlines() if ln.strip().startswith(NEW)]
    path = built / NEW
    expected = [
        f"{NEW}:{line_of(path, 'ko: TODO 한국어 제목')}: title.ko: scaffold placeholder 'TODO 한국어 제목': fill in the service's title as the agency names it",
        f"{NEW}:{line_of(path, 'name_ko: TODO 기관명')}: agency.name_ko: scaffold placeholder 'TODO 기관명': fill in the agency's code and names (e.g. 국립중앙의료원 / National Medical Center)",
        f"{NEW}:{line_of(path, 'path: /TODO/')}: upstream.path: scaffold placeholder '/TODO/Service/operation': fill in the upstream operation path, parameters and fields from the API documentation",
        f"{NEW}:{line_of(path, 'response: normal_multi.xml')}: fixtures.0 (normal_multi): normal_multi.xml is still the scaffold's sample response: record a real one (`ummaya record`) and its expected output",
    ]
    for want in expected:
        assert want in lines, (want, lines)
    # the TODO-free parts of the scaffold (the gateway error fixture, comments) are not flagged
    assert not [ln for ln in lines if "key_not_registered" in ln]
    assert len(lines) >= 15


def test_example_urls_and_portal_front_pages_are_placeholders(project):
    edit(project / NMC, "https://www.data.go.kr/data/15000563/openapi.do", "https://www.data.go.kr/")
    registry, problems = load_registry(project)
    assert problems == []
    gaps = [str(p) for p in placeholder_gaps(registry)]
    assert gaps == [f"{NMC}:{line_of(project / NMC, 'url: https://www.data.go.kr/')}: citation.url: 'https://www.data.go.kr/' is the portal's front page: cite the data set's own page (e.g. https://www.data.go.kr/data/15000563/openapi.do)"]
    edit(project / NMC, "url: https://www.data.go.kr/", "url: https://example.com/api")
    registry, _ = load_registry(project)
    assert [str(p) for p in placeholder_gaps(registry)] == [f"{NMC}:{line_of(project / NMC, 'url: https://example.com/api')}: citation.url: example URL 'https://example.com/api': fill in the data set's own page, title and legal basis"]


def test_the_real_registry_has_no_placeholders():
    from pathlib import Path

    registry, _ = load_registry(Path(__file__).resolve().parents[2])
    assert placeholder_gaps(registry) == []
