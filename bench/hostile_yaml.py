"""How long the loader takes to refuse hostile YAML (issue 11 item 2: each a ``path:line`` problem
"within a second"). Each case is written to a temporary file and parsed through ``parse_yaml``,
the build's own entry point, five times; the slowest run is printed.

    python bench/hostile_yaml.py
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def cases() -> dict[str, str | bytes | None]:
    bomb = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    bomb += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 10)]
    return {
        "alias bomb (10^9 nodes expanded)": "\n".join(bomb) + "\n",
        "flow nesting 20,000 deep": "x: " + "[" * 20000 + "]" * 20000 + "\n",
        "block nesting 500 deep": "".join(" " * i + "k:\n" for i in range(500)) + " " * 500 + "v: 1\n",
        "100,000-digit integer": "n: " + "9" * 100_000 + "\n",
        "60,000-digit integer in a 1 MB file": "n: " + "9" * 60_000 + "\n" + "# pad\n" * 150_000,
        "1 MB flow list (~500,000 nodes)": "[" + ",".join(["1"] * 520_000) + "]\n",
        "1 MB block list (~250,000 nodes)": "- 1\n" * 262_000,
        "1 MB of nesting and a syntax error at the end": "x: " + "[" * 900 + "]" * 900 + "\n" + "a: b\n" * 200_000 + "c: [\n",
        "over the size limit (2 MB)": "a: 1\n" * 400_000,
        "/dev/zero": None,
        "FIFO without a writer": b"",
        "recursive alias": "a: &r [*r]\n",
    }


def main() -> int:
    sys.path.insert(0, str(ROOT))
    from ummaya.codegen.loader import parse_yaml

    worst = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for i, (name, text) in enumerate(cases().items()):
            path = Path(tmp, f"case{i}.yaml")
            if text is None:
                path.symlink_to("/dev/zero")
            elif name.startswith("FIFO"):
                os.mkfifo(path)
            else:
                path.write_bytes(text.encode() if isinstance(text, str) else text)
            times, problems = [], []
            for _ in range(5):
                t = time.perf_counter()
                _, problems = parse_yaml(path, f"case{i}.yaml")
                times.append(time.perf_counter() - t)
            worst = max(worst, max(times))
            first = str(problems[0]) if problems else "(accepted)"
            print(f"{max(times) * 1000:8.1f} ms  {name:48} {first[:90]}")
    print(f"slowest: {worst * 1000:.1f} ms (load average {os.getloadavg()[0]:.1f})")
    return 0 if worst < 1.0 else 1


if __name__ == "__main__":
    sys.exit(main())
