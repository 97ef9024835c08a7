"""Extension points: slot readers, resolvers, transforms and post-processors are registered
functions the build discovers; the relative dates, years and months citizens say."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from ummaya.wire.resolvers import RESOLVERS, resolve, resolver_expressions
from ummaya.wire.transforms import POSTPROCESSORS, TRANSFORMS, apply_transform
from ummaya.wire.extensions import Registry, discover
from ummaya.runtime.understand import table
from ummaya.runtime.understand.dates import date_in, month_in, year_in
from ummaya.runtime.understand.readers import READERS, ReadRequest

KST = dt.timezone(dt.timedelta(hours=9))
WED = dt.datetime(2026, 12, 2, 10, 0, tzinfo=KST)  # a Wednesday in December


def slot(kind: str, text: str, prop: dict | None = None, now: dt.datetime = WED):
    st = table.slot(kind)
    return READERS[st.reader](ReadRequest(text, now, prop or {"type": "string"}, kind, slot=st))


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
    assert {"year", "month", "date", "place", "vocabulary", "pattern"} <= set(regs["slot reader"])
    assert {"int", "strip_html"} <= set(regs["transform"]) and "kma_pivot_forecast" in regs["post-processor"]
    assert "today" in regs["resolver"] and regs["resolver"] is RESOLVERS
    assert apply_transform("none_if_dash|int", "1,234") == 1234 and TRANSFORMS["int"]("-") is None
    assert POSTPROCESSORS["kma_pivot_nowcast"]([]) == []
    reg: Registry = Registry("thing")
    reg.register("a")(len)
    with pytest.raises(ValueError, match="thing 'a' is registered twice"):
        reg.register("a")(str)


def test_the_published_schema_documents_every_x_key():
    from ummaya.codegen.emit_catalog import manifest_json_schema

    schema = manifest_json_schema(table.slot_table())
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

    from ummaya.codegen.emit_catalog import manifest_json_schema

    root = Path(__file__).resolve().parents[2]
    committed = json.loads((root / "generated/manifest.schema.json").read_text(encoding="utf-8"))
    assert committed["$defs"]["InputField"] == manifest_json_schema(table.slot_table())["$defs"]["InputField"]


def test_a_new_reader_needs_no_other_edit(monkeypatch, tmp_path):
    """A slot type declared in YAML names a reader; registering that one function makes the build
    accept it and the planner fill the field. Before either, the build says where and what."""
    import shutil

    from ummaya.codegen.link import link
    from ummaya.codegen.loader import load_registry
    from ummaya.runtime.understand.readers import reader

    from tests.codegen.project import DATA, GOV24, line_of

    root = tmp_path / "proj"
    shutil.copytree(DATA, root / "registry")
    path = root / GOV24
    path.write_text(path.read_text(encoding="utf-8").replace("x-slot: date, description: Day of the move", "x-slot: move_season, description: Day of the move"), encoding="utf-8")

    registry, problems = load_registry(root)
    assert problems == []
    errors = [str(p) for p in link(registry, use_parser=False).problems]
    assert errors and errors[0].startswith(f"{GOV24}:{line_of(path, 'x-slot: move_season')}: input_schema.properties.move_date: undeclared slot type 'move_season' in x-slot (declared in registry/_slots/: ")

    slots = root / "registry/_slots/slots.yaml"
    slots.write_text(slots.read_text(encoding="utf-8") + "  - {name: move_season, class: date, reader: move_season, description: The first day of a season}\n", encoding="utf-8")
    registry, problems = load_registry(root)
    errors = [str(p) for p in link(registry, use_parser=False).problems]
    assert errors and errors[0].startswith(f"registry/_slots/slots.yaml:{line_of(slots, 'move_season')}: slot type 'move_season': unknown reader 'move_season'")

    def move_season(req):
        """The first day of the season a citizen names (test only)."""
        return "2027-03-01" if "봄" in req.text else None

    monkeypatch.setitem(READERS._fns, "move_season", move_season)
    monkeypatch.setitem(READERS._meta, "move_season", {"doc": "test"})
    reader  # the decorator a contributor uses; registered by hand above so the test cleans up
    assert [str(p) for p in link(registry, use_parser=False).problems] == []

    from ummaya.runtime.plan.protocol import PlanContext
    from ummaya.runtime.plan.offline import SlotFiller

    m = next(lm.manifest for lm in registry.manifests if lm.id == "gov24_move_in_report")
    table_ = registry.understanding.table()
    monkeypatch.setattr(table, "slot", lambda name: table_.get(name) if name else None)
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


def test_an_unknown_resolver_in_a_step_is_a_located_build_error(tmp_path):
    import shutil

    from ummaya.codegen.link import link
    from ummaya.codegen.loader import load_registry

    from tests.codegen.project import DATA, NMC, line_of

    root = tmp_path / "proj"
    shutil.copytree(DATA, root / "registry")
    path = root / NMC
    text = path.read_text(encoding="utf-8")
    step = "  steps:\n    - {id: year_step, path: /x, pick: {latitude: y}, derived_params: {svyYr: last_year.yy}}\n  record_path:"
    path.write_text(text.replace("  record_path:", step, 1), encoding="utf-8")
    registry, problems = load_registry(root)
    assert problems == []
    errors = [str(p) for p in link(registry, use_parser=False).problems]
    want = f"{NMC}:{line_of(path, 'steps:')}: upstream.steps.year_step.derived_params.svyYr: unknown resolver expression 'last_year.yy'"
    assert any(e.startswith(want) for e in errors), errors


def test_an_optional_closed_vocabulary_is_filled_only_when_the_request_names_a_label():
    """An optional enum field (x-slot free_text, with x-enum-labels) takes the code whose label the
    citizen said; nothing named, nothing sent (the schema default applies) — never a guess."""
    from pathlib import Path

    import yaml

    from ummaya.model.manifest import Manifest
    from ummaya.runtime.plan.protocol import PlanContext
    from ummaya.runtime.plan.offline import SlotFiller

    path = Path(__file__).resolve().parents[2] / "registry/mpm/mpm_public_jobs.yaml"
    m = Manifest.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")))
    for text, expected in [
        ("지방공무원 경력채용 공고 있어?", {"institution_type": "g02", "notice_type": "e02"}),
        ("교육청 계약직 채용 공고", {"institution_type": "g04", "notice_type": "e03"}),
        ("공무원 채용 공고 보여줘", {}),
    ]:
        args, missing = SlotFiller(PlanContext(text, "ko", [m], [], [], {}, 0), WED).fill(m)
        assert {k: v for k, v in args.items() if k in ("institution_type", "notice_type")} == expected, text
        assert missing == []


def test_a_region_fills_the_region_fields_and_never_the_keyword_of_the_same_adapter():
    """「부산 수영구 청년 월세」: 부산광역시 and 수영구 go to the region fields, the search words are
    「청년 월세」; an adapter without region fields keeps 부산 as a search word, and a word that only
    contains a region name (부산중앙고등학교) is never cut."""
    from pathlib import Path

    import yaml

    from ummaya.model.manifest import Manifest
    from ummaya.runtime.plan.protocol import PlanContext
    from ummaya.runtime.plan.offline import SlotFiller

    root = Path(__file__).resolve().parents[2] / "registry"
    local = Manifest.model_validate(yaml.safe_load((root / "ssis/ssis_local_welfare_services.yaml").read_text(encoding="utf-8")))
    notices = Manifest.model_validate(yaml.safe_load((root / "mss/mss_sme_support_notices.yaml").read_text(encoding="utf-8")))
    meals = Manifest.model_validate(yaml.safe_load((root / "neis/neis_school_meals.yaml").read_text(encoding="utf-8")))

    def fill(text, m):
        return SlotFiller(PlanContext(text, "ko", [m], [], [], {}, 0), WED).fill(m)[0]

    args = fill("부산 수영구 청년 월세 지원 있어?", local)
    assert (args["city"], args["district"], args["keyword"]) == ("부산광역시", "수영구", "청년 월세")
    assert fill("부산 소상공인 지원사업 공고 보여줘", notices)["keyword"] == "부산 소상공인"
    assert fill("부산중앙고등학교 급식 메뉴 알려줘", meals)["school_name"] == "부산중앙고등학교"


def test_a_code_of_digits_is_named_only_as_a_whole_word_and_the_longest_label_wins():
    """「조문객 200명」 does not name 장법 「2」, and 「외부업체 화장」 is code 3, not 「화장」 (2) inside it."""
    from pathlib import Path

    import yaml

    from ummaya.model.manifest import Manifest
    from ummaya.runtime.plan.protocol import PlanContext
    from ummaya.runtime.plan.offline import SlotFiller

    path = Path(__file__).resolve().parents[2] / "registry/bfc/bfc_funeral_cost_estimate.yaml"
    m = Manifest.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")))

    def fill(text):
        args = SlotFiller(PlanContext(text, "ko", [m], [], [], {}, 0), WED).fill(m)[0]
        return args.get("funeral_type"), args.get("cause_of_death")

    assert fill("조문객 100명 외부업체 화장으로 장례비용 얼마야") == ("3", None)
    assert fill("영락공원 매장 장례비용 외인사") == ("1", "2")
    assert fill("조문객 200명이면 장례비용 얼마야") == (None, None)
