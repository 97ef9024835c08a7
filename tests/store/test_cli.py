"""``ummaya consent …``, ``ummaya trace …`` and ``ummaya traces purge`` on both backends."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

from click.testing import CliRunner

from ummaya.cli import main
from ummaya.runtime.store import Trace, open_store

from .conftest import _free_port
from .test_store import NOTICE, Raw, _drop_guards, _trace

UTC = timezone.utc


def run(*args: str, env: dict | None = None):
    result = CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)
    return result


def test_consent_list_revoke_verify(store, db_url: str) -> None:
    r = run("consent", "list", "--db", db_url)
    assert r.exit_code == 0 and "no consents" in r.output
    g1 = store.grant_consent("s1", "nmc_emergency_rooms", **NOTICE)
    g2 = store.grant_consent("s2", "nmc_emergency_rooms", **NOTICE)
    store.grant_consent("*", "hira_pharmacies", **NOTICE)

    r = run("consent", "list", "--db", db_url, "--json")
    rows = json.loads(r.output)["consents"]
    assert [(c["consent_id"], c["status"]) for c in rows][:2] == [(g1.consent_id, "active"),
                                                                  (g2.consent_id, "active")]
    assert rows[0]["purpose"] == NOTICE["purpose"] and rows[0]["hash"] == g1.hash
    r = run("consent", "list", "--db", db_url, "--session", "s1")
    assert g1.consent_id in r.output and g2.consent_id not in r.output
    assert "거부 right to refuse" in r.output

    r = run("consent", "revoke", g1.consent_id, "--db", db_url)
    assert r.exit_code == 0 and f"revoked {g1.consent_id}" in r.output
    assert not store.has_consent("s1", "nmc_emergency_rooms")
    r = run("consent", "revoke", "--adapter", "nmc_emergency_rooms", "--session", "s2", "--db", db_url,
            "--json")
    assert [x["consent_id"] for x in json.loads(r.output)["revoked"]] == [g2.consent_id]
    assert not store.has_consent("s2", "nmc_emergency_rooms")
    assert store.has_consent("s9", "hira_pharmacies")  # untouched standing consent
    r = run("consent", "revoke", "no-such-id", "--db", db_url)
    assert r.exit_code == 1
    r = run("consent", "revoke", "--adapter", "x", "--db", db_url)
    assert r.exit_code == 2  # usage error

    rows = json.loads(run("consent", "list", "--all", "--json", "--db", db_url).output)["consents"]
    assert [c["action"] for c in rows] == ["grant", "grant", "grant", "revoke", "revoke"]
    assert {c["status"] for c in rows if c["consent_id"] == g1.consent_id} == {"revoked"}

    r = run("consent", "verify", "--db", db_url)
    assert r.exit_code == 0 and "5 consent records" in r.output

    raw = Raw(db_url)
    try:
        _drop_guards(raw)
        raw("UPDATE consents SET adapter_id = ? WHERE seq = ?", ("traffic_fine_payment", g2.seq))
    finally:
        raw.close()
    r = run("consent", "verify", "--db", db_url)
    assert r.exit_code == 1 and f"seq={g2.seq}" in r.output
    r = run("consent", "verify", "--db", db_url, "--json")
    report = json.loads(r.stdout)
    assert r.exit_code == 1 and report["ok"] is False and report["broken_seq"] == g2.seq


def test_trace_list_show_and_purge(store, db_url: str) -> None:
    now = datetime.now(UTC)
    old = store.put_trace(_trace(created_at=now - timedelta(days=40)))
    new = store.put_trace(_trace(created_at=now - timedelta(minutes=1)))

    r = run("trace", "list", "--db", db_url, "--json")
    listed = json.loads(r.output)["traces"]
    assert [t["trace_id"] for t in listed] == [new.trace_id]  # the expired one is unreadable
    r = run("trace", "show", old.trace_id, "--db", db_url, "--json")
    assert r.exit_code == 1 and json.loads(r.output)["error"]["code"] == "trace_not_found"
    assert all(t["expires_at"] for t in listed) and "events" not in listed[0]
    assert len(json.loads(run("trace", "list", "--limit", "1", "--json", "--db", db_url).output)["traces"]) == 1
    r = run("trace", "list", "--db", db_url)
    assert new.trace_id in r.output and "expires" in r.output and "010-1234-5678" not in r.output

    r = run("trace", "show", new.trace_id, "--json", "--db", db_url)
    shown = json.loads(r.output)
    assert shown["trace_id"] == new.trace_id and shown["expires_at"]
    assert shown["release_id"] == "rel-abc" and len(shown["events"]) == 4
    assert "[전화번호]" in shown["request_text"]
    r = run("trace", "show", new.trace_id, "--db", db_url)
    assert "expires_at" in r.output and "call_started" in r.output
    r = run("trace", "show", "01NOPE", "--db", db_url, "--json")
    assert r.exit_code == 1 and json.loads(r.output)["error"]["code"] == "trace_not_found"

    r = run("traces", "purge", "--db", db_url, "--json")
    assert json.loads(r.output) == {"purged": 1}
    assert store.get_trace(old.trace_id) is None and store.get_trace(new.trace_id) is not None
    assert "purged 0" in run("traces", "purge", "--db", db_url).output


def test_default_database_from_env_and_state_dir(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = {"UMMAYA_HOME": str(home), "UMMAYA_DATABASE_URL": ""}
    r = run("trace", "list", env=env)
    assert r.exit_code == 0 and (home / "ummaya.sqlite3").exists()
    other = tmp_path / "other.sqlite3"
    s = open_store(f"sqlite:///{other}")
    try:
        t = s.put_trace(Trace(request_text="x"))
    finally:
        s.close()
    r = run("trace", "list", "--json", env={**env, "UMMAYA_DATABASE_URL": f"sqlite:///{other}"})
    assert [x["trace_id"] for x in json.loads(r.output)["traces"]] == [t.trace_id]


def test_installed_command_runs(tmp_path: Path) -> None:
    """The real entry point, lazily registered: a new process, a fresh file."""
    exe = Path(sys.executable).with_name("ummaya")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-c", "from ummaya.cli import main; main()"]
    db = f"sqlite:///{tmp_path / 'cli.sqlite3'}"
    out = subprocess.run([*cmd, "consent", "verify", "--json", "--db", db], capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {"ok": True, "records": 0, "broken_seq": None,
                                      "broken_consent_id": None, "reason": None,
                                      "head": "0" * 64, "head_seq": None}
    out = subprocess.run([*cmd, "traces", "purge", "--db", db], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0 and "purged 0" in out.stdout


def test_unreachable_database_is_a_clear_error() -> None:
    port = _free_port()  # nothing listens there
    for args in (["consent", "verify"], ["trace", "list"], ["traces", "purge"]):
        r = CliRunner().invoke(main, [*args, "--db", f"postgresql://nobody@127.0.0.1:{port}/x"])
        assert r.exit_code == 2, (args, r.output)
        assert "store_unavailable" in r.output
    r = CliRunner().invoke(main, ["consent", "list", "--db", "mysql://x"])
    assert r.exit_code == 2 and "unsupported database URL" in r.output
