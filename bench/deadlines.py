"""How long the dispatcher takes to refuse what the tests only classify (issue 20: the tests assert
the outcome — TIMEOUT, PARSE, the waits asked for — and the speed figures live here).

    python bench/deadlines.py            # 3 runs of each, min / median / max in seconds
    python bench/deadlines.py --runs 5 --json

Against loopback upstreams (tests/support/upstreams.py), through a real ``Dispatcher``:

* drip: one byte every 0.25 s, call deadline 1.0 s — the call should end near 1.0 s (one deadline
  for the whole call, not one per read or per attempt); tests/dispatch/test_wire_truth.py.
* entity bomb: an XML billion-laughs body, deadline 60 s — refused, never expanded: well under 1 s;
  tests/dispatch/test_dispatch_live.py.
* gzip bomb: 30 MB of zeros gzipped (~30 KB), 10 KB body limit — refused while inflating;
  tests/security/test_upstream_encoding.py.
* rate limit: 4 calls at 10/s to one host on the real clock — at least 0.3 s (3 gaps of 0.1 s);
  tests/dispatch/test_dispatch_live.py asserts the waits on an injected clock instead.

Each figure's outcome is printed beside it, so a slow machine shows as a slow figure, never as
another outcome.
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.dispatch.helpers import catalog, no_wait, run  # noqa: E402
from tests.dispatch.test_dispatch_live import ARGS, ENV, ER, ER_PATH, ROWS, _with_upstream  # noqa: E402
from tests.support.upstreams import ENTITY_BOMB, XML, Reply, UpstreamServer, data_go_kr_xml  # noqa: E402
from ummaya.runtime.dispatch import Dispatcher  # noqa: E402


def _timed(reply: Reply, m: Any, calls: int = 1, **kw: Any) -> tuple[float, str]:
    with UpstreamServer() as srv, tempfile.TemporaryDirectory(prefix="ummaya-bench-") as tmp:
        srv.route(ER_PATH, reply)
        d = Dispatcher(catalog(Path(tmp), m), env=ENV, base_url_overrides={m.id: srv.url}, **kw)
        t0 = time.perf_counter()
        outs = run(d.call_many([(m.id, ARGS)] * calls, mode="live"))
        took = time.perf_counter() - t0
    codes = sorted({o.error_code or o.status for o in outs})
    return took, ",".join(codes)


def cases() -> dict[str, Any]:
    drip_body = data_go_kr_xml(ROWS * 3)
    zeros = gzip.compress(b"\0" * (30 * 1024 * 1024))
    return {
        "drip, deadline 1.0 s": lambda: _timed(Reply(body=drip_body, content_type=XML, drip_s=0.25),
                                               _with_upstream(ER, timeout_s=1.0), sleep=no_wait),
        "entity bomb, deadline 60 s": lambda: _timed(Reply(body=ENTITY_BOMB, content_type=XML), ER, sleep=no_wait),
        "gzip bomb, 10 KB limit": lambda: _timed(
            Reply(body=zeros, content_type=XML, headers={"Content-Encoding": "gzip"}), ER, sleep=no_wait,
            max_body_bytes=10_000),
        "4 calls at 10/s, one host": lambda: _timed(Reply(body=data_go_kr_xml(ROWS), content_type=XML),
                                                    _with_upstream(ER, rate_limit_per_s=10), calls=4),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    report = {}
    for name, go in cases().items():
        took, outcomes = [], set()
        for _ in range(args.runs):
            t, outcome = go()
            took.append(t)
            outcomes.add(outcome)
        report[name] = {"min_s": round(min(took), 3), "median_s": round(statistics.median(took), 3),
                        "max_s": round(max(took), 3), "outcome": sorted(outcomes)}
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=1))
    else:
        for name, r in report.items():
            print(f"{name:28} min {r['min_s']:6.3f}  median {r['median_s']:6.3f}  max {r['max_s']:6.3f} s"
                  f"   {'/'.join(r['outcome'])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
