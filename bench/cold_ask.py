"""Cold `ummaya ask` (Mock, offline planner): CPU and wall seconds per fresh process (target ≤ 0.6 s CPU).

    python bench/cold_ask.py [--runs N] [--query TEXT] [--baseline PATH/TO/OTHER/ummaya]

Each run is a new process, as a citizen's shell starts it, after one warm-up run per command. The
bytecode of every module is kept under a temporary PYTHONPYCACHEPREFIX (an installed package has
its .pyc files; a shell with PYTHONDONTWRITEBYTECODE=1 would otherwise compile ~100 modules from
source on every start and measure the compiler). Each command gets a store of its own in a
temporary folder. With --baseline, the two commands run in turn (A B A B …) and the CPU ratio is
taken pair by pair, so drift in the machine's load cancels. CPU (user + system of the child) is
the load-independent figure on a shared machine; wall is printed beside it.
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


def one(cmd: list[str], env: dict[str, str]) -> tuple[float, float, int, str]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.returncode, done.stdout + done.stderr


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--query", default="부산 사하구 약국")
    ap.add_argument("--baseline", default=None, help="another checkout's ummaya executable (its own venv)")
    args = ap.parse_args()
    commands = {"this": str(Path(sys.executable).with_name("ummaya"))}
    if args.baseline:
        commands["baseline"] = args.baseline
    with tempfile.TemporaryDirectory(prefix="ummaya-cold-ask-") as tmp:
        envs, cmds = {}, {}
        for name, exe in commands.items():
            env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
            env["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / f"pyc-{name}")
            envs[name] = env
            cmds[name] = [exe, "ask", args.query, "--mode", "mock", "--db", f"sqlite:///{tmp}/{name}.db"]
            wall, cpu, rc, out = one(cmds[name], env)  # warm-up: bytecode written, store created
            if rc != 0:
                sys.exit(f"{name}: exit {rc}\n{out}")
            stop = next((line for line in out.splitlines() if line.startswith("stop:")), "?")
            print(f"{name}: {exe}\n  {stop}")
        figures: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
        for _ in range(args.runs):
            for name in commands:
                wall, cpu, rc, _out = one(cmds[name], envs[name])
                figures[name].append((wall, cpu))
        for name, rows in figures.items():
            walls, cpus = [w for w, _ in rows], [c for _, c in rows]
            print(f"{name:9s} cpu median {statistics.median(cpus):.3f} s (min {min(cpus):.3f}, max {max(cpus):.3f})"
                  f"   wall median {statistics.median(walls):.3f} s (min {min(walls):.3f}, max {max(walls):.3f})")
        if args.baseline:
            ratios = [a[1] / b[1] for a, b in zip(figures["this"], figures["baseline"])]
            walls = [a[0] / b[0] for a, b in zip(figures["this"], figures["baseline"])]
            print(f"this/baseline cpu median {statistics.median(ratios):.3f}   wall median {statistics.median(walls):.3f}")
        print(f"load average {os.getloadavg()[0]:.1f}, {args.runs} runs each")


if __name__ == "__main__":
    main()
