"""Retrieval evaluation: metric math, the eval set, and the thresholds CI holds us to.

Metrics (per request, then averaged):

* in-scope requests (``expected`` non-empty): Recall@1 and Recall@5 (1 when any expected adapter is
  in the top k), MRR (1/rank of the first expected adapter in the top 10, else 0), nDCG@10 with
  binary relevance (ideal DCG over min(|expected|, 10) positions). An abstention scores 0 on all.
* abstention is a binary decision, positive = "nothing fits": precision = correctly abstained /
  all abstentions, recall = correctly abstained / all out-of-scope requests, F1 their harmonic
  mean. A request abstained on wrongly is a false positive; a wrong confident answer to an
  out-of-scope request is a false negative.

Thresholds (``THRESHOLDS``; ``ummaya eval retrieval`` exits 1 below any): set from the measured
figures in evals/README.md with a margin for noise, per split.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml

SPLITS = ("tune", "holdout")

# Measured on the 26-adapter registry with the 388-request set (evals/README.md: all R@1 0.954,
# R@5 0.985, MRR 0.966, abstention F1 0.903; tune 0.973 / 0.991 / 0.981 / 0.947; holdout
# 0.911 / 0.970 / 0.935 / 0.759) minus a margin of about one to two requests' worth of noise per
# metric. The holdout has 15 out-of-scope requests, so one abstention miss moves its F1 by ~0.04.
THRESHOLDS: dict[str, dict[str, float]] = {
    "all": {"recall_at_1": 0.94, "recall_at_5": 0.97, "mrr": 0.95, "abstain_f1": 0.87},
    "tune": {"recall_at_1": 0.96, "recall_at_5": 0.98, "mrr": 0.97, "abstain_f1": 0.92},
    "holdout": {"recall_at_1": 0.89, "recall_at_5": 0.95, "mrr": 0.91, "abstain_f1": 0.68},
}


@dataclass(frozen=True)
class EvalRequest:
    query: str
    expected: tuple[str, ...]
    kind: str
    split: str


def load_eval_set(path: Path) -> list[EvalRequest]:
    raw = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    out = []
    for i, r in enumerate(raw["requests"]):
        if r.get("split") not in SPLITS:
            raise ValueError(f"{path}: request {i}: split must be one of {SPLITS}")
        out.append(EvalRequest(r["query"], tuple(r.get("expected") or ()), r["kind"], r["split"]))
    return out


def reciprocal_rank(ranked: list[str], expected: Iterable[str], k: int = 10) -> float:
    exp = set(expected)
    for i, a in enumerate(ranked[:k], 1):
        if a in exp:
            return 1.0 / i
    return 0.0


def ndcg(ranked: list[str], expected: Iterable[str], k: int = 10) -> float:
    exp = set(expected)
    if not exp:
        return 0.0
    dcg = sum(1.0 / math.log2(i + 1) for i, a in enumerate(ranked[:k], 1) if a in exp)
    ideal = sum(1.0 / math.log2(i + 1) for i in range(1, min(len(exp), k) + 1))
    return dcg / ideal


def hit(ranked: list[str], expected: Iterable[str], k: int) -> float:
    exp = set(expected)
    return 1.0 if any(a in exp for a in ranked[:k]) else 0.0


@dataclass
class Scores:
    n: int = 0
    n_in_scope: int = 0
    n_out_of_scope: int = 0
    recall_at_1: float = 0.0
    recall_at_5: float = 0.0
    mrr: float = 0.0
    ndcg_at_10: float = 0.0
    abstain_precision: float = 0.0
    abstain_recall: float = 0.0
    abstain_f1: float = 0.0
    # raw counts, so rows can be checked by hand
    abstain_tp: int = 0
    abstain_fp: int = 0
    abstain_fn: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {k: (round(v, 4) if isinstance(v, float) else v) for k, v in asdict(self).items()}


def score(results: list[tuple[EvalRequest, list[str]]]) -> Scores:
    """Aggregate metrics over (request, ranked adapter ids — [] = abstained) pairs."""
    s = Scores(n=len(results))
    r1 = r5 = rr = nd = 0.0
    for req, ranked in results:
        if req.expected:
            s.n_in_scope += 1
            r1 += hit(ranked, req.expected, 1)
            r5 += hit(ranked, req.expected, 5)
            rr += reciprocal_rank(ranked, req.expected)
            nd += ndcg(ranked, req.expected)
            if not ranked:
                s.abstain_fp += 1
        else:
            s.n_out_of_scope += 1
            if ranked:
                s.abstain_fn += 1
            else:
                s.abstain_tp += 1
    if s.n_in_scope:
        s.recall_at_1, s.recall_at_5 = r1 / s.n_in_scope, r5 / s.n_in_scope
        s.mrr, s.ndcg_at_10 = rr / s.n_in_scope, nd / s.n_in_scope
    tp, fp, fn = s.abstain_tp, s.abstain_fp, s.abstain_fn
    s.abstain_precision = tp / (tp + fp) if tp + fp else (1.0 if not fn else 0.0)
    s.abstain_recall = tp / (tp + fn) if tp + fn else 1.0
    p, r = s.abstain_precision, s.abstain_recall
    s.abstain_f1 = 2 * p * r / (p + r) if p + r else 0.0
    return s


@dataclass
class Report:
    split: str
    overall: Scores
    by_split: dict[str, Scores] = field(default_factory=dict)
    by_kind: dict[str, Scores] = field(default_factory=dict)
    failures: list[dict[str, Any]] = field(default_factory=list)
    thresholds: dict[str, float] = field(default_factory=dict)
    below: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "split": self.split,
            "overall": self.overall.as_dict(),
            "by_split": {k: v.as_dict() for k, v in self.by_split.items()},
            "by_kind": {k: v.as_dict() for k, v in self.by_kind.items()},
            "thresholds": self.thresholds,
            "below_threshold": self.below,
            "passed": not self.below,
            "failures": self.failures,
        }


def evaluate(
    requests: list[EvalRequest],
    rank: Callable[[str], list[str]],
    split: str = "all",
    thresholds: dict[str, dict[str, float]] | None = None,
) -> Report:
    """Run ``rank`` (query → adapter ids, best first, [] = abstain) over the selected split."""
    chosen = [r for r in requests if split == "all" or r.split == split]
    results = [(r, rank(r.query)) for r in chosen]
    rep = Report(split, score(results))
    for sp in SPLITS:
        part = [x for x in results if x[0].split == sp]
        if part:
            rep.by_split[sp] = score(part)
    for kind in sorted({r.kind for r in chosen}):
        rep.by_kind[kind] = score([x for x in results if x[0].kind == kind])
    for req, ranked in results:
        ok = (not req.expected and not ranked) or (req.expected and ranked[:1] and ranked[0] in req.expected)
        if not ok:
            rep.failures.append(
                {"query": req.query, "expected": list(req.expected), "got": ranked[:3],
                 "kind": req.kind, "split": req.split}
            )
    rep.thresholds = dict((thresholds or THRESHOLDS).get(split, {}))
    rep.below = [
        f"{k} {getattr(rep.overall, k):.3f} < {v}"
        for k, v in rep.thresholds.items()
        if getattr(rep.overall, k) < v
    ]
    return rep


def format_table(rep: Report) -> str:
    cols = ("n", "recall_at_1", "recall_at_5", "mrr", "ndcg_at_10", "abstain_precision",
            "abstain_recall", "abstain_f1")
    head = ("rows", "n", "R@1", "R@5", "MRR", "nDCG@10", "abst.P", "abst.R", "abst.F1")
    rows = [("overall", rep.overall)]
    rows += [(f"split={k}", v) for k, v in rep.by_split.items()]
    rows += [(f"kind={k}", v) for k, v in rep.by_kind.items()]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, s in rows:
        vals = [str(s.n)] + [f"{getattr(s, c):.3f}" for c in cols[1:]]
        lines.append("| " + " | ".join([name, *vals]) + " |")
    return "\n".join(lines)
