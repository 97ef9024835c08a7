"""``eval_turns.load`` checks every adapter id a scenario names against the catalog the evaluated
engine runs on, and names the file and line of each unknown one (a typo in ``calls`` would
otherwise run and fail as a wrong call, not as the typo it is)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.turn.conftest import REPO
from ummaya.cli import main
from ummaya.runtime.eval_turns import load
from ummaya.runtime.scenarios import ScenarioError

GENERATED = REPO / "generated"
TYPOS = """\
scenarios:
  - id: beds
    request: 부산 응급실 빈 병상 있어?
    expect: {calls: [nmc_emergency_bedz], stop_reason: completed}
  - id: er_asks_then_finds
    consents: [kakao_keyword_serch]
    turns:
      - request: 근처 응급실 알려줘
        expect: {calls: [], stop_reason: needs_input}
      - request: 동아대 승학캠퍼스
        expect: {calls: [kakao_keyword_search, nmc_emergency_rooms], stop_reason: completed}
"""


def _file(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "turns.yaml"
    p.write_text(text, encoding="utf-8")
    return p


def test_unknown_adapter_ids_are_named_with_file_and_line(tmp_path: Path) -> None:
    path = _file(tmp_path, TYPOS)
    with pytest.raises(ScenarioError) as ei:
        load(path, GENERATED)
    shown = [str(p) for p in ei.value.problems]
    assert len(shown) == 2, shown
    assert shown[0].startswith(f"{path.as_posix()}:4: ") and "unknown adapter 'nmc_emergency_bedz'" in shown[0]
    assert shown[1].startswith(f"{path.as_posix()}:6: ") and "unknown adapter 'kakao_keyword_serch'" in shown[1]


def test_known_ids_load_and_the_registry_set_loads_whole(tmp_path: Path) -> None:
    good = TYPOS.replace("nmc_emergency_bedz", "nmc_emergency_beds").replace("kakao_keyword_serch", "kakao_keyword_search")
    assert [s.id for s in load(_file(tmp_path, good), GENERATED)] == ["beds", "er_asks_then_finds"]
    assert len(load(REPO / "registry" / "scenarios", GENERATED)) > 100


def test_ids_are_checked_against_the_given_catalog(tmp_path: Path) -> None:
    """Another catalog, other ids: the one the engine runs on decides, not the project's."""
    (tmp_path / "g").mkdir()
    (tmp_path / "g" / "catalog.json").write_text('{"adapters": [{"id": "nmc_emergency_bedz"}]}', encoding="utf-8")
    with pytest.raises(ScenarioError, match="kakao_keyword_serch") as ei:
        load(_file(tmp_path, TYPOS), tmp_path / "g")
    assert "nmc_emergency_bedz" not in str(ei.value)
    with pytest.raises(ValueError, match="no compiled catalog"):
        load(_file(tmp_path, TYPOS), tmp_path / "nowhere")


def test_the_cli_fails_before_running_any_turn(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UMMAYA_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("UMMAYA_GENERATED", raising=False)
    path = _file(tmp_path, TYPOS)
    done = CliRunner().invoke(main, ["eval", "turns", "--root", str(REPO), "--scenarios", str(path)])
    assert done.exit_code == 2, done.output
    assert f"{path.as_posix()}:4: " in done.output and "unknown adapter 'nmc_emergency_bedz'" in done.output
