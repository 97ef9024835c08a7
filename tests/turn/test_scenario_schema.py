"""The scenario schema (runtime/scenarios.py): every mistake is a located error, and the runner
runs a multi-turn scenario in one session, in order."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from types import SimpleNamespace

import pytest

from ummaya.runtime import events
from ummaya.runtime.scenarios import ScenarioError, Scenario, load_scenarios, run_scenario, validate_scenarios

KNOWN = {"kakao_keyword_search", "nmc_emergency_rooms", "gov24_move_in_report"}

GOOD = """\
scenarios:
  - id: single
    request: 근처 응급실 알려줘
    language: ko
    expect: {calls: [], stop_reason: needs_input}
  - id: conversation
    policy: lookup_only
    consents: [gov24_move_in_report]
    turns:
      - request: 근처 응급실 알려줘
        expect: {calls: [], stop_reason: needs_input}
      - request: 하단동
        consents: [kakao_keyword_search]
        language: ko
        expect:
          calls: [kakao_keyword_search, nmc_emergency_rooms]
          stop_reason: completed
          grounded: true
          answer_contains: [응급]
"""


def write(tmp_path: Path, text: str, name: str = "s.yaml") -> Path:
    folder = tmp_path / "registry" / "scenarios"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(text, encoding="utf-8")
    return tmp_path


def problems(tmp_path: Path, text: str) -> list[str]:
    _, found = validate_scenarios(write(tmp_path, text), KNOWN)
    return [str(p) for p in found]


def test_a_good_file_loads_both_forms(tmp_path):
    loaded = [sc for _, sc in load_scenarios(write(tmp_path, GOOD), KNOWN)]
    assert [sc.id for sc in loaded] == ["single", "conversation"]
    assert [t.request for t in loaded[0].all_turns()] == ["근처 응급실 알려줘"]
    assert loaded[0].all_turns()[0].language == "ko"
    assert loaded[1].calls == ["kakao_keyword_search", "nmc_emergency_rooms"]
    assert loaded[1].policy == "lookup_only"


@pytest.mark.parametrize(
    ("bad", "line", "message"),
    [
        # a misspelt stop reason
        ("stop_reason: needs_input}", 5, "scenarios.0.expect.stop_reason: unknown stop_reason 'needs_inputt'"),
        # an unknown key
        ("    language: ko", 4, "scenarios.0.lang: unknown key 'lang'"),
        # an adapter the registry does not hold, named at its own line
        ("          calls: [kakao_keyword_search, nmc_emergency_rooms]", 16, "scenarios.1.turns.1.expect.calls.1: unknown adapter 'nmc_emergency_roms' (not in the registry)"),
        # an unknown consent id
        ("        consents: [kakao_keyword_search]", 13, "scenarios.1.turns.1.consents.0: unknown adapter 'kakao_search' (not in the registry)"),
        # a language outside ko|en
        ("        language: ko", 14, "scenarios.1.turns.1.language: Input should be 'ko' or 'en'"),
        # a policy outside the list
        ("    policy: lookup_only", 7, "scenarios.1.policy: Input should be 'default' or 'lookup_only'"),
    ],
)
def test_each_mistake_is_a_located_error(tmp_path, bad, line, message):
    broken = {
        "stop_reason: needs_input}": "stop_reason: needs_inputt}",
        "    language: ko": "    lang: ko",
        "          calls: [kakao_keyword_search, nmc_emergency_rooms]": "          calls: [kakao_keyword_search, nmc_emergency_roms]",
        "        consents: [kakao_keyword_search]": "        consents: [kakao_search]",
        "        language: ko": "        language: kr",
        "    policy: lookup_only": "    policy: everything",
    }[bad]
    assert bad in GOOD and GOOD.splitlines()[line - 1].endswith(bad.strip()), "the line is where the mistake is"
    found = problems(tmp_path, GOOD.replace(bad, broken, 1))
    assert len(found) == 1, found
    assert found[0].startswith(f"registry/scenarios/s.yaml:{line}: {message}"), found


def test_request_and_turns_are_exclusive_and_one_is_required(tmp_path):
    both = "scenarios:\n  - id: x\n    request: a\n    expect: {stop_reason: completed}\n    turns:\n      - request: b\n        expect: {stop_reason: completed}\n"
    assert problems(tmp_path, both) == ["registry/scenarios/s.yaml:2: scenarios.0: a scenario has either request + expect or turns, not both"]
    neither = "scenarios:\n  - id: x\n    request: a\n"
    assert problems(tmp_path, neither) == ["registry/scenarios/s.yaml:2: scenarios.0: a scenario needs request + expect, or turns"]
    empty = "scenarios:\n  - id: x\n    turns: []\n"
    assert problems(tmp_path, empty)[0].startswith("registry/scenarios/s.yaml:3: scenarios.0.turns:")


def test_duplicate_ids_and_yaml_errors_are_located(tmp_path):
    write(tmp_path, GOOD, "a.yaml")
    write(tmp_path, GOOD.replace("id: conversation", "id: other"), "b.yaml")
    _, found = validate_scenarios(tmp_path, KNOWN)
    assert [str(p) for p in found] == ["registry/scenarios/b.yaml:2: scenarios.0.id: duplicate scenario id 'single' (first at registry/scenarios/a.yaml:2)"]
    write(tmp_path, "scenarios:\n  - id: [\n", "b.yaml")
    _, found = validate_scenarios(tmp_path, KNOWN)
    assert len(found) == 1 and str(found[0]).startswith("registry/scenarios/b.yaml:3: YAML syntax error")
    with pytest.raises(ScenarioError) as err:
        load_scenarios(tmp_path, KNOWN)
    assert "registry/scenarios/b.yaml:3:" in str(err.value)


def test_stop_reasons_come_from_the_closed_list(tmp_path, monkeypatch):
    text = "scenarios:\n  - id: x\n    request: a\n    expect: {stop_reason: ungrounded_new}\n"
    assert problems(tmp_path, text)
    monkeypatch.setattr(events, "STOP_REASONS", (*events.STOP_REASONS, "ungrounded_new"))
    assert problems(tmp_path, text) == []


@dataclasses.dataclass
class _FakeEngine:
    """Records each request and answers from a script, so the runner itself is under test."""

    script: list[SimpleNamespace]
    seen: list = dataclasses.field(default_factory=list)

    async def ask(self, req):
        self.seen.append(req)
        return self.script[len(self.seen) - 1]


def _result(calls, stop_reason, answer="", language="ko"):
    rows = [{"adapter_id": a, "tier": "mock", "status": "ok"} for a in calls]
    return SimpleNamespace(calls=rows, stop_reason=stop_reason, answer=answer, language=language)


def test_turns_run_in_order_in_one_session_with_consents_accumulating(tmp_path):
    sc = [sc for _, sc in load_scenarios(write(tmp_path, GOOD), KNOWN)][1]
    engine = _FakeEngine([_result([], "needs_input"), _result(["kakao_keyword_search", "nmc_emergency_rooms"], "completed", "응급실 두 곳")])
    outcome = asyncio.run(run_scenario(engine, sc))
    assert outcome.problems == []
    assert [r.query for r in engine.seen] == ["근처 응급실 알려줘", "하단동"]
    assert len({r.session_id for r in engine.seen}) == 1
    assert engine.seen[0].consents == ("gov24_move_in_report",)
    assert engine.seen[1].consents == ("gov24_move_in_report", "kakao_keyword_search")
    assert all(r.mode == "mock" for r in engine.seen)
    # a second run starts a fresh session: scenarios never see each other's state
    again = _FakeEngine(list(engine.script))
    asyncio.run(run_scenario(again, sc))
    assert again.seen[0].session_id != engine.seen[0].session_id


def test_a_wrong_turn_is_named_and_stops_the_conversation(tmp_path):
    sc = [sc for _, sc in load_scenarios(write(tmp_path, GOOD), KNOWN)][1]
    engine = _FakeEngine([_result(["nmc_emergency_rooms"], "completed"), _result([], "completed")])
    outcome = asyncio.run(run_scenario(engine, sc))
    assert len(engine.seen) == 1
    assert outcome.problems == [
        "turn 1 ('근처 응급실 알려줘'): calls ['nmc_emergency_rooms'] != expected []",
        "turn 1 ('근처 응급실 알려줘'): stop_reason 'completed' != expected 'needs_input'",
    ]


def test_language_and_grounded_are_checked(tmp_path):
    sc = [sc for _, sc in load_scenarios(write(tmp_path, GOOD), KNOWN)][1]
    wrong = _result(["kakao_keyword_search", "nmc_emergency_rooms"], "completed", "응급실", language="en")
    wrong.grounded = False
    outcome = asyncio.run(run_scenario(_FakeEngine([_result([], "needs_input"), wrong]), sc))
    assert outcome.problems == ["turn 2 ('하단동'): language 'en' != expected 'ko'", "turn 2 ('하단동'): grounded False != expected True"]


def test_policy_is_passed_when_the_engine_knows_it(tmp_path, monkeypatch):
    from ummaya.runtime import turn

    sc = [sc for _, sc in load_scenarios(write(tmp_path, GOOD), KNOWN)][1]
    fields = {f.name for f in dataclasses.fields(turn.TurnRequest)}
    engine = _FakeEngine([_result([], "needs_input"), _result(["kakao_keyword_search", "nmc_emergency_rooms"], "completed", "응급")])
    asyncio.run(run_scenario(engine, sc))
    if "policy" in fields:
        assert engine.seen[0].policy == "lookup_only"
    else:
        assert not hasattr(engine.seen[0], "policy")


def test_the_schema_is_the_one_documented():
    # Every key a scenario may carry is in the module docstring a contributor reads.
    import ummaya.runtime.scenarios as mod

    for model in (Scenario, mod.Turn, mod.Expect):
        for name in model.model_fields:
            assert f"{name}:" in mod.__doc__ or f"{name}" in mod.__doc__, name
