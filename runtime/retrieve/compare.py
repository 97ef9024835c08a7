"""Retrieval policies side by side on one evaluation set, from one run (``ummaya eval retrieval --policy``).

For each policy, in the order given: build its retriever over the same build, run one warm-up pass
over the set, then time every request once (top 10) — R@1, R@5 and abstention F1 overall and held
out, p50/p99 milliseconds per request, and memory: the process's resident-set growth from before
the retriever was built to after the timed pass (the dense model and its passage matrix for
``hybrid``; the compiled postings for both). Embeddings are cached beside the index, so a second
run of a hybrid policy does not pay the passage encoding again (``build_s`` shows what was paid).
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .eval_retrieval import EvalRequest, Report, evaluate
from .policy import RetrievalPolicy


def rss_mib() -> float:
    """Resident set size of this process (Linux /proc; 0 elsewhere)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            pages = int(f.read().split()[1])
    except (OSError, ValueError, IndexError):
        return 0.0
    import os

    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


@dataclass
class PolicyRun:
    policy: RetrievalPolicy
    source: str
    report: Report
    latencies_ms: list[float] = field(default_factory=list)
    build_s: float = 0.0
    memory_mib: float = 0.0

    def row(self) -> dict[str, Any]:
        o, h = self.report.overall, self.report.by_split.get("holdout")
        ms = sorted(self.latencies_ms)
        p99 = ms[min(len(ms) - 1, round(0.99 * (len(ms) - 1)))] if ms else 0.0
        return {
            "policy": self.policy.label, "backend": self.policy.backend, "source": self.source,
            "dense": self.policy.dense.model_dump() if self.policy.dense else None,
            "recall_at_1": round(o.recall_at_1, 4), "recall_at_5": round(o.recall_at_5, 4),
            "abstain_f1": round(o.abstain_f1, 4),
            "holdout_recall_at_1": round(h.recall_at_1, 4) if h else None,
            "holdout_abstain_f1": round(h.abstain_f1, 4) if h else None,
            "p50_ms": round(statistics.median(ms), 3) if ms else 0.0, "p99_ms": round(p99, 3),
            "build_s": round(self.build_s, 2), "memory_mib": round(self.memory_mib, 1),
            "below_threshold": self.report.below,
        }


def run_policy(policy: RetrievalPolicy, generated: Path, requests: list[EvalRequest],
               source: str = "") -> PolicyRun:
    before = rss_mib()
    t0 = time.perf_counter()
    retriever = policy.retriever(generated)
    build_s = time.perf_counter() - t0
    for r in requests:  # warm-up: caches, first-call costs
        retriever.search(r.query, top_k=10)
    latencies: list[float] = []

    def rank(q: str) -> list[str]:
        t = time.perf_counter()
        out = [c.adapter_id for c in retriever.search(q, top_k=10)]
        latencies.append((time.perf_counter() - t) * 1000)
        return out

    report = evaluate(requests, rank)
    return PolicyRun(policy, source, report, latencies, build_s, max(0.0, rss_mib() - before))


def compare(policies: list[tuple[RetrievalPolicy, str]], generated: Path,
            requests: list[EvalRequest]) -> list[PolicyRun]:
    return [run_policy(p, generated, requests, src) for p, src in policies]


ROWS = (("R@1", "recall_at_1", "{:.3f}"), ("R@5", "recall_at_5", "{:.3f}"),
        ("abstention F1", "abstain_f1", "{:.3f}"), ("held-out R@1", "holdout_recall_at_1", "{:.3f}"),
        ("held-out abstention F1", "holdout_abstain_f1", "{:.3f}"), ("p50 ms", "p50_ms", "{:.3f}"),
        ("p99 ms", "p99_ms", "{:.3f}"), ("memory MiB (RSS growth)", "memory_mib", "{:.1f}"),
        ("build s", "build_s", "{:.2f}"))


def format_comparison(runs: list[PolicyRun], n: int) -> str:
    rows = [r.row() for r in runs]
    head = ["figure", *(f"{r['policy']} ({r['backend']})" for r in rows)]
    lines = [f"{n} requests, same set, one run", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for label, key, fmt in ROWS:
        cells = [fmt.format(r[key]) if r[key] is not None else "-" for r in rows]
        lines.append("| " + " | ".join([label, *cells]) + " |")
    return "\n".join(lines)
