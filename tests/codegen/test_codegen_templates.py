"""Answer templates are compiled and rendered at build time, in both languages, against every
fixture's expected output; each mistake is a path:line error naming the template."""

from __future__ import annotations

import pytest

from tests.codegen.project import NMC, edit, line_of, run

KO_LOOP = "    {% for h in items[:5] %}{{ loop.index }}. {{ h.name }} ("


def build_errors(project) -> list[str]:
    result = run("build", "--root", str(project), "-q")
    assert result.exit_code == 1, result.output
    return [line.strip() for line in result.stderr.splitlines() if "render." in line]


def test_a_syntax_error_is_located_in_the_file(project):
    edit(project / NMC, KO_LOOP, KO_LOOP.replace("{% for h in items[:5] %}", "{% for h in items[:5] %"))
    errors = build_errors(project)
    line = line_of(project / NMC, "{% for h in items[:5] %{{")
    assert len(errors) == 1, errors
    assert errors[0].startswith(f"{NMC}:{line}: render.ko (answer template of nmc_emergency_rooms): template syntax error:"), errors


def test_an_undefined_variable_is_an_error_naming_the_fixture(project):

    edit(project / NMC, "about {{ '%.1f'|format(h.distance_km) }} km", "about {{ '%.1f'|format(h.distance) }} km")
    errors = build_errors(project)
    line = line_of(project / NMC, "format(h.distance) }} km")
    assert len(errors) == 1, errors
    assert errors[0].startswith(f"{NMC}:{line}: render.en (answer template of nmc_emergency_rooms): fails on fixture 'busan_saha_multi': UndefinedError:"), errors
    assert "distance" in errors[0]


def test_a_top_level_undefined_name_in_both_languages(project):
    edit(project / NMC, "가까운 응급의료기관 {{ items|length }}곳", "가까운 응급의료기관 {{ count }}곳")
    edit(project / NMC, "Nearest emergency institutions ({{ items|length }}", "Nearest emergency institutions ({{ total }}")
    errors = build_errors(project)
    assert [e.split(": ", 2)[1] for e in errors] == ["render.ko (answer template of nmc_emergency_rooms)", "render.en (answer template of nmc_emergency_rooms)"]
    assert "'count' is undefined" in errors[0] and "'total' is undefined" in errors[1]
    assert errors[0].startswith(f"{NMC}:{line_of(project / NMC, '{{ count }}')}:")


def test_the_sandbox_refuses_unsafe_attributes(project):
    edit(project / NMC, "가까운 응급의료기관 {{ items|length }}곳", "가까운 응급의료기관 {{ items.__class__.__mro__ }}곳")
    errors = build_errors(project)
    assert len(errors) == 1 and "SecurityError" in errors[0], errors


def test_runtime_renders_from_the_full_output_not_the_trimmed_summary():
    from ummaya.model.manifest import Bilingual
    from ummaya.runtime import compose
    from ummaya.runtime.plan.protocol import Evidence
    from ummaya.runtime.evidence import MAX_ITEMS, _trim

    full = {"total_count": MAX_ITEMS + 15, "items": [{"name": f"d{i}"} for i in range(MAX_ITEMS + 15)]}
    ev = Evidence("ev1", "c1", "x", "mock", "ok", _trim(full), {"title": "t", "url": "https://x"})
    ev.output = full
    assert len(ev.summary["items"]) < len(full["items"])

    class M:
        id = "x"
        render = Bilingual(ko="공휴일 {{ items|length }}일", en="{{ items|length }} holidays")

    assert compose.render_evidence(M, ev, "ko") == f"공휴일 {MAX_ITEMS + 15}일"
    assert compose.render_evidence(M, ev, "en") == f"{MAX_ITEMS + 15} holidays"


@pytest.mark.parametrize("language", ["ko", "en"])
def test_real_registry_templates_render_every_fixture(language):
    # The committed registry passes its own gate (a regression here is a build error anyway).
    from pathlib import Path

    from ummaya.codegen.loader import load_registry
    from ummaya.model.templates import check_templates

    registry, _ = load_registry(Path(__file__).resolve().parents[2])
    assert [str(p) for lm in registry.manifests for p in check_templates(lm) if f"render.{language}" in p.message] == []


def test_compiled_templates_kept_on_disk_render_the_same_and_errors_are_never_stored(tmp_path) -> None:
    """model.templates.code_cache: the build's compiled answer templates, reused by other processes."""
    from jinja2 import TemplateSyntaxError

    from ummaya.model import templates

    source = "{% for x in items %}{{ x.name }}·{% endfor %}{{ n * 2 }}"
    with templates.code_cache(tmp_path):
        templates._compiled_code(source)  # compiled and stored
        stored = list(tmp_path.rglob("*.code"))
        assert len(stored) == 1
        code = templates._compiled_code(source)  # read back
        again = templates.ENV.template_class.from_code(templates.ENV, code, templates.ENV.make_globals(None), None)
        assert again.render(items=[{"name": "a"}, {"name": "b"}], n=3) == "a·b·6"
        with pytest.raises(TemplateSyntaxError):
            templates._compiled_code("{% for x in %}")
        assert list(tmp_path.rglob("*.code")) == stored
