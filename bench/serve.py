"""Load the serving API on loopback and report what a deployment would see.

    python bench/serve.py                      # 1 uvicorn worker, SQLite, mock dispatch
    python bench/serve.py --workers 2 --seconds 5 --json

One worker is the default because with SQLite two worker processes wait on each other's write lock
(SQLite's busy handler sleeps in 1–100 ms steps), which costs more on 2 cores than the second
process gains; with PostgreSQL, use --workers N.

Starts ``uvicorn --factory ummaya.runtime.serve.app:app_from_env`` on 127.0.0.1 (a fresh SQLite
database and UMMAYA_HOME in a temporary folder, ``UMMAYA_SERVE_MODE=mock`` so no adapter call can
leave the machine, traces on with the default policy), then:

1. JSON: ``--concurrency`` clients post ``/v1/answer`` back to back for ``--seconds``;
2. SSE: the same with ``stream: true``; time to first event = request sent → first SSE frame;
3. burst: ``--streams`` (500) SSE answers opened at once; each must end with ``completed``
   within ``--burst-timeout`` seconds.

It prints answers/s, p50/p99 latency, first-event p50/p99 and ``streams completed: N/500``, then
stops the server. The client is a small raw-socket HTTP/1.1 client (keep-alive, chunked) so that
on a 2-core machine the load generator takes as little CPU from the server as possible; client and
server still share the cores, so the figures are conservative.

Targets (issue 4, 2 cores): ≥ 100 answers/s, first SSE event p50 ≤ 25 ms, 500/500 streams.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
QUERIES = [
    "동아대 승학캠퍼스 근처 약국 어디 있어?",
    "부산 서구 응급실 지금 자리 있어?",
    "부산시청 위치 알려줘",
    "세종대로 110 우편번호 뭐야?",
    "이사했는데 전입신고 어떻게 해?",
    "How is the air quality in Busan right now?",
    "타이레놀 하루에 몇 알까지 먹어도 돼?",
    "Where can I buy cold medicine near Seoul City Hall?",
]


# -- a minimal HTTP/1.1 client ---------------------------------------------------------------------

class Conn:
    def __init__(self, host: str, port: int):
        self.host, self.port = host, port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def open(self) -> None:
        self.reader, self.writer = await asyncio.open_connection(self.host, self.port)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None

    async def post(self, path: str, body: dict[str, Any], on_first_byte: Any = None) -> tuple[int, bytes]:
        if self.writer is None:
            await self.open()
        assert self.reader is not None and self.writer is not None
        data = json.dumps(body, ensure_ascii=False).encode()
        self.writer.write(
            f"POST {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(data)}\r\n\r\n".encode() + data)
        status_line = await self.reader.readline()
        if not status_line:
            raise ConnectionError("server closed the connection")
        status = int(status_line.split()[1])
        headers: dict[str, str] = {}
        while True:
            line = await self.reader.readline()
            if line in (b"\r\n", b""):
                break
            k, _, v = line.decode("latin-1").partition(":")
            headers[k.strip().lower()] = v.strip()
        chunks: list[bytes] = []
        if headers.get("transfer-encoding") == "chunked":
            first = True
            while True:
                size = int((await self.reader.readline()).strip(), 16)
                if size == 0:
                    await self.reader.readline()
                    break
                chunk = await self.reader.readexactly(size + 2)
                if first and on_first_byte is not None:
                    on_first_byte()
                first = False
                chunks.append(chunk[:-2])
        else:
            n = int(headers.get("content-length", "0"))
            chunk = await self.reader.readexactly(n)
            if on_first_byte is not None:
                on_first_byte()
            chunks.append(chunk)
        if headers.get("connection", "").lower() == "close":
            self.close()
        return status, b"".join(chunks)


def terminal_event(body: bytes) -> str | None:
    last = None
    for line in body.split(b"\n"):
        if line.startswith(b"event: "):
            last = line[7:].decode()
    return last


# -- server ----------------------------------------------------------------------------------------

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def find_generated(arg: str | None, work: Path) -> Path:
    if arg:
        return Path(arg)
    if (REPO / "generated" / "catalog.json").exists():
        return REPO / "generated"
    sys.path.insert(0, str(REPO))
    from tests.serve.conftest import build_generated  # the same layout `ummaya build` writes

    out = work / "generated"
    print("building generated/ from registry/ (no build found) …", file=sys.stderr)
    build_generated(out)
    return out


def start_server(generated: Path, work: Path, workers: int, http: str = "auto",
                 loop: str = "auto") -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    env = {**os.environ, "UMMAYA_HOME": str(work / "home"), "UMMAYA_GENERATED": str(generated),
           "UMMAYA_DATABASE_URL": f"sqlite:///{work / 'bench.sqlite3'}", "UMMAYA_SERVE_MODE": "mock",
           "UMMAYA_RELEASE_CACHE": str(work / "releases")}
    env.pop("UMMAYA_LLM_BASE_URL", None)
    cmd = [sys.executable, "-m", "uvicorn", "--factory", "ummaya.runtime.serve.app:app_from_env",
           "--host", "127.0.0.1", "--port", str(port), "--workers", str(workers),
           "--log-level", "warning", "--no-access-log", "--backlog", "4096", "--http", http, "--loop", loop]
    proc = subprocess.Popen(cmd, env=env, cwd=str(REPO), stdout=open(work / "server.log", "wb"),
                            stderr=subprocess.STDOUT)
    return proc, f"127.0.0.1:{port}"


async def wait_ready(host: str, port: int, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            r, w = await asyncio.open_connection(host, port)
            w.write(f"GET /readyz HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
            data = await r.read()
            w.close()
            if data.startswith(b"HTTP/1.1 200"):
                return
        except OSError:
            pass
        await asyncio.sleep(0.2)
    raise RuntimeError("server did not become ready")


# -- load --------------------------------------------------------------------------------------

def pct(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(p / 100 * len(s) + 0.5) - 1))]


async def closed_loop(host: str, port: int, *, stream: bool, concurrency: int, seconds: float) -> dict[str, Any]:
    lat: list[float] = []
    first: list[float] = []
    errors: dict[str, int] = {}
    ok = 0
    stop_at = time.perf_counter() + seconds

    async def worker(i: int) -> None:
        nonlocal ok
        conn = Conn(host, port)
        n = i
        while time.perf_counter() < stop_at:
            q = QUERIES[n % len(QUERIES)]
            n += concurrency
            t0 = time.perf_counter()
            t_first: list[float] = []
            try:
                status, body = await conn.post("/v1/answer", {"query": q, "stream": stream},
                                               on_first_byte=lambda: t_first.append(time.perf_counter()))
            except (OSError, ConnectionError, asyncio.IncompleteReadError) as exc:
                errors[type(exc).__name__] = errors.get(type(exc).__name__, 0) + 1
                conn.close()
                continue
            t1 = time.perf_counter()
            if stream:
                kind = terminal_event(body)
                good = status == 200 and kind == "completed"
            else:
                good = status == 200
                kind = str(status)
            if good:
                ok += 1
                lat.append((t1 - t0) * 1000)
                if t_first:
                    first.append((t_first[0] - t0) * 1000)
            else:
                errors[f"{status}/{kind}"] = errors.get(f"{status}/{kind}", 0) + 1
        conn.close()

    t0 = time.perf_counter()
    await asyncio.gather(*(worker(i) for i in range(concurrency)))
    elapsed = time.perf_counter() - t0
    out = {"mode": "sse" if stream else "json", "concurrency": concurrency, "seconds": round(elapsed, 2),
           "answers": ok, "answers_per_s": round(ok / elapsed, 1),
           "p50_ms": round(pct(lat, 50), 1), "p99_ms": round(pct(lat, 99), 1), "errors": errors}
    if stream:
        out["first_event_p50_ms"] = round(pct(first, 50), 1)
        out["first_event_p99_ms"] = round(pct(first, 99), 1)
    return out


async def burst(host: str, port: int, *, streams: int, timeout: float) -> dict[str, Any]:
    results: list[str] = []
    first: list[float] = []

    async def one(i: int) -> None:
        conn = Conn(host, port)
        t0 = time.perf_counter()
        t_first: list[float] = []
        try:
            status, body = await conn.post("/v1/answer", {"query": QUERIES[i % len(QUERIES)], "stream": True},
                                           on_first_byte=lambda: t_first.append(time.perf_counter()))
            results.append("completed" if status == 200 and terminal_event(body) == "completed"
                           else f"{status}/{terminal_event(body)}")
            if t_first:
                first.append((t_first[0] - t0) * 1000)
        except Exception as exc:  # noqa: BLE001 - counted, reported
            results.append(type(exc).__name__)
        finally:
            conn.close()

    t0 = time.perf_counter()
    tasks = [asyncio.create_task(one(i)) for i in range(streams)]
    done, pending = await asyncio.wait(tasks, timeout=timeout)
    for t in pending:
        t.cancel()
    elapsed = time.perf_counter() - t0
    completed = results.count("completed")
    other: dict[str, int] = {}
    for r in results:
        if r != "completed":
            other[r] = other.get(r, 0) + 1
    if pending:
        other["timed_out"] = len(pending)
    return {"streams": streams, "completed": completed, "all_completed": completed == streams,
            "seconds": round(elapsed, 2), "first_event_p50_ms": round(pct(first, 50), 1),
            "first_event_p99_ms": round(pct(first, 99), 1), "other": other}


async def run(args: argparse.Namespace, hostport: str) -> dict[str, Any]:
    host, port = hostport.split(":")
    p = int(port)
    await wait_ready(host, p)
    await closed_loop(host, p, stream=False, concurrency=4, seconds=2)  # warm every worker
    await closed_loop(host, p, stream=True, concurrency=4, seconds=1)
    res: dict[str, Any] = {"workers": args.workers, "cpus": os.cpu_count(), "http": args.http,
                           "loop": args.loop, "load_average_before": os.getloadavg()[0]}
    res["json"] = await closed_loop(host, p, stream=False, concurrency=args.concurrency, seconds=args.seconds)
    res["sse"] = await closed_loop(host, p, stream=True, concurrency=args.concurrency, seconds=args.seconds)
    res["sse_unloaded"] = await closed_loop(host, p, stream=True, concurrency=1, seconds=min(3.0, args.seconds))
    res["burst"] = await burst(host, p, streams=args.streams, timeout=args.burst_timeout)
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--streams", type=int, default=500)
    ap.add_argument("--burst-timeout", type=float, default=90.0)
    ap.add_argument("--generated", default=None, help="a generated/ folder (default: the repo's, else built)")
    ap.add_argument("--http", default="auto", choices=["auto", "h11", "httptools"])
    ap.add_argument("--loop", default="auto", choices=["auto", "asyncio", "uvloop"])
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="ummaya-bench-serve-"))
    proc = None
    try:
        generated = find_generated(args.generated, work)
        proc, hostport = start_server(generated, work, args.workers, args.http, args.loop)
        res = asyncio.run(asyncio.wait_for(run(args, hostport), timeout=args.seconds * 3 + args.burst_timeout + 180))
    finally:
        if proc is not None:
            proc.terminate()
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        print(json.dumps(res, ensure_ascii=False))
        return
    j, s, u, b = res["json"], res["sse"], res["sse_unloaded"], res["burst"]
    print(f"server: {res['workers']} uvicorn worker(s) on {res['cpus']} CPU(s), SQLite, mock dispatch, traces on "
          f"(http {res['http']}, loop {res['loop']}; 1-min load average before the run {res['load_average_before']:.2f})")
    print(f"JSON  c={j['concurrency']:<3} {j['answers_per_s']:>7.1f} answers/s   p50 {j['p50_ms']:.1f} ms   "
          f"p99 {j['p99_ms']:.1f} ms   ({j['answers']} in {j['seconds']} s, errors {j['errors'] or 0})")
    print(f"SSE   c={s['concurrency']:<3} {s['answers_per_s']:>7.1f} answers/s   p50 {s['p50_ms']:.1f} ms   "
          f"p99 {s['p99_ms']:.1f} ms   first event p50 {s['first_event_p50_ms']:.1f} ms "
          f"p99 {s['first_event_p99_ms']:.1f} ms   (errors {s['errors'] or 0})")
    print(f"SSE   c=1   first event p50 {u['first_event_p50_ms']:.1f} ms   p99 {u['first_event_p99_ms']:.1f} ms   "
          f"answer p50 {u['p50_ms']:.1f} ms")
    print(f"burst: {b['completed']}/{b['streams']} concurrent SSE streams completed in {b['seconds']} s "
          f"(first event p50 {b['first_event_p50_ms']:.0f} ms, p99 {b['first_event_p99_ms']:.0f} ms)"
          f"{'' if b['all_completed'] else '  other: ' + json.dumps(b['other'])}")


if __name__ == "__main__":
    main()
