"""Extension points: slot extractors, resolvers, transforms and post-processors are registered
functions the build discovers; the relative dates, years and months citizens say."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from ummaya.runtime.dispatch.resolvers import RESOLVERS, resolve, resolver_expressions
from ummaya.runtime.dispatch.transforms import POSTPROCESSORS, TRANSFORMS, apply_transform
from ummaya.runtime.extensions import Registry, discover
from ummaya.runtime.plan.extractors import SLOT_EXTRACTORS, SlotRequest, date_in, month_in, year_in

KST = dt.timezone(dt.timedelta(hours=9))
WED = dt.datetime(2026, 12, 2, 10, 0, tzinfo=KST)  # a Wednesday in December


def slot(kind: str, text: str, prop: dict | None = None, now: dt.datetime = WED):
    return SLOT_EXTRACTORS[kind](SlotRequest(text, now, prop or {"type": "string"}))


@pytest.mark.parametrize(("text", "year"), [
    ("올해 공휴일 알려줘", 2026), ("내년 공휴일", 2027), ("작년 교통사고", 2025), ("재작년 사고 다발지역", 2024),
    ("내후년 설날", 2028), ("2023년 사고", 2023), ("holidays next year", 2027), ("last year", 2025),
    ("다음 달 공휴일", 2027),  # December: next month is next year's January
    ("공휴일 알려줘", None),
])
def test_years(text, year):
    assert year_in(text, WED) == year
    assert slot("year", text, {"type": "integer"}) == year
    assert slot("year", text) == (str(year) if year else None)


@pytest.mark.parametrize(("text", "month"), [
    ("5월 공휴일", 5), ("12월 25일", 12), ("다음 달 공휴일", 1), ("이번 달", 12), ("지난달 사고", 11),
    ("holidays in May", 5), ("september holidays", 9), ("holidays in dec", 12), ("may I ask about holidays", None), ("공휴일", None),
])
def test_months(text, month):
    assert month_in(text, WED) == month
    assert slot("month", text, {"type": "integer"}) == month
    assert slot("month", text, {"type": "string", "x-format": "mm"}) == (f"{month:02d}" if month else None)
    assert slot("month", text, {"type": "string", "x-format": "m"}) == (str(month) if month else None)


def test_month_as_yyyymm_takes_the_year_it_implies():
    assert slot("month", "다음 달", {"type": "string", "x-format": "yyyymm"}) == "202701"
    assert slot("month", "2025년 3월", {"type": "string", "x-format": "yyyymm"}) == "202503"


@pytest.mark.parametrize(("text", "day"), [
    ("오늘", dt.date(2026, 12, 2)), ("내일 비 와?", dt.date(2026, 12, 3)), ("모레", dt.date(2026, 12, 4)),
    ("다음 주 월요일 병원", dt.date(2026, 12, 7)), ("이번 주 금요일", dt.date(2026, 12, 4)),
    ("다음주 일요일", dt.date(2026, 12, 13)), ("지난 주 화요일", dt.date(2026, 11, 24)),
    ("next monday", dt.date(2026, 12, 7)), ("3일 뒤", dt.date(2026, 12, 5)), ("12월 25일", dt.date(2026, 12, 25)),
])
def test_relative_days(text, day):
    assert date_in(text, WED) == day
    assert slot("date", text, {"type": "string", "format": "date"}) == day.isoformat()
    assert slot("date", text, {"type": "string", "x-format": "yyyymmdd"}) == day.strftime("%Y%m%d")


def test_today_resolvers_follow_kst_across_the_new_year():
    late = dt.datetime(2026, 12, 31, 15, 30, tzinfo=dt.timezone.utc)  # 2027-01-01 00:30 KST
    assert [resolve(f"today.{f}", {}, late) for f in ("yyyy", "mm", "yyyymm", "yyyymmdd")] == ["2027", "01", "202701", "20270101"]
    assert {"today.yyyy", "kma_grid.nx", "kma_nowcast.time"} <= set(resolver_expressions())


def test_input_or_today_uses_the_citizens_year_when_given():
    now = dt.datetime(2026, 5, 1, tzinfo=KST)
    assert resolve("input_or_today.year", {"year": 2025}, now) == "2025"
    assert resolve("input_or_today.year", {}, now) == "2026"
    assert resolve("input_or_today.month", {"month": "03"}, now) == "03"
    assert resolve("input_or_today.month", {}, now) == "05"


def test_registries_are_discovered_and_refuse_duplicates():
    regs = discover()
    assert {"year", "month", "date"} <= set(regs["slot extractor"])
    assert {"int", "strip_html"} <= set(regs["transform"]) and "kma_pivot_forecast" in regs["post-processor"]
    assert "today" in regs["resolver"] and regs["resolver"] is RESOLVERS
    assert apply_transform("none_if_dash|int", "1,234") == 1234 and TRANSFORMS["int"]("-") is None
    assert POSTPROCESSORS["kma_pivot_nowcast"]([]) == []
    reg: Registry = Registry("thing")
    reg.register("a")(len)
    with pytest.raises(ValueError, match="thing 'a' is registered twice"):
        reg.register("a")(str)


def test_the_published_schema_documents_every_x_key():
    from ummaya.codegen.manifest import manifest_json_schema

    schema = manifest_json_schema()
    field = schema["$defs"]["InputField"]["properties"]
    assert {"x-slot", "x-format", "x-code-slice", "x-enum-labels"} <= set(field)
    assert {"year", "month", "date", "place"} <= set(field["x-slot"]["enum"])
    assert "yyyymmdd" in field["x-format"]["enum"] and "mm" in field["x-format"]["enum"]
    assert field["x-code-slice"]["minItems"] == 2
    up = schema["$defs"]["Upstream"]["properties"]
    assert "today.{yyyymmdd,yyyymm,yyyy,mm}" in up["derived_params"]["description"]
    assert "kma_pivot_forecast" in up["postprocess"]["description"]
    assert "strip_html" in schema["$defs"]["FieldMap"]["properties"]["transform"]["description"]
    # Every x- key any real manifest uses is documented.
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    used = {k for p in (root / "registry").rglob("*.yaml") for k in _x_keys(p.read_text(encoding="utf-8"))}
    assert used <= set(field), used - set(field)


def _x_keys(text: str) -> set[str]:
    import re

    return set(re.findall(r"(x-[a-z-]+):", text))


def test_the_committed_schema_is_the_one_built():
    from pathlib import Path

    from ummaya.codegen.manifest import manifest_json_schema

    root = Path(__file__).resolve().parents[2]
    committed = json.loads((root / "generated/manifest.schema.json").read_text(encoding="utf-8"))
    assert committed["$defs"]["InputField"] == manifest_json_schema()["$defs"]["InputField"]


def test_a_new_slot_extractor_needs_no_other_edit(monkeypatch, tmp_path):
    """Register one function: the build accepts the x-slot and the planner fills the field."""
    import shutil

    from ummaya.codegen.link import link
    from ummaya.codegen.loader import load_registry
    from ummaya.runtime.plan.extractors import slot_extractor

    from tests.codegen.project import DATA, GOV24, line_of

    root = tmp_path / "proj"
    shutil.copytree(DATA, root / "registry")
    path = root / GOV24
    path.write_text(path.read_text(encoding="utf-8").replace("x-slot: date, description: Day of the move", "x-slot: move_season, description: Day of the move"), encoding="utf-8")

    registry, problems = load_registry(root)
    assert problems == []
    errors = [str(p) for p in link(registry, use_parser=False).problems]
    assert errors and errors[0].startswith(f"{GOV24}:{line_of(path, 'x-slot: move_season')}: input_schema.properties.move_date: unknown x-slot 'move_season' (registered: ")

    def move_season(req):
        """The first day of the season a citizen names (test only)."""
        return "2027-03-01" if "봄" in req.text else None

    monkeypatch.setitem(SLOT_EXTRACTORS._fns, "move_season", move_season)
    monkeypatch.setitem(SLOT_EXTRACTORS._meta, "move_season", {"doc": "test"})
    slot_extractor  # the decorator a contributor uses; registered by hand above so the test cleans up
    assert [str(p) for p in link(registry, use_parser=False).problems] == []

    from ummaya.runtime.plan.base import PlanContext
    from ummaya.runtime.plan.offline import SlotFiller

    m = next(lm.manifest for lm in registry.manifests if lm.id == "gov24_move_in_report")
    ctx = PlanContext("봄에 부산 해운대구로 이사", "ko", [m], [], [], {}, 0)
    args, _ = SlotFiller(ctx, WED).fill(m)
    assert args.get("move_date") == "2027-03-01"


@pytest.mark.parametrize(("old", "new", "message"), [
    ("latitude: {source: latitude, transform: float}", "latitude: {source: latitude, transform: flaot}", "upstream.fields.latitude.transform: unknown transform 'flaot' (registered: int, float,"),
])
def test_unknown_names_are_located_build_errors(tmp_path, old, new, message):
    import shutil

    from ummaya.codegen.link import link
    from ummaya.codegen.loader import load_registry

    from tests.codegen.project import DATA, NMC, line_of

    root = tmp_path / "proj"
    shutil.copytree(DATA, root / "registry")
    path = root / NMC
    text = path.read_text(encoding="utf-8")
    assert old in text
    text = text.replace(old, new).replace("  record_path:", "  derived_params: {stdDay: today.yyyyy}\n  postprocess: kma_pivot\n  record_path:", 1)
    path.write_text(text, encoding="utf-8")
    registry, problems = load_registry(root)
    assert problems == []
    errors = [str(p) for p in link(registry, use_parser=False).problems]
    assert any(e.startswith(f"{NMC}:{line_of(path, 'transform: flaot')}: {message}") for e in errors), errors
    assert any(e.startswith(f"{NMC}:{line_of(path, 'derived_params:')}: upstream.derived_params.stdDay: unknown resolver expression 'today.yyyyy'") for e in errors), errors
    assert any(e.startswith(f"{NMC}:{line_of(path, 'postprocess: kma_pivot')}: upstream.postprocess: unknown post-processor 'kma_pivot'") for e in errors), errors
