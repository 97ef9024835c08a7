"""Issue 11 item 9 on the command line: every bad option value ends with a clean message and exit
2 — never a traceback. Invalid bytes arrive the way a shell passes them (surrogate escapes)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.store.conftest import db_url, pg_base_url, pg_url  # noqa: F401  (fixtures)
from ummaya.cli import main

BAD_BYTES = b"s\xff\xfe".decode("utf-8", "surrogateescape")  # what argv holds for invalid UTF-8


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cases(tmp: Path) -> list[list[str]]:
    folder = tmp / "a-folder"
    folder.mkdir(exist_ok=True)
    unreachable = f"postgresql://nobody@127.0.0.1:{_closed_port()}/x"
    out: list[list[str]] = []
    for db in ("mysql://user@host/db", "redis://x", str(folder), "/proc/no/such.db",
               "sqlite:////proc/nope/x.db", f"/tmp/{BAD_BYTES}.db", unreachable, "bad\x01url"):
        out += [["ask", "약국", "--db", db], ["chat", "--db", db], ["trace", "list", "--db", db],
                ["traces", "purge", "--db", db], ["consent", "verify", "--db", db],
                ["consent", "list", "--db", db], ["release", "list", "--db", db],
                ["serve", "--db", db]]
    for session in (BAD_BYTES, "", "a\tb", "x" * 129, "new\nline"):
        out += [["ask", "약국", "--session", session], ["chat", "--session", session],
                ["trace", "list", "--session", session], ["consent", "list", "--session", session],
                ["consent", "grant", "welfare_eligibility_check", "--session", session]]
    out += [
        ["ask", "약국", "--session", "*"],  # '*' means every session: not a session to talk in
        ["trace", "show", BAD_BYTES], ["trace", "show", "has space"],
        ["consent", "revoke", BAD_BYTES],
        ["consent", "grant", "no_such_adapter", "--session", "s1"],
        ["consent", "grant", "kakao_keyword_search", "--session", "s1"],
        ["ask", "약국", "--root", "/no/such/folder"], ["search", "약국", "--root", "/no/such/folder"],
        ["adapters", "--root", "/no/such/folder"], ["release", "publish", "--root", "/no/such/folder"],
        ["search", "약국", "--filter", "tier=weird"], ["search", "약국", "--filter", "primitive=fly"],
        ["search", "약국", "--filter", "nokeyvalue"],
        ["eval", "retrieval", "--file", "/no/such/file.yaml"],
        ["ask", "약국", "--top-k", "0"], ["ask", "약국", "--mode", "turbo"],
        ["ask", "약국", "--consent", "no_such_adapter"], ["trace", "list", "--limit", "0"],
    ]
    return out


def test_every_bad_option_value_exits_2_without_a_traceback(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("UMMAYA_DATABASE_URL", f"sqlite:///{tmp_path / 'ok.sqlite3'}")
    failures = []
    for args in cases(tmp_path):
        r = CliRunner().invoke(main, args)
        crashed = r.exception is not None and not isinstance(r.exception, SystemExit)
        if r.exit_code != 2 or crashed or "Traceback" in r.output:
            failures.append((args, r.exit_code, repr(r.exception), r.output[-300:]))
    assert not failures, "\n".join(map(str, failures))


@pytest.mark.parametrize("env", [{"UMMAYA_TRACE_TTL_DAYS": "soon"}, {"UMMAYA_TRACE_RAW_TEXT": "all"},
                                 {"UMMAYA_DATABASE_URL": "mysql://x"}])
def test_bad_environment_values_exit_2(tmp_path: Path, monkeypatch, env: dict) -> None:
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    for args in (["trace", "list"], ["consent", "verify"], ["ask", "약국"]):
        r = CliRunner().invoke(main, args)
        assert r.exit_code == 2 and "Traceback" not in r.output, (args, r.output)
        assert next(iter(env)) in r.output or "mysql" in r.output


@pytest.mark.parametrize("env", [{"UMMAYA_API_KEYS": "short"}, {"UMMAYA_MAX_BODY_BYTES": "lots"},
                                 {"UMMAYA_BODY_READ_TIMEOUT_S": "-1"},
                                 {"UMMAYA_MAX_JSON_DEPTH": "0"}])
def test_serve_refuses_bad_settings_before_starting(tmp_path: Path, monkeypatch, env: dict) -> None:
    monkeypatch.setenv("UMMAYA_DATABASE_URL", f"sqlite:///{tmp_path / 'ok.sqlite3'}")
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    r = CliRunner().invoke(main, ["serve", "--port", "0"])
    assert r.exit_code == 2 and next(iter(env)) in r.output, r.output


def test_invalid_bytes_from_a_real_shell(tmp_path: Path) -> None:
    """The installed entry point in a fresh process, argv bytes that are not UTF-8."""
    exe = Path(sys.executable).with_name("ummaya")
    env = {**os.environ, "UMMAYA_HOME": str(tmp_path / "home")}
    for args in ([b"ask", "약국".encode(), b"--session", b"\xff\xfe"],
                 [b"trace", b"show", b"\xff"],
                 [b"consent", b"list", b"--db", b"/tmp/\xff.db"]):
        out = subprocess.run([os.fsencode(exe), *args], capture_output=True, env=env, timeout=120)
        assert out.returncode == 2, (args, out.stderr[-500:])
        assert b"Traceback" not in out.stderr and b"invalid bytes" in out.stderr


def test_unopenable_database_on_both_backends(db_url: str, tmp_path: Path) -> None:  # noqa: F811
    """A reachable database works; the same command with a broken variant of it exits 2."""
    assert CliRunner().invoke(main, ["consent", "verify", "--db", db_url]).exit_code == 0
    broken = (db_url.replace("/ummaya_test", "/no_such_database") if db_url.startswith("postgres")
              else f"sqlite:///{tmp_path}")  # a folder, not a file
    r = CliRunner().invoke(main, ["consent", "verify", "--db", broken])
    assert r.exit_code == 2 and "store_unavailable" in r.output and "Traceback" not in r.output
