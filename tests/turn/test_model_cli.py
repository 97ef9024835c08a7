"""CLI parity: ``ask`` and ``chat`` take ``--planner openai --base-url --model --profile
--fallback --context-tokens --deadline`` like ``eval turns`` does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.support.fake_openai import FakeOpenAIServer, stream_text, text_call, unavailable
from tests.turn.conftest import REPO
from ummaya.cli import main


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    monkeypatch.setenv("UMMAYA_HOME", str(tmp_path / "home"))
    for var in ("UMMAYA_LLM_API_KEY", "FRIENDLI_TOKEN", "UMMAYA_LLM_MODEL", "UMMAYA_LLM_BASE_URL", "UMMAYA_LLM_PROFILE",
                "DATA_GO_KR_SERVICE_KEY", "KAKAO_REST_API_KEY", "UMMAYA_TURN_DEADLINE_S"):
        monkeypatch.delenv(var, raising=False)


def ask(*args: str):
    return CliRunner().invoke(main, ["ask", "--root", str(REPO), "--mode", "mock", "--json", *args])


def test_ask_with_a_llama_cpp_server_reads_its_fenced_calls(env):
    script = [text_call("fence", "nmc_emergency_beds", '{"sido": "부산광역시"}'), stream_text("부산대학교병원에 병상이 있어요.", usage=None)]
    with FakeOpenAIServer(script) as srv:
        r = ask("--planner", "openai", "--base-url", srv.base_url, "--model", "qwen2.5-coder", "--profile", "llamacpp",
                "--context-tokens", "4096", "부산 응급실 빈 병상 있어?")
        sent = [q.json for q in srv.chat_requests]
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["stop_reason"] == "completed" and [c["adapter_id"] for c in out["calls"]] == ["nmc_emergency_beds"]
    assert sent[0]["model"] == "qwen2.5-coder" and sent[0]["max_tokens"] == 512 and "stream_options" not in sent[0]


def test_ask_falls_back_to_offline_when_the_server_fails(env):
    with FakeOpenAIServer([unavailable(500)]) as srv:
        r = ask("--planner", "openai", "--base-url", srv.base_url, "--fallback", "offline", "부산 응급실 빈 병상 있어?")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["stop_reason"] == "completed" and [c["adapter_id"] for c in out["calls"]] == ["nmc_emergency_beds"]


def test_a_bad_profile_or_setting_is_a_clean_error(env, monkeypatch):
    r = ask("--planner", "openai", "--profile", "tgi", "x")
    assert r.exit_code == 2 and "tgi" in r.output
    monkeypatch.setenv("UMMAYA_LLM_CONTEXT_TOKENS", "lots")
    r = ask("--planner", "openai", "--base-url", "http://127.0.0.1:9/v1", "x")
    assert r.exit_code == 3 and "UMMAYA_LLM_CONTEXT_TOKENS" in r.stdout


def test_chat_takes_the_same_model_options(env):
    with FakeOpenAIServer([text_call("bare", "nmc_emergency_beds", '{"sido": "부산광역시"}'),
                           stream_text("병상이 있어요.", usage=None)]) as srv:
        r = CliRunner().invoke(main, ["chat", "--root", str(REPO), "--mode", "mock", "--planner", "openai",
                                      "--base-url", srv.base_url, "--profile", "llamacpp", "--deadline", "60"],
                               input="부산 응급실 빈 병상 있어?\n\n")
    assert r.exit_code == 0, r.output
    assert "stop: completed" in r.output and "[MOCK]" in r.output
