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

Pending requests: the eval set is written ahead of the registry (requests for adapters that
docs/registry-plan.md plans but nobody has built yet). Given the registry's ids (``known``), a
request whose expected ids are not all in it is *pending*: it is left out of every figure, never
ranked, and counted (``Report.pending``, with the ids it waits for), so a missing adapter neither
fails nor flatters the figures. Out-of-scope requests are never pending.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml

SPLITS = ("tune", "holdout")

# Measured on the 121-adapter registry with the 1,024-request set at 8e79073 (evals/README.md,
# "Thresholds": all R@1 0.933, R@5 0.968, MRR 0.949, abstention F1 0.846; tune 0.958 / 0.976 /
# 0.966 / 0.886; holdout 0.877 / 0.950 / 0.910 / 0.721) minus about two requests' worth of margin
# per split and metric. These are *lower* than at 108 adapters: the 13 adapters merged last
# (HIRA detail lookups, KTO tourism, camping, certificates, TAGO routes and flights) brought 39
# requests into scoring and new close neighbours; issue 18's targets (R@1 ≥ 0.95, R@5 ≥ 0.99,
# abstention ≥ 90 % on tune and held-out) are not met, and the floors say where we are, not where
# we should be. The holdout has 31 out-of-scope requests: one abstention miss moves its F1 ~0.02.
# At 145 adapters the holdout abstention F1 measured 0.689 and its floor is 0.68 (evals/README.md).
THRESHOLDS: dict[str, dict[str, float]] = {
    "all": {"recall_at_1": 0.929, "recall_at_5": 0.964, "mrr": 0.945, "abstain_f1": 0.835},
    "tune": {"recall_at_1": 0.954, "recall_at_5": 0.972, "mrr": 0.962, "abstain_f1": 0.875},
    "holdout": {"recall_at_1": 0.868, "recall_at_5": 0.941, "mrr": 0.901, "abstain_f1": 0.68},
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


def is_pending(request: EvalRequest, known: Collection[str]) -> bool:
    """True when the request expects an adapter the registry does not have yet."""
    return any(a not in known for a in request.expected)


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
    # Requests skipped because an expected adapter is not in the registry yet, and those adapters.
    pending: int = 0
    pending_adapters: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "split": self.split,
            "pending": self.pending,
            "pending_adapters": self.pending_adapters,
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
    known: Collection[str] | None = None,
) -> Report:
    """Run ``rank`` (query → adapter ids, best first, [] = abstain) over the selected split.

    With ``known`` (the registry's adapter ids), requests expecting an adapter outside it are
    pending: skipped, not ranked, and counted in ``Report.pending``."""
    chosen = [r for r in requests if split == "all" or r.split == split]
    waiting = [r for r in chosen if known is not None and is_pending(r, known)]
    chosen = [r for r in chosen if not (known is not None and is_pending(r, known))]
    results = [(r, rank(r.query)) for r in chosen]
    rep = Report(split, score(results))
    rep.pending = len(waiting)
    rep.pending_adapters = sorted({a for r in waiting for a in r.expected if a not in (known or ())})
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
