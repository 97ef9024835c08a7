"""Issue 17, items 1 and 7: slot types and vocabularies are registry data, checked and compiled by
the build; a new closed vocabulary needs YAML only."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
from pathlib import Path

from tests.codegen.project import GOV24, line_of, make_project, run

KST = dt.timezone(dt.timedelta(hours=9))


def test_an_undeclared_slot_type_is_a_located_error(tmp_path, monkeypatch):
    monkeypatch.setenv("UMMAYA_BUILD_WORKERS", "0")
    root = make_project(tmp_path / "proj")
    path = root / GOV24
    path.write_text(path.read_text(encoding="utf-8").replace("x-slot: date,", "x-slot: moving_day,"), encoding="utf-8")
    result = run("build", "--root", str(root), "-q")
    assert result.exit_code == 1
    line = line_of(path, "x-slot: moving_day")
    assert f"{GOV24}:{line}: input_schema.properties.move_date: undeclared slot type 'moving_day' in x-slot" in result.output


def test_a_slot_file_error_is_located(tmp_path, monkeypatch):
    monkeypatch.setenv("UMMAYA_BUILD_WORKERS", "0")
    root = make_project(tmp_path / "proj")
    slots = root / "registry/_slots/slots.yaml"
    good = slots.read_text(encoding="utf-8")
    slots.write_text(good + "  - {name: broken, class: weather, description: x}\n", encoding="utf-8")
    result = run("build", "--root", str(root), "-q")
    assert result.exit_code == 1
    assert f"registry/_slots/slots.yaml:{line_of(slots, 'name: broken')}: slots.8.class: Input should be" in result.output
    slots.write_text(good, encoding="utf-8")
    other = root / "registry/_slots/more.yaml"
    other.write_text("slots:\n  - {name: place, class: place, description: twice}\n", encoding="utf-8")
    result = run("build", "--root", str(root), "-q")
    assert result.exit_code == 1
    assert (f"registry/_slots/slots.yaml:{line_of(slots, 'name: place')}: slots.0.name: slot type 'place' is declared twice"
            " (first at registry/_slots/more.yaml:2)") in result.output


def test_provides_rests_on_output_fields_that_declare_x_slot(tmp_path, monkeypatch):
    """What a locate adapter provides is what its own output fields say (x-slot), never a Python
    table of field names."""
    monkeypatch.setenv("UMMAYA_BUILD_WORKERS", "0")
    from tests.codegen.project import KAKAO

    root = make_project(tmp_path / "proj")
    path = root / KAKAO
    path.write_text(path.read_text(encoding="utf-8").replace("name: {type: string, x-slot: place}", "name: {type: string}"), encoding="utf-8")
    result = run("build", "--root", str(root), "-q")
    assert result.exit_code == 1
    assert "provides.3: 'place' is not declared by any output field (add x-slot: place" in result.output


SCHOOL_SLOT = """\
# A new closed vocabulary, declared without Python.
slots:
  - name: school_level
    class: code
    reader: vocabulary
    vocabulary: school_levels
    description: The level of school a child attends (초등학교, 중학교, 고등학교).
"""
SCHOOL_VOCAB = """\
vocabulary: school_levels
description: School levels as citizens name them.
source:
  title: 초·중등교육법 제2조 (학교의 종류); citizens' words curated
  checked: 2026-12-01
  method: curated
terms:
  - {label: 초등학교, ko: [초등학생, 초딩, 국민학교], en: [elementary school, primary school]}
  - {label: 중학교, ko: [중학생, 중딩], en: [middle school]}
  - {label: 고등학교, ko: [고등학생, 고딩], en: [high school]}
