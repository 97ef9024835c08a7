"""Time the MCP server as a host sees it: ``tools/list`` and a Mock ``tools/call``.

    python bench/mcp.py                  # stdio and streamable HTTP, 200 rounds each
    python bench/mcp.py --rounds 500 --json

Two transports, each driven by the official SDK's client (``mcp.Client``, its response cache
off so every ``tools/list`` reaches the server):

* stdio: ``ummaya mcp --mode mock`` as a subprocess (what Claude Desktop or Cursor start);
* HTTP: ``ummaya serve`` on 127.0.0.1 with ``UMMAYA_SERVE_MODE=mock``, the client on ``/mcp``
  (protocol 2026-07-28: one self-contained POST per request).

Each gets a fresh UMMAYA_HOME and SQLite store in a temporary folder. After ``--warmup`` rounds,
``--rounds`` times: ``tools/list`` (27 tools with their schemas), then ``tools/call
nmc_emergency_rooms`` (Mock: the same client and parser fed from the recorded fixture, a trace
written per call). Times are client-side round trips; p50 and p95 are printed.

Targets (issue 14, loopback): ``tools/list`` ≤ 50 ms and a Mock ``tools/call`` ≤ 20 ms p50.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

# `python bench/mcp.py` puts bench/ first on sys.path, where this file would shadow the SDK's `mcp`.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import anyio  # noqa: E402
import httpx  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402

UMMAYA = str(Path(sys.executable).with_name("ummaya"))
ARGS = {"latitude": 35.0966, "longitude": 128.9632}


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


async def measure(server: Any, rounds: int, warmup: int) -> dict[str, Any]:
    lists: list[float] = []
    calls: list[float] = []
    async with Client(server, cache=None) as c:
        for i in range(warmup + rounds):
            t0 = time.perf_counter()
            tools = (await c.list_tools()).tools
            t1 = time.perf_counter()
            r = await c.call_tool("nmc_emergency_rooms", ARGS)
            t2 = time.perf_counter()
            assert len(tools) >= 27 and not r.is_error and "[Mock" in r.content[0].text
            if i >= warmup:
                lists.append((t1 - t0) * 1000)
                calls.append((t2 - t1) * 1000)
        version = c.protocol_version
    return {"protocol": version, "rounds": rounds,
            "tools_list_ms": {"p50": round(statistics.median(lists), 2), "p95": round(pct(lists, .95), 2)},
            "mock_call_ms": {"p50": round(statistics.median(calls), 2), "p95": round(pct(calls, .95), 2)}}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="ummaya-bench-mcp-") as tmp:
        env = {**os.environ, "UMMAYA_HOME": str(Path(tmp) / "home"), "UMMAYA_SERVE_MODE": "mock"}
        env.pop("UMMAYA_DATABASE_URL", None)
        stdio = StdioServerParameters(command=UMMAYA, args=["mcp", "--mode", "mock", "--db",
                                                            f"sqlite:///{tmp}/stdio.sqlite3"], env=env)
        out["stdio"] = anyio.run(measure, stdio, args.rounds, args.warmup)
        port = free_port()
        proc = subprocess.Popen([UMMAYA, "serve", "--port", str(port), "--db", f"sqlite:///{tmp}/http.sqlite3",
                                 "--log-level", "warning"], env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        try:
            url = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + 90
            while time.monotonic() < deadline:
                try:
                    if httpx.get(url + "/readyz", timeout=1).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                time.sleep(0.2)
            out["http"] = anyio.run(measure, url + "/mcp", args.rounds, args.warmup)
        finally:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
    if args.json:
        print(json.dumps(out, indent=2))
        return
    for name, r in out.items():
        print(f"{name:5} ({r['protocol']}, {r['rounds']} rounds): tools/list p50 {r['tools_list_ms']['p50']} ms "
              f"p95 {r['tools_list_ms']['p95']} ms · Mock tools/call p50 {r['mock_call_ms']['p50']} ms "
              f"p95 {r['mock_call_ms']['p95']} ms")


if __name__ == "__main__":
    main()
