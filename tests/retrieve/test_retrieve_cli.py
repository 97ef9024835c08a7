"""`ummaya search --json` contract and the '-' JSON Lines mode."""

import json

import pytest
from click.testing import CliRunner

from ummaya.cli import main


@pytest.fixture()
def runner(small_generated, monkeypatch):
    monkeypatch.setenv("UMMAYA_GENERATED", str(small_generated))
    return CliRunner()


def test_search_json_contract(runner):
    res = runner.invoke(main, ["search", "--json", "근처 약국 어디야"])
    assert res.exit_code == 0, res.output
    lines = res.output.strip().splitlines()
    assert len(lines) == 1
    obj = json.loads(lines[0])
    cands = obj["candidates"]
    assert isinstance(cands, list) and cands
    assert cands[0]["adapter_id"] == "pharmacies"
    for c in cands:
        assert {"adapter_id", "primitive", "tier", "score"} <= set(c)
        assert c["primitive"] in ("locate", "find", "check", "send")
        assert c["tier"] in ("live", "mock", "handoff")
    assert [c["score"] for c in cands] == sorted((c["score"] for c in cands), reverse=True)


def test_search_json_empty_when_nothing_fits(runner):
    res = runner.invoke(main, ["search", "--json", "--top-k", "3", "삼성전자 주가 얼마야"])
    assert res.exit_code == 0
    assert json.loads(res.output)["candidates"] == []


def test_stdin_json_lines(runner):
    res = runner.invoke(main, ["search", "--json", "-"], input="버스 언제 와\n\n비트코인 시세\npay my parking ticket\n")
    assert res.exit_code == 0, res.output
    objs = [json.loads(line) for line in res.output.strip().splitlines()]
    assert [o["query"] for o in objs] == ["버스 언제 와", "비트코인 시세", "pay my parking ticket"]
    assert objs[0]["candidates"][0]["adapter_id"] == "bus_arrivals"
    assert objs[1]["candidates"] == []
    assert objs[2]["candidates"][0]["adapter_id"] == "fine_payment"


def test_human_table_and_top_k(runner):
    res = runner.invoke(main, ["search", "--top-k", "2", "과태료"])
    assert res.exit_code == 0
    rows = [l for l in res.output.splitlines() if l.strip()[:1].isdigit()]
    assert len(rows) == 2 and "adapter_id" in res.output


def test_unknown_filter_code(runner):
    res = runner.invoke(main, ["search", "--json", "--filter", "colour=red", "응급실"])
    assert res.exit_code == 2
    assert json.loads(res.output.splitlines()[0])["error"]["code"] == "unknown_filter"
    ok = runner.invoke(main, ["search", "--json", "--filter", "primitive=check", "과태료"])
    assert [c["adapter_id"] for c in json.loads(ok.output)["candidates"]] == ["fine_lookup"]


def test_subprocess_json_lines(small_generated):
    import os
    import subprocess
    import sys

    from pathlib import Path

    exe = Path(sys.executable).parent / "ummaya"
    if not exe.exists():
        pytest.skip("the ummaya console script is not installed beside this interpreter")
    env = {**os.environ, "UMMAYA_GENERATED": str(small_generated)}
    out = subprocess.run([str(exe), "search", "--json", "-"], input="응급실\n약국\n",
                         capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = [json.loads(line) for line in out.stdout.splitlines()]
    assert [o["candidates"][0]["adapter_id"] for o in lines] == ["er_rooms", "pharmacies"]


def test_eval_retrieval_skips_and_counts_requests_for_adapters_not_built(runner, tmp_path):
    from ummaya.cli.evaluate import eval_group

    eval_file = tmp_path / "retrieval.yaml"
    eval_file.write_text(
        "format: 1\nrequests:\n"
        '  - {"query": "근처 약국 어디야", "expected": ["pharmacies"], "kind": "colloquial_ko", "split": "tune"}\n'
        '  - {"query": "일요일에 여는 약국", "expected": ["planned_sunday_pharmacies"], "kind": "colloquial_ko", "split": "tune"}\n'
        '  - {"query": "삼성전자 주가 얼마야", "expected": [], "kind": "out_of_scope", "split": "tune"}\n',
        encoding="utf-8",
    )
    res = runner.invoke(eval_group, ["retrieval", "--json", "--file", str(eval_file)])
    out = json.loads(res.output)
    assert out["pending"] == 1 and out["pending_adapters"] == ["planned_sunday_pharmacies"]
    assert out["overall"]["n"] == 2
    table = runner.invoke(eval_group, ["retrieval", "--file", str(eval_file)])
    assert "pending: 1 requests skipped — they expect 1 adapters not in the registry yet" in table.output
