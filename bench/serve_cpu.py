"""Server CPU time per answer: a figure that holds on a shared, loaded machine where answers/s
does not (bench/serve.py measures throughput; other processes on the cores move it a lot).

    python bench/serve_cpu.py [--answers 300] [--concurrency 8] [--turns 1|2]

Starts ``uvicorn --factory ummaya.runtime.serve.app:app_from_env`` on 127.0.0.1 (temporary SQLite
database and UMMAYA_HOME, ``UMMAYA_SERVE_MODE=mock``), warms it up, then posts ``/v1/answer`` and
reads the server process's user+system CPU from /proc before and after. ``--turns 2`` sends each
answer's server-issued ``session_id`` back for a second turn (both turns counted).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]
QUERIES = ["동아대 승학캠퍼스 근처 약국 어디 있어?", "부산시청 위치 알려줘", "부산 서구 응급실 지금 자리 있어?"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--answers", type=int, default=300)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--turns", type=int, choices=[1, 2], default=1)
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="ummaya-bench-cpu-")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "UMMAYA_HOME": work, "UMMAYA_DATABASE_URL": f"sqlite:///{work}/b.sqlite3",
           "UMMAYA_GENERATED": str(REPO / "generated"), "UMMAYA_SERVE_MODE": "mock",
           "UMMAYA_RELEASE_CACHE": f"{work}/releases"}
    proc = subprocess.Popen([sys.executable, "-m", "uvicorn", "--factory",
                             "ummaya.runtime.serve.app:app_from_env", "--host", "127.0.0.1",
                             "--port", str(port), "--log-level", "warning"], cwd=str(REPO), env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"

    async def load(n: int) -> None:
        async with httpx.AsyncClient(timeout=60) as c:
            sem = asyncio.Semaphore(args.concurrency)

            async def one(i: int) -> None:
                async with sem:
                    r = await c.post(url + "/v1/answer", json={"query": QUERIES[i % 3], "mode": "mock"})
                    r.raise_for_status()
                    if args.turns == 2:
                        r = await c.post(url + "/v1/answer", json={
                            "query": "거기 근처 약국 다시 알려줘", "mode": "mock",
                            "session_id": r.json()["session_id"]})
                        r.raise_for_status()

            await asyncio.gather(*(one(i) for i in range(n)))

    def cpu() -> float:
        fields = Path(f"/proc/{proc.pid}/stat").read_text().split()
        return (int(fields[13]) + int(fields[14])) / os.sysconf("SC_CLK_TCK")

    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                if httpx.get(url + "/readyz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        asyncio.run(load(30))  # warm-up: release loaded, caches filled
        c0, t0 = cpu(), time.monotonic()
        asyncio.run(load(args.answers))
        c1, t1 = cpu(), time.monotonic()
    finally:
        proc.terminate()
        proc.wait(10)
    answers = args.answers * args.turns
    print(f"{(c1 - c0) / answers * 1000:.2f} ms server CPU per answer ({answers} answers, "
          f"{args.turns} turn(s) per session, wall {t1 - t0:.1f} s, load average "
          f"{os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
