"""The claim check's cost on a 2,000-character answer (target: p99 ≤ 1 ms).

    python bench/claims.py [--runs 2000]

The facts are built once per turn from real Mock evidence (the ER-room and ER-bed fixtures as the
adapters return them, full output); the answer mixes backed and invented claims of every kind, in
Korean and English, and is cut to exactly 2,000 characters. Figures: ``check`` per answer (wall
time, and this thread's CPU time — on a machine shared with other work the wall p99 measures the
scheduler), and ``build_facts`` per turn, in milliseconds. ``uptime``'s load is printed with them.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import datetime as dt
import statistics
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

SENTENCES = [
    "삼육부산병원이 약 4.1km로 가장 가까워요.",
    "동아대학교병원 응급실 전화번호는 051-240-2000이에요.",
    "동아대학교병원에 응급실 병상 6개가 비어 있어요.",
    "응급실 직통 번호는 051-777-1234예요.",
    "부산 응급실 환자의 73%는 경증이고 평균 대기 시간은 47분입니다.",
    "하단중앙병원 응급실도 24시간 열려 있어요.",
    "신청이 정상적으로 접수되었습니다.",
    "접수번호는 2026-1130-7781입니다.",
    "12월 25일 오후 11시에는 접수를 마감해요.",
    "실제로 제출된 것은 없습니다.",
    "응급 상황이면 바로 119에 전화하세요.",
    "The nearest is 동아대학교병원 (Dong-A University Hospital), about 4.5 km away.",
    "Your application has been submitted and your case number is BJR-88123.",
    "It opens at 9:00 am and this is live data from the agency.",
]


def answer_text(n: int = 2000) -> str:
    out = ""
    i = 0
    while len(out) < n:
        out += SENTENCES[i % len(SENTENCES)] + (" " if i % 3 else "\n")
        i += 1
    return out[:n]


def evidence() -> list[object]:
    from ummaya.runtime.catalog import Catalog
    from ummaya.runtime.dispatch import Dispatcher

    catalog = Catalog.load(REPO / "generated")
    d = Dispatcher(catalog, env={})

    async def run():
        rooms = await d.call("nmc_emergency_rooms", {"latitude": 35.1167, "longitude": 128.968}, mode="mock")
        beds = await d.call("nmc_emergency_beds", {"sido": "부산광역시"}, mode="mock")
        return [rooms.output, beds.output]

    return asyncio.run(run())


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=2000)
    args = ap.parse_args()
    from ummaya.runtime.turn.claims import build_facts, check

    outputs = evidence()
    clock = dt.datetime(2026, 12, 1, 11, 0, tzinfo=dt.timezone(dt.timedelta(hours=9)))
    text = answer_text()
    build: list[float] = []
    for _ in range(200):
        t = time.perf_counter()
        facts = build_facts(outputs, citizen=["동아대 승학캠퍼스 근처 응급실 알려줘"], tiers={"mock"}, clock=clock)
        build.append((time.perf_counter() - t) * 1000)
    for _ in range(50):  # warm: regexes compiled, caches filled
        check(text, facts)
    times: list[float] = []
    cpu: list[float] = []
    for _ in range(args.runs):
        t, c = time.perf_counter(), time.thread_time()
        verdict = check(text, facts)
        cpu.append((time.thread_time() - c) * 1000)
        times.append((time.perf_counter() - t) * 1000)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"claim check on a {len(text)}-character answer ({len(verdict.removed)} of "
          f"{len(text.split())} words' claims removed), {args.runs} runs")
    print(f"  check:       p50 {statistics.median(times):.3f} ms  p95 {pct(times, 95):.3f} ms  "
          f"p99 {pct(times, 99):.3f} ms   (target p99 ≤ 1 ms)")
    print(f"  check (CPU): p50 {statistics.median(cpu):.3f} ms  p95 {pct(cpu, 95):.3f} ms  "
          f"p99 {pct(cpu, 99):.3f} ms   (this thread's CPU time: what the check costs, without the "
          f"waits a loaded machine adds)")
    print(f"  build_facts: p50 {statistics.median(build):.3f} ms  p99 {pct(build, 99):.3f} ms   "
          f"(once per answer, {len(facts.numbers)} numbers, {len(facts.digits)} digit strings)")


if __name__ == "__main__":
    main()
