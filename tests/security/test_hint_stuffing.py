"""Issue 19 hole 4 / item 4: a manifest cannot stuff its hints to take the requests another adapter
serves.

Before: a manifest stuffing ``search_hints`` ranked first for 「근처 응급실 알려줘」 above
``nmc_emergency_rooms``, and ``check`` passed. Now check fails on a hint budget, on hints copied
from another adapter, and reports every evaluation request a new adapter takes rank 1 of from an
existing one: against the pull request's base (``check --against``) that fails the check until
the evaluation set accepts it; without a base it is printed for review.
"""

from __future__ import annotations

import re
import shutil

import pytest

from tests.codegen.project import NMC, make_project, run
from ummaya.ci.hints import MAX_HINTS, hint_problems, takeovers
from ummaya.codegen.builder import plan_build
from ummaya.codegen.loader import load_registry

EVALS = """format: 1
requests:
  - {"query": "근처 응급실 알려줘", "expected": ["nmc_emergency_rooms"], "kind": "colloquial_ko", "split": "tune"}
  - {"query": "밤에 여는 응급실 있나요", "expected": ["nmc_emergency_rooms"], "kind": "colloquial_ko", "split": "tune"}
  - {"query": "where is the nearest emergency room", "expected": ["nmc_emergency_rooms"], "kind": "english", "split": "tune"}
  - {"query": "서울시청 주소 알려줘", "expected": ["kakao_keyword_search"], "kind": "colloquial_ko", "split": "tune"}
"""


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.setenv("UMMAYA_CACHE", str(tmp_path / "cache"))
    root = make_project(tmp_path / "proj")
    (root / "evals").mkdir()
    (root / "evals/retrieval.yaml").write_text(EVALS, encoding="utf-8")
    return root


def add_copy(root, new_id: str, hints_ko: list[str], hints_en: list[str]) -> None:
    """A second ER-like adapter (its own fixtures) with the hints given."""
    src = root / NMC
    folder = root / "registry" / "evil"
    (folder / "fixtures").mkdir(parents=True)
    shutil.copytree(src.parent / "fixtures" / "nmc_emergency_rooms", folder / "fixtures" / new_id)
    text = src.read_text(encoding="utf-8").replace("id: nmc_emergency_rooms", f"id: {new_id}", 1)
    text = re.sub(r"search_hints:\n  ko: \[.*\]\n  en: \[.*\]\n",
                  "search_hints:\n  ko: [" + ", ".join(f'"{h}"' for h in hints_ko) + "]\n  en: ["
                  + ", ".join(f'"{h}"' for h in hints_en) + "]\n", text)
    (folder / f"{new_id}.yaml").write_text(text, encoding="utf-8")


def problems(root) -> list[str]:
    registry, load = load_registry(root)
    assert not load, load
    return [str(p) for p in hint_problems(registry)]


def test_copied_hints_are_refused(project) -> None:
    # The reproduction: the ER adapter's own hints, plus more, in another manifest.
    add_copy(project, "er_finder", ["응급실", "응급의료기관", "야간 응급실", "응급센터", "권역응급의료센터",
                                    "갑자기 아파요", "쓰러졌어요", "다쳤어요", "피가 안 멈춰요", "근처 응급실 알려줘"],
             ["emergency room", "ER", "emergency department", "urgent care", "hospital emergency"])
    found = problems(project)
    assert any(p.startswith("registry/evil/er_finder.yaml:") and "hint terms are nmc_emergency_rooms's too" in p
               for p in found), found


def test_paraphrased_copies_are_refused_too(project) -> None:
    # Same words, other spacing, case and punctuation: the retriever matches on terms, so do we.
    add_copy(project, "er_finder2", ["응급 실", "응급의료 기관!", "야간응급실", "응급센터?", "권역 응급의료센터",
                                     "갑자기아파요", "쓰러졌 어요", "다쳤어요.", "피가안멈춰요", "밤에문연병원", "숨이안쉬어져요"],
             ["EMERGENCY ROOM", "er", "Emergency Department", "a&e", "urgent-care", "hospital emergency",
              "someone collapsed", "hospital open at night"])
    assert any("er_finder2" in p and "hint terms" in p for p in problems(project))


@pytest.mark.parametrize("what", ["count", "length", "total"])
def test_the_hint_budget(project, what) -> None:
    if what == "count":
        hints = [f"응급{i}호" for i in range(MAX_HINTS + 1)]
    elif what == "length":
        hints = ["응급실 " * 14]
    else:
        hints = [f"가{i:02d}" + "나" * 30 for i in range(12)]
    add_copy(project, "budget_buster", hints, ["x"])
    found = problems(project)
    assert any(p.startswith("registry/evil/budget_buster.yaml:") and ("budget" in p or "a hint is a term" in p)
               for p in found), found


def test_a_new_adapter_taking_rank_one_is_reported_until_the_eval_set_accepts_it(project, tmp_path) -> None:
    # The pull request's base: the registry before the newcomer.
    assert run("build", "--root", str(project)).exit_code == 0
    base_lock = tmp_path / "base.lock"
    base_lock.write_bytes((project / "generated/registry.lock").read_bytes())
    # Under the overlap limit and inside the budget, yet built to win the ER requests.
    add_copy(project, "er_magnet", ["근처 응급실 알려줘", "응급실 알려줘", "응급실 근처", "근처 응급실", "여는 응급실",
                                    "밤에 응급실"], ["nearest emergency room", "emergency room near me"])
    assert not any("er_magnet" in p for p in problems(project))
    plan = plan_build(project)
    assert plan.ok, plan.problems
    registry, _ = load_registry(project)
    docs = plan.outputs["generated/index/documents.json"]
    found = takeovers(project, registry, docs, None)
    assert any("「근처 응급실 알려줘」: er_magnet (new) takes rank 1 from nmc_emergency_rooms" in f for f in found), found
    # The whole gate: against the base, check fails and says why.
    result = run("check", "--root", str(project), "--against", str(base_lock))
    assert result.exit_code == 1 and "takes rank 1 from nmc_emergency_rooms" in result.output, result.output
    assert "hints:" in result.output and "hints review:" not in result.output
    # Without a base, "new" is "expected by no request yet": printed for review, not a failure.
    result = run("check", "--root", str(project))
    assert "hints review:" in result.output and "er_magnet (new) takes rank 1" in result.output, result.output
    assert "check failed: hints" not in result.output, result.output
    # Accepting it is an edit of the evaluation set a reviewer sees.
    evals = project / "evals/retrieval.yaml"
    evals.write_text(evals.read_text(encoding="utf-8").replace('["nmc_emergency_rooms"]',
                                                               '["nmc_emergency_rooms", "er_magnet"]'), encoding="utf-8")
    assert takeovers(project, registry, docs, None) == []


def test_the_real_registry_passes() -> None:
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    assert problems(root) == []
    # Rank-1 takeovers of the real registry are a review list (adapters merged before the
    # evaluation set expects them), printed by check; they fail only against a base.
