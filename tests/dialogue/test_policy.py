"""Issue 9 item 7: policy mode default | lookup_only — CLI, HTTP, chat, trace."""

from __future__ import annotations

import json

from click.testing import CliRunner

from .conftest import Talk, calls


def test_lookup_only_never_goes_into_a_protected_step(engine) -> None:
    talk = Talk(engine, policy="lookup_only", consents=("welfare_eligibility_check",))
    r = talk("주거급여 받을 수 있는지 확인해줘. 이름은 최현우, 1990-05-14")
    assert r.stop_reason == "permission_denied" and r.calls[0]["status"] == "permission_denied"
    assert "조회 전용" in r.answer
    assert not [e for e in r.events if e.type == "call_started"]
    # The mode is the session's: later turns keep it without saying it again …
    r = Talk(engine)("과태료 조회해줘")
    assert r.stop_reason == "permission_denied"
    # … public look-ups still run …
    assert calls(Talk(engine)("하단동 근처 약국")) == ["kakao_keyword_search", "nmc_pharmacies"]
    # … and it is recorded in the trace.
    started = next(e for e in r.events if e.type == "turn_started")
    assert started.data["policy"] == "lookup_only"


def test_default_mode_asks_for_consent_instead(engine) -> None:
    r = Talk(engine)("과태료 조회해줘")
    assert r.stop_reason == "consent_required"


def test_cli_policy_option(tmp_path, monkeypatch, generated) -> None:
    from ummaya.cli import main as cli_main  # noqa: F401
    from ummaya.cli.ask import ask

    monkeypatch.setenv("UMMAYA_HOME", str(tmp_path))
    db = f"sqlite:///{tmp_path / 'cli.sqlite3'}"
    root = str(generated.parent)
    runner = CliRunner()
    out = runner.invoke(ask, ["과태료 조회해줘", "--json", "--mode", "mock", "--policy", "lookup_only",
                              "--session", "cli-p", "--db", db, "--root", root])
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["stop_reason"] == "permission_denied"
    bad = runner.invoke(ask, ["x", "--policy", "everything", "--db", db, "--root", root])
    assert bad.exit_code == 2 and "--policy" in bad.output


def test_chat_has_the_option() -> None:
    from ummaya.cli.chat import chat

    assert any(p.name == "policy" for p in chat.params)
