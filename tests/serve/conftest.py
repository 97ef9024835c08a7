"""Fixtures for the serving API: a real build of the registry, apps on either database backend,
live uvicorn servers on loopback.

The build is made the way ``ummaya build`` lays out ``generated/`` (catalog.json with the lock hash
as release id, fixture bodies, index/documents.json), once per test session, and cached under the
system temp folder by that hash (building the index loads Kiwi: ~15 s).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.store.conftest import pg_base_url, pg_url  # noqa: F401  (PostgreSQL fixtures)
from tests.support.generated import cached_build

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def generated() -> Path:
    return cached_build()  # one real build per registry state, shared by every worker


def variant(src: Path, dst: Path, release_id: str, keep: Any = None) -> Path:
    """A copy of a build under another release id, optionally with fewer adapters."""
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("whoosh", ".complete"))
    cat = json.loads((dst / "catalog.json").read_bytes())
    cat["release_id"] = release_id
    if keep is not None:
        cat["adapters"] = [a for a in cat["adapters"] if keep(a)]
        docs = json.loads((dst / "index" / "documents.json").read_bytes())
        ids = {a["id"] for a in cat["adapters"]}
        docs["documents"] = [d for d in docs["documents"] if d["id"] in ids]
        (dst / "index" / "documents.json").write_text(json.dumps(docs, ensure_ascii=False, sort_keys=True))
    (dst / "catalog.json").write_text(json.dumps(cat, ensure_ascii=False, sort_keys=True))
    return dst


# Unpacked releases are immutable (keyed by release id and bundle hash), so every app in the
# session shares one cache folder and builds each release's search index once.
RELEASE_CACHE = Path(tempfile.gettempdir()) / f"ummaya-serve-releases-{os.getpid()}"


@pytest.fixture(scope="session", autouse=True)
def _release_cache() -> Iterator[None]:
    yield
    shutil.rmtree(RELEASE_CACHE, ignore_errors=True)


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UMMAYA_HOME", str(tmp_path / "home"))
    for name in list(os.environ):
        if name.startswith(("UMMAYA_LLM_", "UMMAYA_BASE_URL_", "UMMAYA_TRACE", "UMMAYA_DATABASE_URL")):
            monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("FRIENDLI_TOKEN", raising=False)


@pytest.fixture
def project(generated: Path, tmp_path: Path) -> Path:
    """A project root whose ``generated/`` is the session's build: what ``ummaya ask --root`` reads
    (tests/serve/test_one_trace.py, test_every_surface.py)."""
    root = tmp_path / "project"
    root.mkdir()
    (root / "generated").symlink_to(generated, target_is_directory=True)
    return root


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'serve.sqlite3'}"


def settings(generated: Path, db_url: str, tmp_path: Path, **kw: Any) -> Any:
    from ummaya.runtime.serve import ServeSettings

    kw.setdefault("release_cache", RELEASE_CACHE)
    return ServeSettings(database_url=db_url, generated=generated, **kw)


@contextlib.contextmanager
def client(generated: Path, db_url: str, tmp_path: Path, **kw: Any) -> Iterator[Any]:
    from fastapi.testclient import TestClient

    from ummaya.runtime.serve import create_app

    dispatcher_factory = kw.pop("dispatcher_factory", None)
    app = create_app(settings(generated, db_url, tmp_path, **kw), dispatcher_factory=dispatcher_factory)
    with TestClient(app, raise_server_exceptions=False) as c:
        yield c


@pytest.fixture
def api(generated: Path, sqlite_url: str, tmp_path: Path) -> Iterator[Any]:
    with client(generated, sqlite_url, tmp_path) as c:
        yield c


# -- SSE -----------------------------------------------------------------------------------------

def parse_sse(text: str) -> list[dict[str, Any]]:
    """[{id, event, data}] from an SSE body; asserts every event has id, event and JSON data."""
    out = []
    for block in text.split("\n\n"):
        if not block.strip():
            continue
        fields: dict[str, str] = {}
        for line in block.split("\n"):
            name, _, value = line.partition(": ")
            assert name in ("id", "event", "data"), line
            fields[name] = value
        assert set(fields) == {"id", "event", "data"}, block
        out.append({"id": int(fields["id"]), "event": fields["event"], "data": json.loads(fields["data"])})
    return out


# -- live servers ----------------------------------------------------------------------------------

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LiveServer:
    """``uvicorn --factory ummaya.runtime.serve.app:app_from_env`` on a loopback port."""

    def __init__(self, env: dict[str, str], log: Path, workers: int = 1):
        from tests.support.serving import listening_socket, spawn_on

        sock = listening_socket()  # bound before the start: readiness is one request (serving.py)
        self.port = sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        full = {**os.environ, **env}
        cmd = [sys.executable, "-m", "uvicorn", "--factory", "ummaya.runtime.serve.app:app_from_env",
               "--fd", str(sock.fileno()), "--log-level", "warning", "--workers", str(workers)]
        self.log = log
        self.proc = spawn_on(sock, cmd, env=full, cwd=str(REPO), stdout=open(log, "wb"),
                             stderr=subprocess.STDOUT)

    def wait_ready(self, timeout: float = 180.0) -> None:  # a deadline, not a bound: start-up publishes a release
        from tests.support.serving import wait_ready

        wait_ready(self.url, self.proc, lambda: self.log.read_text(errors="replace"), timeout)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)


@pytest.fixture
def live_server(generated: Path, tmp_path: Path) -> Iterator[Any]:
    servers: list[LiveServer] = []

    def start(db_url: str, **env: str) -> LiveServer:
        s = LiveServer({"UMMAYA_DATABASE_URL": db_url, "UMMAYA_GENERATED": str(generated),
                        "UMMAYA_HOME": str(tmp_path / "home"),
                        "UMMAYA_RELEASE_CACHE": str(RELEASE_CACHE), **env},
                       tmp_path / f"server{len(servers)}.log")
        servers.append(s)
        s.wait_ready()
        return s

    try:
        yield start
    finally:
        for s in servers:
            s.stop()