"""


def test_a_new_closed_vocabulary_needs_yaml_only(tmp_path, monkeypatch):
    """A school-level slot: a slot file, a vocabulary file and the adapter's field (enum and
    x-enum-labels) — no Python — and the build compiles it and the planner fills the field."""
    monkeypatch.setenv("UMMAYA_BUILD_WORKERS", "0")
    root = make_project(tmp_path / "proj")
    path = root / GOV24
    text = path.read_text(encoding="utf-8")
    field = ("    school: {type: string, enum: [E, M, H], x-enum-labels: {E: 초등학교, M: 중학교, H: 고등학교}, "
             "x-slot: school_level, description: The child's school level}\n")
    anchor = "    move_date:"
    assert anchor in text
    path.write_text(text.replace(anchor, field + anchor, 1), encoding="utf-8")

    before = run("build", "--root", str(root), "-q")
    assert before.exit_code == 1 and "undeclared slot type 'school_level'" in before.output

    (root / "registry/_slots/school.yaml").write_text(SCHOOL_SLOT, encoding="utf-8")
    (root / "registry/_vocab").mkdir(exist_ok=True)
    (root / "registry/_vocab/school_levels.yaml").write_text(SCHOOL_VOCAB, encoding="utf-8")
    built = run("build", "--root", str(root), "-q")
    assert built.exit_code == 0, built.output

    table = json.loads((root / "generated/understand/slots.json").read_text(encoding="utf-8"))
    assert table["slots"]["school_level"]["class"] == "code"
    assert table["vocabularies"]["school_levels"] == "vocab/school_levels.json"
    compiled = json.loads((root / "generated/understand/vocab/school_levels.json").read_text(encoding="utf-8"))
    assert compiled["source"]["method"] == "curated" and compiled["terms"][1]["label"] == "중학교"
    schema = json.loads((root / "generated/manifest.schema.json").read_text(encoding="utf-8"))
    assert "school_level" in schema["$defs"]["InputField"]["properties"]["x-slot"]["enum"]
    assert "school_level" in (root / "llms/slots.md").read_text(encoding="utf-8")

    # The planner reads it through the shared vocabulary reader, in a fresh process on that catalog.
    probe = (
        "import datetime as dt, json, sys\n"
        "from ummaya.runtime.catalog import Catalog\n"
        "from ummaya.runtime.plan.protocol import PlanContext\n"
        "from ummaya.runtime.plan.offline import SlotFiller\n"
        f"c = Catalog.load({str(root / 'generated')!r})\n"
        "m = c.get('gov24_move_in_report')\n"
        "now = dt.datetime(2026, 12, 1, 10, tzinfo=dt.timezone(dt.timedelta(hours=9)))\n"
        "ctx = PlanContext('중학생 아이랑 부산 해운대구로 이사했어요', 'ko', [m], [], [], {}, 0)\n"
        "print(json.dumps(SlotFiller(ctx, now).fill(m)[0], ensure_ascii=False))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=root)
    assert json.loads(out.stdout)["school"] == "M"


def test_the_model_does_not_import_the_runtime():
    code = "import sys, ummaya.model.manifest, ummaya.model.slots, ummaya.model.vocabulary; print(any(m.startswith('ummaya.runtime') for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_the_real_registry_declares_every_slot_a_manifest_names():
    """Every x-slot of the committed catalog (input and output) is in the committed slot table,
    and every slot type the consumers ask about by flag is declared once."""
    root = Path(__file__).resolve().parents[2]
    table = json.loads((root / "generated/understand/slots.json").read_text(encoding="utf-8"))["slots"]
    catalog = json.loads((root / "generated/catalog.json").read_text(encoding="utf-8"))

    def slots_of(schema):
        if isinstance(schema, dict):
            if isinstance(schema.get("x-slot"), str):
                yield schema["x-slot"]
            for v in schema.values():
                yield from slots_of(v)
        elif isinstance(schema, list):
            for v in schema:
                yield from slots_of(v)

    used = {s for a in catalog["adapters"] for key in ("input_schema", "output_schema") for s in slots_of(a[key])}
    assert used <= set(table), used - set(table)
    assert {n for n, s in table.items() if s["derived"]} >= {"coordinates", "latitude", "longitude", "region_code", "city_code", "node_id"}
    assert {n for n, s in table.items() if s["personal"]} >= {"person_name", "birth_date", "phone", "vehicle_number"}


def test_a_required_field_whose_slot_type_has_no_question_is_a_located_error(tmp_path, monkeypatch):
    """The engine asks for a missing required value in the slot type's own words (registry/_slots
    ``question``): a required field of a slot type without one — nor one it is asked as — is
    refused at its line, so no citizen is ever asked by an internal name."""
    monkeypatch.setenv("UMMAYA_BUILD_WORKERS", "0")
    root = make_project(tmp_path / "proj")
    path = root / GOV24
    path.write_text(path.read_text(encoding="utf-8").replace("required: [new_address]", "required: [new_address, move_date]"),
                    encoding="utf-8")
    result = run("build", "--root", str(root), "-q")
    assert result.exit_code == 1
    line = line_of(path, "x-slot: date,")
    assert (f"{GOV24}:{line}: input_schema.properties.move_date: slot type 'date' has no question, but the field is "
            "required") in result.output
    # The question, declared once on the slot type, is all it takes; the coordinates a find
    # requires are asked as a place, whose question serves them.
    slots = root / "registry/_slots/slots.yaml"
    slots.write_text(slots.read_text(encoding="utf-8").replace(
        "  - name: date\n    class: date\n",
        "  - name: date\n    class: date\n    question: {ko: \"언제 기준인가요?\", en: \"For which day?\"}\n"), encoding="utf-8")
    assert run("build", "--root", str(root), "-q").exit_code == 0
    table = json.loads((root / "generated/understand/slots.json").read_text(encoding="utf-8"))
    assert table["slots"]["date"]["question"] == {"ko": "언제 기준인가요?", "en": "For which day?"}
    assert "question" not in table["slots"]["latitude"] or table["slots"]["latitude"]["question"] is None
