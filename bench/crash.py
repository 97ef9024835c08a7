"""Kill the server with SIGKILL under load, restart it, and check that nothing completed was lost:
every answer a client received (200, ``completed``) has its trace readable after the restart, and
the consent ledger — appended to by the same load — still verifies.

    python bench/crash.py                                   # SQLite, 8 kills
    python bench/crash.py --db postgresql://…/db --kills 8  # a fresh schema is made and dropped

Each round: start ``uvicorn --factory ummaya.runtime.serve.app:app_from_env`` on 127.0.0.1
(``UMMAYA_SERVE_MODE=mock``), run ``--clients`` loops of two-turn sessions (a first turn, then a
turn that grants consent for a consent-gated adapter in the issued session) for a random
1–3 s, SIGKILL the server mid-load, restart it on the same database and UMMAYA_HOME, read back
every completed trace and run ``ummaya consent verify``. Loopback only.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def gated_query() -> tuple[str, str]:
    cat = json.loads((REPO / "generated" / "catalog.json").read_bytes())
    for a in sorted(cat["adapters"], key=lambda a: a["id"]):
        if a["tier"] != "handoff" and a["permission"].get("consent") \
                and a["permission"]["gate"] not in ("read-only", "blocked"):
            return a["id"], a["examples"]["ko"][0]
    raise SystemExit("no consent-gated adapter in the catalog")


class Server:
    def __init__(self, env: dict[str, str]):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "--factory", "ummaya.runtime.serve.app:app_from_env",
             "--host", "127.0.0.1", "--port", str(self.port), "--log-level", "warning"],
            cwd=str(REPO), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise SystemExit("server exited at start")
            try:
                if httpx.get(self.url + "/readyz", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        raise SystemExit("server not ready")

    def kill9(self) -> None:
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)


async def load(url: str, seconds: float, clients: int, adapter: str, query: str,
               done: list[str]) -> None:
    stop_at = time.monotonic() + seconds

    async def client() -> None:
        async with httpx.AsyncClient(timeout=30) as c:
            while time.monotonic() < stop_at:
                try:
                    r = await c.post(url + "/v1/answer", json={"query": query, "mode": "mock"})
                    if r.status_code != 200:
                        continue
                    j = r.json()
                    done.append(j["trace_id"])
                    r = await c.post(url + "/v1/answer", json={
                        "query": query, "mode": "mock", "session_id": j["session_id"],
                        "consents": [adapter]})
                    if r.status_code == 200:
                        done.append(r.json()["trace_id"])
                except httpx.HTTPError:
                    return  # the server was killed under us

    await asyncio.gather(*(client() for _ in range(clients)))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", default=None, help="postgresql://… (default: a temporary SQLite file)")
    ap.add_argument("--kills", type=int, default=8)
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    rnd = random.Random(args.seed)
    home = tempfile.mkdtemp(prefix="ummaya-bench-crash-")
    schema = None
    if args.db:
        import psycopg

        schema = f"crash_{uuid.uuid4().hex[:10]}"
        with psycopg.connect(args.db, autocommit=True) as conn:
            conn.execute(f"CREATE SCHEMA {schema}")
        sep = "&" if "?" in args.db else "?"
        url = f"{args.db}{sep}options=-csearch_path%3D{schema}"
    else:
        url = f"sqlite:///{home}/crash.sqlite3"
    env = {**os.environ, "UMMAYA_HOME": home, "UMMAYA_DATABASE_URL": url,
           "UMMAYA_GENERATED": str(REPO / "generated"), "UMMAYA_SERVE_MODE": "mock",
           "UMMAYA_RELEASE_CACHE": f"{home}/releases"}
    adapter, query = gated_query()
    completed: list[str] = []
    lost: list[str] = []
    ledger: list[bool] = []
    try:
        for _ in range(args.kills):
            srv = Server(env)
            # one answer first: the release's index is loaded lazily, and a kill before any answer
            # completes would prove nothing
            httpx.post(srv.url + "/v1/answer", json={"query": query, "mode": "mock"}, timeout=60)
            got: list[str] = []

            async def round_() -> None:
                task = asyncio.create_task(load(srv.url, 30, args.clients, adapter, query, got))
                await asyncio.sleep(rnd.uniform(1.0, 3.0))
                srv.kill9()
                await task

            asyncio.run(round_())
            completed += got
            srv = Server(env)  # restart on the same database and home
            try:
                for tid in got:
                    if httpx.get(f"{srv.url}/v1/traces/{tid}", timeout=10).status_code != 200:
                        lost.append(tid)
            finally:
                srv.stop()
            out = subprocess.run([str(Path(sys.executable).with_name("ummaya")), "consent", "verify", "--json"],
                                 env=env, capture_output=True, text=True, timeout=120, cwd=str(REPO))
            ledger.append(out.returncode == 0)
            if out.returncode != 0:
                print("ledger:", out.stdout.strip() or out.stderr.strip()[-300:], file=sys.stderr)
    finally:
        if schema:
            import psycopg

            with psycopg.connect(args.db, autocommit=True) as conn:
                conn.execute(f"DROP SCHEMA {schema} CASCADE")
    backend = "postgresql" if args.db else "sqlite"
    print(json.dumps({"backend": backend, "kills": args.kills, "completed_answers": len(completed),
                      "lost_traces": len(lost), "ledger_verified_after_each_kill": sum(ledger),
                      "load_average": round(os.getloadavg()[0], 1)}))


if __name__ == "__main__":
    main()
