"""Engine overhead per turn on the embedded default, and the wall time of a cold ``ummaya ask``.

    python bench/turn.py [--turns 200]

Per-turn figures are in-process (catalog, index and store loaded once), Mock dispatch, offline
planner — what the engine itself costs around the adapters. They are measured at the real registry
and at a synthetic 1,000-adapter registry (bench/synth.py: real adapters embedded among
data.go.kr-style near-duplicates) so the cost of scale shows side by side. The cold figure runs the
installed ``ummaya ask`` as a new process, the way a citizen's first request pays for start-up.

Targets (issue 3): p50 ≤ 15 ms per turn; cold ask ≤ 1.5 s.

    python bench/turn.py --dialogue [--turns 400]

Conversations instead (issue 9): the turns run in sessions on a SQLite store, so every turn loads
the session's dialogue state, reads the message against it and saves the new state. Traces are not
written (their cost is the store's, measured in bench/serve.py). Target: p50 ≤ 5 ms per turn.

    python bench/turn.py --otel [--turns 400]

OpenTelemetry export (issue 22, the ``otel`` extra): the same turns at the real registry without
export, then with every turn exported as a span tree over OTLP/HTTP to a local receiver this
script starts on 127.0.0.1 (the batch processor's exporter thread runs as it would in production),
alternating in blocks so load drifts hit both alike. Target: ≤ 1 ms p50 added per turn.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

QUERIES = [
    "동아대 승학캠퍼스 근처 응급실 알려줘",
    "부산 응급실 빈 병상 있어?",
    "부산역 근처 약국",
    "서울시청 주변 AED 어디 있어",
    "해운대 소아과 병원",
    "내일 부산 날씨 어때?",
    "서울 미세먼지 어때?",
    "타이레놀 먹어도 돼?",
    "이사했는데 전입신고 어떻게 해?",
    "Pharmacies near Busan Station",
]


def build_generated(manifests, registry, out: Path) -> Path:
    from ummaya.codegen.emit_index import domain_glosses, emit_index
    from ummaya.codegen.profile_merge import resolve_manifest

    out.mkdir(parents=True, exist_ok=True)
    resolved = [resolve_manifest(m, registry.profiles) for m in manifests]
    (out / "catalog.json").write_text(json.dumps(
        {"format": 1, "release_id": f"bench-{len(manifests)}", "adapters": [m.model_dump(mode="json") for m in resolved]},
        ensure_ascii=False))
    # Synthetic adapters are copies of a real one (bench/synth.py) and keep its fixtures, so Mock
    # dispatch answers them too and the figures are of complete turns, not early errors.
    real = {lm.id: lm for lm in registry.manifests}
    by_fixtures = {tuple(f.response for f in lm.manifest.fixtures): lm for lm in registry.manifests}
    for m in manifests:
        lm = real.get(m.id) or by_fixtures.get(tuple(f.response for f in m.fixtures))
        if lm is None or not lm.fixtures_dir.is_dir():
            continue
        d = out / "fixtures" / m.id
        d.mkdir(parents=True, exist_ok=True)
        for path in lm.fixtures_dir.iterdir():
            shutil.copy(path, d / path.name)
    for rel, data in emit_index(list(manifests), domain_glosses(registry.understanding)).items():
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_bytes(data)
    return out


def per_turn(generated: Path, turns: int) -> tuple[list[float], dict[str, int], list[float]]:
    from ummaya.runtime.assemble import build_engine
    from ummaya.runtime.dispatch import Dispatcher
    from ummaya.runtime.catalog import Catalog
    from ummaya.runtime.turn import TurnRequest

    catalog = Catalog.load(generated)
    engine = build_engine(generated, catalog=catalog, dispatcher=Dispatcher(catalog, env={}), store=None)
    reasons: dict[str, int] = {}

    cpu: list[float] = []

    async def run() -> list[float]:
        out = []
        for q in QUERIES:  # warm: index compiled, templates cached
            await engine.ask(TurnRequest(q, mode="mock"))
        for i in range(turns):
            q = QUERIES[i % len(QUERIES)]
            t, c = time.perf_counter(), time.thread_time()
            r = await engine.ask(TurnRequest(q, mode="mock"))
            cpu.append((time.thread_time() - c) * 1000)
            out.append((time.perf_counter() - t) * 1000)
            reasons[r.stop_reason] = reasons.get(r.stop_reason, 0) + 1
        return out

    return asyncio.run(run()), reasons, cpu


# Conversations of the kind issue 9 is about: answers to the engine's question, elliptical
# follow-ups, deixis, topic switches.
CONVERSATIONS = [
    ["근처 응급실 알려줘", "하단동", "거기 약국은?", "그럼 병원은?"],
    ["서울 미세먼지 어때?", "광주는?", "부산은?"],
    ["서울시청 근처 날씨", "모레는?", "거기 응급실은?"],
    ["타이레놀 먹어도 돼?", "부작용은?", "게보린은?"],
    ["weather near Seoul City Hall today", "what about tomorrow?", "Is there a pharmacy there?"],
]


def per_dialogue_turn(generated: Path, turns: int, db: Path | None) -> tuple[list[float], list[float], dict[str, int]]:
    """(wall ms, CPU ms, stop reasons) per turn; ``db`` None: the same turns without a session."""
    from ummaya.runtime.assemble import build_engine
    from ummaya.runtime.catalog import Catalog
    from ummaya.runtime.dispatch import Dispatcher
    from ummaya.runtime.store import open_store
    from ummaya.runtime.turn import TurnRequest

    catalog = Catalog.load(generated)
    store = open_store(f"sqlite:///{db}") if db is not None else None
    engine = build_engine(generated, catalog=catalog, dispatcher=Dispatcher(catalog, env={}), store=store)
    engine.write_traces = False
    reasons: dict[str, int] = {}

    def session(name: str) -> str | None:
        return name if db is not None else None

    async def run() -> tuple[list[float], list[float]]:
        wall: list[float] = []
        cpu: list[float] = []
        for conv in CONVERSATIONS:  # warm
            for q in conv:
                await engine.ask(TurnRequest(q, mode="mock", session_id=session("warm")))
        n = 0
        while len(wall) < turns:
            for q in CONVERSATIONS[n % len(CONVERSATIONS)]:
                t, c = time.perf_counter(), time.process_time()
                r = await engine.ask(TurnRequest(q, mode="mock", session_id=session(f"bench-{n}")))
                wall.append((time.perf_counter() - t) * 1000)
                cpu.append((time.process_time() - c) * 1000)
                reasons[r.stop_reason] = reasons.get(r.stop_reason, 0) + 1
            n += 1
        return wall[:turns], cpu[:turns]

    try:
        wall, cpu = asyncio.run(run())
        return wall, cpu, reasons
    finally:
        if store is not None:
            store.close()


def otel_main(turns: int) -> None:
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from ummaya.runtime import telemetry

    received = {"posts": 0, "bytes": 0}

    class Receiver(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            n = int(self.headers.get("Content-Length") or 0)
            self.rfile.read(n)
            received["posts"] += 1
            received["bytes"] += n
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    committed = REPO / "generated"
    off: list[float] = []
    on: list[float] = []
    off_cpu: list[float] = []
    on_cpu: list[float] = []
    block = max(10, turns // 10)
    try:
        for i in range(0, turns, block):
            for otel, wall, cpu in ((False, off, off_cpu), (True, on, on_cpu)):
                telemetry.reset()
                if otel:
                    os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"] = f"http://127.0.0.1:{server.server_address[1]}"
                else:
                    os.environ.pop("OTEL_EXPORTER_OTLP_ENDPOINT", None)
                times, _, c = per_turn(committed, min(block, turns - i))
                wall += times
                cpu += c
                telemetry.flush()
    finally:
        telemetry.reset()
        os.environ.pop("OTEL_EXPORTER_OTLP_ENDPOINT", None)
        server.shutdown()
    print(f"OpenTelemetry export per turn (offline planner, Mock dispatch, {len(on)} turns each, OTLP/HTTP to "
          f"127.0.0.1; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
    for name, wall, cpu in (("without export", off, off_cpu), ("with export", on, on_cpu)):
        print(f"  {name:<16} wall p50 {statistics.median(wall):6.2f} ms  p95 {pct(wall, 95):6.2f} ms   "
              f"CPU p50 {statistics.median(cpu):6.2f} ms")
    print(f"  added p50: wall {statistics.median(on) - statistics.median(off):+.2f} ms, CPU "
          f"{statistics.median(on_cpu) - statistics.median(off_cpu):+.2f} ms   (target ≤ 1 ms); receiver got "
          f"{received['posts']} exports, {received['bytes'] / 1024:.0f} KiB")


def dialogue_main(turns: int) -> None:
    committed = REPO / "generated"
    with tempfile.TemporaryDirectory() as tmp:
        rows = [("with dialogue state (SQLite)",) + per_dialogue_turn(committed, turns, Path(tmp) / "bench.sqlite3"),
                ("same turns, no session",) + per_dialogue_turn(committed, turns, None)]
    print(f"engine overhead per conversation turn (offline planner, Mock dispatch, {turns} turns in "
          f"{len(CONVERSATIONS)} conversation shapes; CPU = this process only, robust to a loaded machine)")
    for name, wall, cpu, reasons in rows:
        print(f"  {name:<30} wall p50 {statistics.median(wall):6.2f} ms  p95 {pct(wall, 95):6.2f} ms   "
              f"CPU p50 {statistics.median(cpu):6.2f} ms  p95 {pct(cpu, 95):6.2f} ms   {json.dumps(reasons, ensure_ascii=False)}")
    print("  target: p50 ≤ 5 ms per turn with dialogue state loaded and saved")


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def cold_ask(generated: Path, runs: int) -> list[float]:
    exe = shutil.which("ummaya") or str(Path(sys.executable).parent / "ummaya")
    out = []
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "UMMAYA_HOME": home, "UMMAYA_GENERATED": str(generated)}
        for _ in range(runs):
            t = time.perf_counter()
            subprocess.run([exe, "ask", "--mode", "mock", QUERIES[0]], env=env, check=True, capture_output=True)
            out.append((time.perf_counter() - t) * 1000)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--turns", type=int, default=200)
    ap.add_argument("--cold-runs", type=int, default=5)
    ap.add_argument("--dialogue", action="store_true", help="conversations in sessions on SQLite (issue 9)")
    ap.add_argument("--otel", action="store_true", help="the cost of OpenTelemetry export per turn (issue 22)")
    args = ap.parse_args()
    if args.otel:
        otel_main(args.turns)
        return
    if args.dialogue:
        dialogue_main(args.turns)
        return

    from synth import synthetic_manifests

    from ummaya.codegen.loader import load_registry

    registry, problems = load_registry(REPO)
    assert not problems, problems
    real = [lm.manifest for lm in registry.manifests]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in (len(real), 1000):
            gen = build_generated(synthetic_manifests(real, n), registry, Path(tmp) / f"gen{n}")
            times, reasons, cpu = per_turn(gen, args.turns)
            rows.append((n, statistics.median(times), pct(times, 95), pct(times, 99), reasons, statistics.median(cpu)))
        committed = REPO / "generated"
        cold_gen = committed if (committed / "catalog.json").exists() else Path(tmp) / f"gen{len(real)}"
        cold = cold_ask(cold_gen, args.cold_runs)

    print(f"engine overhead per turn (offline planner, Mock dispatch, {args.turns} turns over {len(QUERIES)} requests; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
    print(f"{'adapters':>9} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} {'CPU p50':>8}  stop reasons")
    for n, p50, p95, p99, reasons, cpu50 in rows:
        print(f"{n:>9} {p50:>8.2f} {p95:>8.2f} {p99:>8.2f} {cpu50:>8.2f}  {json.dumps(reasons, ensure_ascii=False)}")
    print("(CPU p50: this thread's CPU time per turn — the engine's cost without the waits a shared machine adds)")
    print(f"ratio p50 1,000 / {rows[0][0]}: {rows[1][1] / rows[0][1]:.2f}x   (target p50 ≤ 15 ms)")
    print(f"cold `ummaya ask` wall time over {len(cold)} runs: median {statistics.median(cold):.0f} ms, "
          f"min {min(cold):.0f} ms, max {max(cold):.0f} ms   (target ≤ 1500 ms)")


if __name__ == "__main__":
    main()
