"""Fixtures: the same storage suite against SQLite (a file in tmp_path) and a real PostgreSQL.

PostgreSQL comes from ``UMMAYA_TEST_DATABASE_URL`` when set (``.ci/postgres.sh`` prints it);
otherwise a throwaway cluster is started once per test session: initdb into a temporary folder,
pg_ctl start on a free loopback port with its unix socket in that folder. PostgreSQL refuses to
run as root, so under root the server runs as the ``postgres`` system user (runuser). Each test
gets its own schema (``?options=-csearch_path=…`` in the URL), so tests never see each other.
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest

PG_BIN_CANDIDATES = [Path("/usr/local/bin")] + sorted(
    Path("/usr/lib/postgresql").glob("*/bin"), reverse=True
)


def _pg_bin(name: str) -> str | None:
    for folder in PG_BIN_CANDIDATES:
        if (folder / name).exists():
            return str(folder / name)
    return shutil.which(name)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LocalPostgres:
    """A throwaway PostgreSQL cluster owned by this test session."""

    def __init__(self) -> None:
        self.initdb = _pg_bin("initdb")
        self.pg_ctl = _pg_bin("pg_ctl")
        if not self.initdb or not self.pg_ctl:
            raise RuntimeError("PostgreSQL server binaries (initdb, pg_ctl) not found")
        self.user: str | None = None
        if os.geteuid() == 0:
            try:
                pwd.getpwnam("postgres")
            except KeyError:
                subprocess.run(["useradd", "--system", "--no-create-home", "postgres"],
                               check=True, capture_output=True)
            self.user = "postgres"
        self.dir = Path(tempfile.mkdtemp(prefix="ummaya-pg-"))
        self.data = self.dir / "data"
        self.port = _free_port()
        if self.user:
            pw = pwd.getpwnam(self.user)
            os.chown(self.dir, pw.pw_uid, pw.pw_gid)

    def _run(self, *args: str) -> subprocess.CompletedProcess[str]:
        cmd = list(args)
        if self.user:
            cmd = ["runuser", "-u", self.user, "--", *cmd]
        return subprocess.run(cmd, check=True, capture_output=True, text=True)

    def start(self) -> str:
        self._run(self.initdb, "-D", str(self.data), "-A", "trust", "-U", "postgres",
                  "-E", "UTF8", "--locale=C", "--no-sync")
        opts = (f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c fsync=off "
                "-c synchronous_commit=off -c full_page_writes=off -c max_connections=100")
        for attempt in range(3):
            try:
                self._run(self.pg_ctl, "-D", str(self.data), "-o", opts,
                          "-l", str(self.dir / "server.log"), "-w", "-t", "60", "start")
                break
            except subprocess.CalledProcessError:
                if attempt == 2:
                    raise RuntimeError("pg_ctl start failed:\n"
                                       + (self.dir / "server.log").read_text(errors="replace"))
                self.port = _free_port()
                opts = opts.replace(opts.split()[1], str(self.port), 1)
        import psycopg

        with psycopg.connect(f"postgresql://postgres@127.0.0.1:{self.port}/postgres",
                             autocommit=True) as conn:
            conn.execute("CREATE DATABASE ummaya_test")
        return f"postgresql://postgres@127.0.0.1:{self.port}/ummaya_test"

    def stop(self) -> None:
        try:
            self._run(self.pg_ctl, "-D", str(self.data), "-m", "immediate", "-w", "stop")
        except Exception:
            pass
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture(scope="session")
def pg_base_url() -> Iterator[str]:
    env = os.environ.get("UMMAYA_TEST_DATABASE_URL")
    if env:
        yield env
        return
    try:
        server = LocalPostgres()
    except RuntimeError as exc:
        pytest.skip(f"no PostgreSQL: {exc}")
    try:
        url = server.start()
    except Exception:
        server.stop()
        raise
    try:
        yield url
    finally:
        server.stop()


def with_schema(base_url: str, schema: str) -> str:
    sep = "&" if "?" in base_url else "?"
    return f"{base_url}{sep}options={quote(f'-csearch_path={schema}')}"


@pytest.fixture
def pg_url(pg_base_url: str) -> Iterator[str]:
    """A fresh, empty schema on the test database; dropped afterwards."""
    import psycopg

    schema = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(pg_base_url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    try:
        yield with_schema(pg_base_url, schema)
    finally:
        with psycopg.connect(pg_base_url, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The URL of an empty database, once per backend."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'ummaya.sqlite3'}"
    return request.getfixturevalue("pg_url")


@pytest.fixture
def store(db_url: str):
    from ummaya.runtime.store import RetentionPolicy, open_store

    s = open_store(db_url, policy=RetentionPolicy())
    try:
        yield s
    finally:
        s.close()
