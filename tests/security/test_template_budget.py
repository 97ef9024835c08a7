"""Issue 19 hole 5 / item 5: an answer template runs under a budget (time, loop steps, value and
output size), in the build and at run time, and going over it is a located error.

Before: nested ``range(100000)`` loops in a render template kept ``ummaya build`` busy past
120 s. The budget is on the mechanism (every loop step, every size-changing operation), so the
probe's variants — loops over the data, doubling strings, huge widths, big powers — stop too.
"""

from __future__ import annotations

import threading

import pytest

from tests.codegen.project import NMC, edit, line_of, make_project, run
from ummaya.model.templates import MAX_OUTPUT, TemplateBudget, render

KO_LOOP = "    {% for h in items[:5] %}{{ loop.index }}. {{ h.name }} ("

HOSTILE = {
    "nested range loops": "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
    "loops over the data": "{% for a in items %}{% for b in items %}{% for c in items %}{% for d in items %}"
                           "{% for e in items %}{% endfor %}{% endfor %}{% endfor %}{% endfor %}{% endfor %}",
    "a recursive loop": "{% for x in [[1]] recursive %}{{ loop([[x]]) }}{% endfor %}",
    "string times a big number": "{{ 'x' * 1000000000 }}",
    "list times a big number": "{{ ([1] * 1000000000)|length }}",
    "a big power": "{% set n = 7 %}{{ n ** 99999999 }}",
    "doubling with ~": "{% set ns = namespace(s='ab') %}{% for i in range(60) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
    "doubling with +": "{% set ns = namespace(s=[1]) %}{% for i in range(60) %}{% set ns.s = ns.s + ns.s %}{% endfor %}",
    "a huge center": "{{ 'x'|center(1000000000) }}",
    "a huge indent": "{{ 'a\nb'|indent(1000000000) }}",
    "a huge %-width": "{{ '%999999999s'|format('x') }}",
    "a huge str.format width": "{{ '{:>999999999}'.format('x') }}",
    "a huge % operator width": "{{ '%0999999999d' % 1 }}",
    "slices by the billion": "{{ items|slice(1000000000)|list|length }}",
    "an endless answer": "{% for i in range(20000) %}0123456789{% endfor %}",
}


def bounded(fn, seconds: float):
    """``fn()`` in a thread, so that a template the budget misses fails the test instead of hanging
    the suite. ``seconds`` is a hang guard far beyond any machine's need, never a speed bound."""
    box: dict = {}
    t = threading.Thread(target=lambda: box.setdefault("v", fn()), daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), f"still running after {seconds} s"
    return box["v"]


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_hostile_template_stops_within_its_budget(name) -> None:
    """Each hostile template is stopped by a budget on the mechanism (steps, sizes, integers,
    recursion), never by the clock: with the time budget switched off (``seconds=inf``) the
    outcome is the same on any machine, however loaded."""
    def go():
        try:
            render(HOSTILE[name], {"items": [{"n": i} for i in range(50)]}, seconds=float("inf"))
        except (TemplateBudget, RecursionError) as exc:
            return exc
        return None

    exc = bounded(go, 120)
    assert exc is not None, f"{name}: rendered"
    assert "rendering took longer" not in str(exc), f"{name}: only the clock stopped it"


def test_the_time_budget_stops_a_render_past_its_deadline() -> None:
    """The time budget itself, on a deadline already past: the first loop step stops the render."""
    with pytest.raises(TemplateBudget, match="rendering took longer than"):
        render("{% for i in range(3) %}x{% endfor %}", {}, seconds=-1.0)


def test_real_templates_are_untouched_by_the_budget() -> None:
    out = render("{% for h in items[:5] %}{{ loop.index }}. {{ h.name }}, 약 {{ '%.1f'|format(h.d) }}km "
                 "{{ '{:,}'.format(h.won) }}원{% endfor %}{{ ('0000' + '930')[-4:] }}",
                 {"items": [{"name": "병원", "d": 1.234, "won": 40000}] * 3})
    assert out.startswith("1. 병원, 약 1.2km 40,000원") and out.endswith("0930")
    assert len(render("{% for i in range(1500) %}가나다라{% endfor %}", {})) == 6000 < MAX_OUTPUT


def test_the_build_stops_at_the_template_line(tmp_path, monkeypatch) -> None:
    # The reproduction: nested range(100000) loops in a manifest's template.
    monkeypatch.setenv("UMMAYA_CACHE", str(tmp_path / "cache"))
    project = make_project(tmp_path / "proj")
    edit(project / NMC, KO_LOOP, "    {% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"
         + KO_LOOP.strip())
    result = bounded(lambda: run("build", "--root", str(project), "-q"), 300)
    assert result.exit_code == 1, result.output
    line = line_of(project / NMC, "range(100000)")
    errors = [x.strip() for x in result.stderr.splitlines() if "render.ko" in x]
    assert errors and errors[0].startswith(f"{NMC}:{line}: render.ko (answer template of nmc_emergency_rooms): "
                                           "fails on fixture"), errors
    assert "TemplateBudget" in errors[0] and "loop iterations" in errors[0]


def test_at_run_time_an_over_budget_template_falls_back_to_the_listing() -> None:
    from types import SimpleNamespace

    from ummaya.runtime.compose import render_evidence

    # Data no fixture had: the template only goes wild past ten records.
    tpl = "{% if items|length > 10 %}{% for a in items %}{% for b in items %}{% for c in items %}{% endfor %}{% endfor %}{% endfor %}{% endif %}ok"
    m = SimpleNamespace(render=SimpleNamespace(ko=tpl, en=tpl), id="x")
    ev = SimpleNamespace(output={"items": [{"name": f"곳{i}"} for i in range(60)]},
                         summary={"items": [{"name": "곳0"}]}, status="ok")
    out = bounded(lambda: render_evidence(m, ev, "ko"), 15)
    assert out == "1. name: 곳0"


def test_filters_that_take_the_environment_still_work_under_the_budget() -> None:
    # truncate and wordwrap are @pass_environment filters: the budget's wrapper must keep that, or
    # jinja hands them the value as the environment ('str' object has no attribute 'policies').
    from ummaya.model.templates import TemplateBudget, render

    assert render("{{ x | truncate(9) }}", {"x": "abcdefghijk lmnop"}) == "abcdef..."
    assert render("{{ x | wordwrap(4) }}", {"x": "abcd efgh"}) == "abcd\nefgh"
    with pytest.raises(TemplateBudget):
        render("{{ x | truncate(99999999) }}", {"x": "a"})
