"""Issue 9 item 10: the conversation evaluation set and ``ummaya eval conversations``."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from ummaya.runtime.eval_conversations import CATEGORIES, evaluate, load_conversations, split_of

SET = Path(__file__).resolve().parents[2] / "evals" / "conversations.yaml"


@pytest.fixture(scope="module")
def conversations():
    return load_conversations(SET)


def test_the_set(conversations) -> None:
    assert len(conversations) >= 120
    assert set(Counter(c.category for c in conversations)) == set(CATEGORIES)
    splits = Counter(c.split for c in conversations)
    assert splits["heldout"] >= 30 and splits["dev"] >= 60
    assert all(split_of(c.id) == c.split for c in conversations)
    assert all(len(c.turns) >= 2 for c in conversations if c.category != "personal_data")


def test_zero_personal_data_reaches_an_upstream_across_the_whole_set(conversations, engine) -> None:
    """Every upstream URL and every call argument of every turn of every conversation."""
    rep = evaluate(conversations, engine=engine)
    leaks = [p for o in rep.outcomes for p in o.problems if "left the machine" in p]
    assert leaks == []
    assert rep.as_dict()["personal_data_leaks"] == 0
    # What was checked is real: some turns did call upstreams with URLs and arguments.
    urls = [c["upstream_url"] for o in rep.outcomes for r in o.results for c in r.calls if c.get("upstream_url")]
    assert len(urls) > 100


def test_dev_split_meets_its_target(conversations, engine) -> None:
    rep = evaluate(conversations, split="dev", engine=engine)
    assert rep.as_dict()["splits"]["dev"]["rate"] >= 0.95, rep.as_dict()["failures"]


def test_cli_prints_the_figures(tmp_path) -> None:
    from ummaya.cli.evaluate import eval_group

    small = tmp_path / "c.yaml"
    small.write_text(
        "format: 1\nconversations:\n"
        "  - id: a_pd\n    category: personal_data\n    turns:\n"
        "      - {request: \"제 번호 010-1234-5678인데 부산역 근처 약국\", expect: {calls: [kakao_keyword_search, nmc_pharmacies], stop_reason: completed}}\n"
        "  - id: b_ans\n    category: answer_to_own_question\n    turns:\n"
        "      - {request: \"근처 응급실\", expect: {calls: [], stop_reason: needs_input}}\n"
        "      - {request: \"하단동\", expect: {calls: [kakao_keyword_search, nmc_emergency_rooms], stop_reason: completed}}\n",
        encoding="utf-8")
    out = CliRunner().invoke(eval_group, ["conversations", "--json", "--file", str(small), "--root", str(SET.parents[1])])
    d = json.loads(out.output)
    assert d["overall"] == {"n": 2, "passed": 2, "rate": 1.0}
    assert set(d["categories"]) == {"personal_data", "answer_to_own_question"} and d["personal_data_leaks"] == 0
    text = CliRunner().invoke(eval_group, ["conversations", "--file", str(small), "--root", str(SET.parents[1])]).output
    assert "by category" in text and "PASS" in text
