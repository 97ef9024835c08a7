"""Issue 22 item 4: one wheel, tested as a citizen or an operator would install it.

Builds the wheel from the tracked files, installs it into a fresh virtualenv (no checkout on the
path, an empty working directory, its own UMMAYA_HOME) and runs ``ummaya ask``, ``ummaya serve``
(one /v1/answer request) and ``ummaya mcp`` (tools/list over stdio). Dependencies come from the
machine's pip configuration (its cache or local index). It takes a minute or so, so it runs only
where ``UMMAYA_WHEEL_TEST=1`` — ``.ci/run`` sets it in a step of its own; it prints the measured
build and install times (the figure in bench/README.md).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

REPO = Path(__file__).resolve().parents[2]
QUERY = "동아대 승학캠퍼스 근처 응급실 알려줘"

pytestmark = pytest.mark.skipif(os.environ.get("UMMAYA_WHEEL_TEST") != "1",
                                reason="builds and installs the wheel (~1 min): UMMAYA_WHEEL_TEST=1 (.ci/run sets it)")


def _source_copy(dst: Path) -> Path:
    """The tracked files only: what a release tarball or a fresh clone holds, nothing local."""
    try:
        files = subprocess.run(["git", "-C", str(REPO), "ls-files", "-z"], check=True, capture_output=True).stdout
    except (OSError, subprocess.CalledProcessError):
        shutil.copytree(REPO, dst, ignore=shutil.ignore_patterns(".venv", ".git", "build", "*.egg-info"))
        return dst
    for rel in filter(None, files.decode().split("\0")):
        src = REPO / rel
        if src.is_file():
            (dst / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst / rel)
    return dst


def _clean_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("UMMAYA_", "PYTHON", "VIRTUAL_ENV", "OTEL_", "DATA_GO_KR", "KAKAO", "JUSO", "SGIS"))}
    return env | {"UMMAYA_HOME": str(home), "PYTHONNOUSERSITE": "1"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("wheel")
    t0 = time.perf_counter()
    src = _source_copy(tmp / "src")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp / "dist"), str(src)],
                   check=True, capture_output=True)
    wheels = list((tmp / "dist").glob("ummaya-*.whl"))
    assert len(wheels) == 1, wheels
    built = time.perf_counter()
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(venv / "bin" / "pip"), "install", "-q", str(wheels[0])], check=True, capture_output=True,
                   env=_clean_env(tmp / "home"))
    done = time.perf_counter()
    print(f"\nwheel: built in {built - t0:.1f} s ({wheels[0].stat().st_size / 2**20:.1f} MiB); fresh venv + install "
          f"{done - built:.1f} s on {os.cpu_count()} cores (load {os.getloadavg()[0]:.1f})")
    (tmp / "cwd").mkdir()
    return venv


def _run(venv: Path, *args: str, cwd: Path, **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(venv / "bin" / "ummaya"), *args], cwd=cwd, capture_output=True, text=True,
                          env=_clean_env(cwd.parent / "home"), timeout=120, **kw)  # type: ignore[call-overload]


def test_the_wheel_holds_no_checkout(installed: Path) -> None:
    py = installed / "bin" / "python"
    where = subprocess.run([str(py), "-c", "import ummaya, ummaya.runtime, ummaya.generated as g; "
                            "print(ummaya.__file__); print(g.__file__)"],
                           cwd=installed.parent / "cwd", capture_output=True, text=True, check=True,
                           env=_clean_env(installed.parent / "home")).stdout.split()
    assert all(str(installed) in w for w in where) and not any(str(REPO) in w for w in where), where


def test_ask_answers_from_the_wheel(installed: Path) -> None:
    t = time.perf_counter()
    r = _run(installed, "ask", "--json", QUERY, cwd=installed.parent / "cwd")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    print(f"\nwheel: first `ummaya ask` {time.perf_counter() - t:.2f} s")
    assert out["stop_reason"] == "completed" and out["grounded"] is True
    assert out["calls"] and all(c["tier"] == "mock" for c in out["calls"])


def test_serve_answers_one_request(installed: Path) -> None:
    from tests.support.serving import listening_socket, spawn_on, wait_ready

    sock = listening_socket()  # bound before the start: readiness is one request (serving.py)
    port = sock.getsockname()[1]
    cwd = installed.parent / "cwd"
    env = _clean_env(cwd.parent / "home") | {"UMMAYA_SERVE_MODE": "mock"}
    log = cwd.parent / "serve.log"
    with open(log, "wb") as out:
        proc = spawn_on(sock, [str(installed / "bin" / "ummaya"), "serve", "--fd", str(sock.fileno()), "--db",
                               f"sqlite:///{cwd.parent / 'serve.sqlite3'}", "--log-level", "warning"],
                        cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        base = f"http://127.0.0.1:{port}"
        # A deadline for a hung start-up (publishing the packaged build once), not a bound.
        wait_ready(base, proc, lambda: log.read_text(errors="replace"), timeout=120)
        r = httpx.post(base + "/v1/answer", json={"query": QUERY, "mode": "mock"}, timeout=60)
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["stop_reason"] == "completed" and body["evidence"]
        assert [e["rank"] for e in body["evidence"]] == list(range(1, len(body["evidence"]) + 1))
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_mcp_lists_tools_over_stdio(installed: Path) -> None:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    cwd = installed.parent / "cwd"
    params = StdioServerParameters(command=str(installed / "bin" / "ummaya"), args=["mcp", "--mode", "mock"],
                                   env=_clean_env(cwd.parent / "home"), cwd=str(cwd))

    async def tools() -> list[str]:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            return [t.name for t in (await session.list_tools()).tools]

    names = asyncio.run(asyncio.wait_for(tools(), 120))
    catalog = json.loads((REPO / "generated" / "catalog.json").read_bytes())
    assert "ask" in names
    assert {a["id"] for a in catalog["adapters"]} <= set(names)
