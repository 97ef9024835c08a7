"""``ummaya eval turns`` against a scripted OpenAI-compatible server: single- and multi-turn
scenarios, pass rate, grounded rate, stop-reason confusion and latency, in text and JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.support.fake_openai import FakeOpenAIServer, stream_text, stream_tool_calls
from tests.turn.conftest import REPO
from ummaya.cli import main

SCENARIOS = """\
scenarios:
  - id: beds_honest
    request: 부산 응급실 빈 병상 있어?
    expect: {calls: [nmc_emergency_beds], stop_reason: completed, grounded: true, answer_contains: ["[Mock · 모의]"]}
  - id: er_asks_then_finds
    turns:
      - request: 근처 응급실 알려줘
        expect: {calls: [], stop_reason: needs_input}
      - request: 동아대 승학캠퍼스
        expect: {calls: [kakao_keyword_search, nmc_emergency_rooms], stop_reason: completed}
  - id: beds_with_an_invented_statistic
    request: 부산 응급실 빈 병상 있어?
    expect: {calls: [nmc_emergency_beds], stop_reason: completed, grounded: true}
"""


def script() -> list:
    beds = '{"sido": "부산광역시"}'
    return [
        stream_tool_calls([("nmc_emergency_beds", beds)]),
        stream_text("동아대학교병원 응급실에 병상 6개가 비어 있어요."),
        stream_text("어느 위치를 기준으로 찾을까요?"),
        stream_tool_calls([("kakao_keyword_search", '{"query": "동아대 승학캠퍼스"}')]),
        stream_tool_calls([("nmc_emergency_rooms", '{"latitude": 35.1167, "longitude": 128.968}')]),
        stream_text("삼육부산병원이 약 4.1km로 가장 가까워요."),
        stream_tool_calls([("nmc_emergency_beds", beds)]),
        stream_text("동아대학교병원에 병상 6개가 있어요. 부산 응급실 환자의 73%는 경증입니다."),
    ]


@pytest.fixture
def scenario_file(tmp_path: Path) -> Path:
    p = tmp_path / "turns.yaml"
    p.write_text(SCENARIOS, encoding="utf-8")
    return p


def run(args: list[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    monkeypatch.setenv("UMMAYA_HOME", str(tmp_path / "home"))
    for var in ("UMMAYA_LLM_API_KEY", "FRIENDLI_TOKEN", "UMMAYA_LLM_MODEL", "DATA_GO_KR_SERVICE_KEY", "KAKAO_REST_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    return CliRunner().invoke(main, ["eval", "turns", "--root", str(REPO), *args])


def test_eval_turns_against_an_openai_compatible_server(scenario_file, monkeypatch, tmp_path):
    with FakeOpenAIServer(script=script()) as srv:
        r = run(["--planner", "openai", "--base-url", srv.base_url, "--model", "fake-model",
                 "--scenarios", str(scenario_file), "--json"], monkeypatch, tmp_path)
        left = len(srv.script)
    assert r.exit_code == 0, r.output
    rep = json.loads(r.stdout)
    assert left == 0, "every scripted reply was asked for"
    assert rep["scenarios"] == 3 and rep["turns"] == 4
    assert rep["pass_rate"] == pytest.approx(2 / 3, abs=1e-3)
    assert rep["grounded_rate"] == 0.75  # the invented statistic was removed
    assert rep["stop_reason_confusion"] == {"completed": {"completed": 3}, "needs_input": {"needs_input": 1}}
    assert rep["p95_ms"] >= rep["p50_ms"] > 0
    (failure,) = rep["failures"]
    assert failure["scenario"] == "beds_with_an_invented_statistic" and "grounded" in failure["problems"][0]


def test_eval_turns_text_report_and_min_pass(scenario_file, monkeypatch, tmp_path):
    with FakeOpenAIServer(script=script()) as srv:
        r = run(["--planner", "openai", "--base-url", srv.base_url, "--scenarios", str(scenario_file),
                 "--min-pass", "0.9", "--failures"], monkeypatch, tmp_path)
    assert r.exit_code == 1, r.output
    assert "pass rate       66.7%" in r.stdout and "grounded rate   75.0%" in r.stdout
    assert "completed            → completed 3" in r.stdout
    assert "beds_with_an_invented_statistic#1" in r.stdout


def test_eval_turns_offline_over_the_registry_passes(monkeypatch, tmp_path):
    r = run(["--json"], monkeypatch, tmp_path)
    assert r.exit_code == 0, r.output
    rep = json.loads(r.stdout)
    assert rep["pass_rate"] == 1.0 and rep["grounded_rate"] == 1.0 and rep["turns"] >= rep["scenarios"] >= 30


def test_eval_turns_unreachable_server_is_a_clean_failure(scenario_file, monkeypatch, tmp_path):
    r = run(["--planner", "openai", "--base-url", "http://127.0.0.1:9/v1", "--scenarios", str(scenario_file),
             "--only", "beds_honest", "--json"], monkeypatch, tmp_path)
    assert r.exit_code == 0, r.output  # a report, not a traceback: the turn stopped channel_unavailable
    rep = json.loads(r.stdout)
    assert rep["stop_reason_confusion"] == {"completed": {"channel_unavailable": 1}} and rep["pass_rate"] == 0.0


def test_ask_json_carries_the_verdict(monkeypatch, tmp_path):
    monkeypatch.setenv("UMMAYA_HOME", str(tmp_path / "home"))
    r = CliRunner().invoke(main, ["ask", "--root", str(REPO), "--mode", "mock", "--json", "부산 응급실 빈 병상 있어?"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["grounded"] is True and out["removed_claims"] == [] and out["stop_reason"] == "completed"
