"""Engine overhead per turn on the embedded default, and the wall time of a cold ``ummaya ask``.

    python bench/turn.py [--turns 200]

Per-turn figures are in-process (catalog, index and store loaded once), Mock dispatch, offline
planner — what the engine itself costs around the adapters. They are measured at the real registry
and at a synthetic 1,000-adapter registry (bench/synth.py: real adapters embedded among
data.go.kr-style near-duplicates) so the cost of scale shows side by side. The cold figure runs the
installed ``ummaya ask`` as a new process, the way a citizen's first request pays for start-up.

Targets (issue 3): p50 ≤ 15 ms per turn; cold ask ≤ 1.5 s.
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
    from ummaya.codegen.emit_index import emit_index
    from ummaya.codegen.resolve import resolve_manifest

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
    for rel, data in emit_index(list(manifests)).items():
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_bytes(data)
    return out


def per_turn(generated: Path, turns: int) -> tuple[list[float], dict[str, int]]:
    from ummaya.runtime.assemble import build_engine
    from ummaya.runtime.dispatch import Dispatcher
    from ummaya.runtime.catalog import Catalog
    from ummaya.runtime.turn import TurnRequest

    catalog = Catalog.load(generated)
    engine = build_engine(generated, catalog=catalog, dispatcher=Dispatcher(catalog, env={}), store=None)
    reasons: dict[str, int] = {}

    async def run() -> list[float]:
        out = []
        for q in QUERIES:  # warm: index compiled, templates cached
            await engine.ask(TurnRequest(q, mode="mock"))
        for i in range(turns):
            q = QUERIES[i % len(QUERIES)]
            t = time.perf_counter()
            r = await engine.ask(TurnRequest(q, mode="mock"))
            out.append((time.perf_counter() - t) * 1000)
            reasons[r.stop_reason] = reasons.get(r.stop_reason, 0) + 1
        return out

    return asyncio.run(run()), reasons


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
    args = ap.parse_args()

    from synth import synthetic_manifests

    from ummaya.codegen.loader import load_registry

    registry, problems = load_registry(REPO)
    assert not problems, problems
    real = [lm.manifest for lm in registry.manifests]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in (len(real), 1000):
            gen = build_generated(synthetic_manifests(real, n), registry, Path(tmp) / f"gen{n}")
            times, reasons = per_turn(gen, args.turns)
            rows.append((n, statistics.median(times), pct(times, 95), pct(times, 99), reasons))
        committed = REPO / "generated"
        cold_gen = committed if (committed / "catalog.json").exists() else Path(tmp) / f"gen{len(real)}"
        cold = cold_ask(cold_gen, args.cold_runs)

    print(f"engine overhead per turn (offline planner, Mock dispatch, {args.turns} turns over {len(QUERIES)} requests)")
    print(f"{'adapters':>9} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8}  stop reasons")
    for n, p50, p95, p99, reasons in rows:
        print(f"{n:>9} {p50:>8.2f} {p95:>8.2f} {p99:>8.2f}  {json.dumps(reasons, ensure_ascii=False)}")
    print(f"ratio p50 1,000 / {rows[0][0]}: {rows[1][1] / rows[0][1]:.2f}x   (target p50 ≤ 15 ms)")
    print(f"cold `ummaya ask` wall time over {len(cold)} runs: median {statistics.median(cold):.0f} ms, "
          f"min {min(cold):.0f} ms, max {max(cold):.0f} ms   (target ≤ 1500 ms)")


if __name__ == "__main__":
    main()
