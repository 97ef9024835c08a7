"""`ummaya check` on the real registry: wall and CPU seconds per run (issue 18: ≤ 5 s wall).

    python bench/check.py [--runs N] [--jobs N]

``--jobs`` sets UMMAYA_CHECK_JOBS, the scenario gate's worker processes (ci/scenario_gate.py;
default one per core, 1 = in the check's own process), to compare the two. CPU counts the workers
too (they are the check's children).

Runs the command N times (default 5) in fresh processes, as CI and a contributor do, after one
warm-up run (the emit and parse caches filled, as on a contributor's machine after their first
build). Prints each run and the median; CPU (user + system of the child) is the load-independent
figure on a shared machine.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def one(cmd: list[str], env: dict[str, str]) -> tuple[float, float, int]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.returncode


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--jobs", type=int, default=None, help="UMMAYA_CHECK_JOBS for the runs")
    args = ap.parse_args()
    exe = Path(sys.executable).with_name("ummaya")
    cmd = [str(exe), "check"]
    env = {**os.environ, "UMMAYA_HOME": tempfile.mkdtemp()}
    if args.jobs is not None:
        env["UMMAYA_CHECK_JOBS"] = str(args.jobs)
    _, _, rc = one(cmd, env)  # warm-up
    if rc != 0:
        raise SystemExit("ummaya check fails on this tree; fix that first")
    walls, cpus = [], []
    for i in range(args.runs):
        wall, cpu, rc = one(cmd, env)
        walls.append(wall)
        cpus.append(cpu)
        print(f"run {i + 1}: {wall:.2f} s wall, {cpu:.2f} s CPU, exit {rc}")
    print(f"median: {statistics.median(walls):.2f} s wall, {statistics.median(cpus):.2f} s CPU "
          f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")


if __name__ == "__main__":
    main()
