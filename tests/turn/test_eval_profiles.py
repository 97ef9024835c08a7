"""``ummaya eval turns --planner openai`` against the scripted oracle model, in every provider
profile's shapes (tests/support/model_oracle.py): every turn ends with the offline planner's stop
reason, or one that names the model's failure; every first request's prompt (system + tools) fits
the profile's context, or the budget trimmed it and said so. The full set, every profile, with the
figures: ``python bench/model_profiles.py`` (bench/README.md); here, a fixed sample of scenarios."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from tests.support.model_oracle import MODEL_FAILURE_STOPS, oracle_server, parity, record_offline
from tests.turn.conftest import REPO
from ummaya.cli import main
from ummaya.runtime.plan.openai_compat import OpenAICompatPlanner

PROFILES = ["openai", "friendli", "vllm", "llamacpp", "ollama", "generic"]


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every third scenario of the registry's set (single- and multi-turn), as one file."""
    picked: list[dict[str, Any]] = []
    for f in sorted((REPO / "registry" / "scenarios").glob("*.yaml")):
        picked += yaml.safe_load(f.read_text(encoding="utf-8"))["scenarios"]
    path = tmp_path_factory.mktemp("scenarios") / "sample.yaml"
    path.write_text(yaml.safe_dump({"scenarios": picked[::3]}, allow_unicode=True), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def recorded(sample: Path, generated: Path):
    return record_offline(generated, sample)


class Measured(OpenAICompatPlanner):
    first: list[dict[str, Any]]

    async def plan(self, ctx: Any, on_delta: Any = None) -> Any:
        action = await super().plan(ctx, on_delta)
        if ctx.step == 0:
            self.first.append(dict(action.prompt))
        return action


@pytest.mark.parametrize("profile", PROFILES)
def test_every_profile_ends_each_turn_as_the_offline_planner_does(profile, recorded, sample, catalog, retriever, store):
    from ummaya.runtime.assemble import build_engine
    from ummaya.runtime.dispatch import Dispatcher
    from ummaya.runtime.eval_turns import evaluate, load

    steps, offline, conflicts = recorded
    assert conflicts == 0  # (the offline pass rate is the scenario suite's business, not this parity)
    srv, model = oracle_server(steps, profile)
    with srv:
        planner = Measured(srv.base_url, None, "oracle", profile=profile, timeout_s=10)
        planner.first = []
        engine = build_engine(catalog.root, catalog=catalog, retriever=retriever, dispatcher=Dispatcher(catalog, env={}),
                              store=store, planner=planner)
        rep = asyncio.run(evaluate(engine, load(sample), planner=profile))
        bodies = [r.json for r in srv.chat_requests]
    par = parity(offline, rep)
    assert par["turns"] == len(offline.rows) >= 50
    assert par["different"] == 0, par["mismatches"]
    assert all(m[3] in MODEL_FAILURE_STOPS for m in par["mismatches"])
    assert par["same"] == par["turns"], par["mismatches"]  # the oracle never fails: every stop is the offline one
    assert rep.grounded_rate == 1.0
    assert model.misses == 0
    # The whole first prompt fits the profile's context (less the reply), or was trimmed and says so.
    for rep_ in planner.first:
        assert rep_["fits"], rep_
        assert rep_["prompt_tokens"] <= rep_["context_tokens"] - rep_["max_tokens"]
        if rep_["context_tokens"] >= 4096:
            assert rep_["trimmed"] == [], rep_
    # Real shapes went out: llama.cpp never sees null content; each profile's tool_choice.
    for b in bodies:
        for m in b["messages"]:
            if m["role"] == "assistant" and m.get("tool_calls"):
                assert ("content" not in m) if profile not in ("llamacpp", "generic") else m["content"] == ""
    choices = {b.get("tool_choice") for b in bodies if "tools" in b}
    assert choices <= ({"auto"} if profile in ("ollama", "generic") else {"auto", "required", "none"})


def test_eval_turns_cli_against_a_llama_cpp_shaped_server(recorded, sample, monkeypatch, tmp_path):
    steps, offline, _ = recorded
    monkeypatch.setenv("UMMAYA_HOME", str(tmp_path / "home"))
    for var in ("UMMAYA_LLM_API_KEY", "FRIENDLI_TOKEN", "UMMAYA_LLM_MODEL", "UMMAYA_LLM_PROFILE",
                "DATA_GO_KR_SERVICE_KEY", "KAKAO_REST_API_KEY", "JUSO_CONFM_KEY", "SGIS_CONSUMER_KEY"):
        monkeypatch.delenv(var, raising=False)
    srv, _ = oracle_server(steps, "llamacpp")
    with srv:
        r = CliRunner().invoke(main, ["eval", "turns", "--root", str(REPO), "--planner", "openai",
                                      "--base-url", srv.base_url, "--model", "qwen2.5-coder-1.5b-instruct",
                                      "--profile", "llamacpp", "--context-tokens", "4096",
                                      "--scenarios", str(sample), "--json"])
    assert r.exit_code == 0, r.output
    got = json.loads(r.stdout)
    expected: dict[str, dict[str, int]] = {}
    for row in offline.rows:
        expected.setdefault(row.expected, {}).setdefault(row.got, 0)
        expected[row.expected][row.got] += 1
    assert got["stop_reason_confusion"] == expected
    assert got["grounded_rate"] == 1.0 and got["turns"] == len(offline.rows)
