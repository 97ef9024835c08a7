"""``ummaya eval retrieval --engine``: abstention end to end, over the rows of evals/retrieval.yaml.

Retrieval's own figures say whether the retriever abstained; a citizen meets the engine, whose scope
decision (runtime/turn/scope.py) may stop a turn retrieval kept, or let one through retrieval did not
(a value the request names offers a candidate). Here every row is asked of the engine the scenarios
run on (offline planner, Mock, the pinned clock, no credentials), each in a fresh session, and the
turn *abstained* when it stopped ``no_adapter`` — the way out. Rows are scored with the same metric
code as retrieval (runtime/retrieve/eval_retrieval.py): abstention precision, recall and F1 per split
and kind, with the raw counts (``abstain_fp``: in-scope requests the engine turned away), beside
retrieval's on the same rows. R@1 is the adapter the turn acted on: the first answering adapter it
called (a locate step on the way is not the answer), else the one it asked a question for (the
planner's ask names it), else the one it stopped at (a locate step only when nothing else), else
its first candidate.

The held-out split is scored, never tuned on (evals/README.md).
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .retrieve.eval_retrieval import SPLITS, EvalRequest, Report, Scores, evaluate, is_pending

# The engine's end-to-end abstention floors (``abstain_f1`` on the chosen split): measured at
# 2026-12-07 on the 164-adapter registry with the 1,078-request set (all 0.900, tune 0.935,
# held-out 0.800; retrieval alone 0.860 / 0.901 / 0.733) minus about two requests' worth of margin
# (the held-out split has 31 out-of-scope rows: one miss moves its F1 ~0.02). Before the
# facility-name reading and the whole-request rule for protected adapters (runtime/turn/scope.py)
# they were 0.876 / 0.913 / 0.776. The other metrics are retrieval's to hold (``ummaya eval
# retrieval``).
ENGINE_THRESHOLDS: dict[str, dict[str, float]] = {
    "all": {"abstain_f1": 0.88},
    "tune": {"abstain_f1": 0.91},
    "holdout": {"abstain_f1": 0.76},
}

# How a turn that abstained stops (runtime/turn/scope.py REASON).
ABSTAINED = "no_adapter"
# The statuses of a call row that reached its upstream (the gate's rows carry its stop instead).
DISPATCHED = frozenset({"ok", "no_data", "error"})


@dataclass
class EngineRow:
    query: str
    stop_reason: str
    acted: list[str]  # [] when the turn abstained
    why: str = ""  # the scope decision's code (scope.WHY) when it abstained
    spent: int = 0  # upstream calls dispatched before the way out (0: the scope was decided first)


def acted_on(result: Any, catalog: Any) -> list[str]:
    """The adapters the turn acted on, best first ([] for a way out)."""
    if result.stop_reason == ABSTAINED:
        return []
    def answers(a: str | None) -> bool:
        return bool(a) and (m := catalog.adapters.get(a)) is not None and m.primitive != "locate"

    called = [c["adapter_id"] for c in result.calls]
    # The adapter a question was asked for: the planner's ask names it (the gate stays quiet on an
    # allowed ask, so no permission event need say so).
    questioned = [c.get("adapter_id") for e in result.events
                  if e.type == "plan" and e.data.get("action") == "ask" for c in e.data.get("calls") or []]
    stopped = [e.data.get("adapter_id") for e in result.events
               if (e.type == "permission" or (e.type == "check" and e.data.get("check") != "scope_candidates"))
               and e.data.get("adapter_id")]
    ids = [*filter(answers, called), *filter(answers, questioned), *filter(answers, stopped),
           *stopped, *called, *(c["adapter_id"] for c in result.candidates)]
    return list(dict.fromkeys(a for a in ids if a))


def spent_on_way_out(result: Any) -> int:
    """Upstream calls a turn that ended in the way out dispatched first: the scope decision is
    taken before a call is spent (runtime/turn/scope.py), so this is 0 on every such row."""
    if result.stop_reason != ABSTAINED:
        return 0
    return sum(1 for c in result.calls if c.get("status") in DISPATCHED)


def why_of(result: Any) -> str:
    return next((str(e.data.get("why") or "") for e in result.events
                 if e.type == "check" and e.data.get("check") == "scope"), "")


def run_engine(requests: list[EvalRequest], engine: Any) -> dict[str, EngineRow]:
    """Ask every request of ``engine``, each in a session of its own."""
    from .turn import TurnRequest

    async def run_all() -> dict[str, EngineRow]:
        out: dict[str, EngineRow] = {}
        for i, r in enumerate(requests):
            if r.query in out:
                continue
            res = await engine.ask(TurnRequest(r.query, session_id=f"eval-abstention-{i}", mode="mock"))
            out[r.query] = EngineRow(r.query, res.stop_reason, acted_on(res, engine.catalog), why_of(res),
                                     spent_on_way_out(res))
        return out

    return asyncio.run(run_all())


@dataclass
class Comparison:
    engine: Report
    retrieval: Report
    rows: dict[str, EngineRow]

    def as_dict(self) -> dict[str, Any]:
        return {
            "engine": self.engine.as_dict(),
            "retrieval": {"overall": self.retrieval.overall.as_dict(),
                          "by_split": {k: v.as_dict() for k, v in self.retrieval.by_split.items()}},
            "why": _count_why(self.rows),
            "calls_before_way_out": sum(r.spent for r in self.rows.values()),
        }


def _count_why(rows: dict[str, EngineRow]) -> dict[str, int]:
    out: dict[str, int] = {}
    for r in rows.values():
        if r.stop_reason == ABSTAINED:
            out[r.why or "?"] = out.get(r.why or "?", 0) + 1
    return dict(sorted(out.items()))


def compare(requests: list[EvalRequest], engine: Any, retrieval_rank: Callable[[str], list[str]],
            split: str = "all") -> Comparison:
    known = frozenset(engine.catalog.adapters)
    chosen = [r for r in requests if (split == "all" or r.split == split) and not is_pending(r, known)]
    rows = run_engine(chosen, engine)
    eng = evaluate(requests, lambda q: rows[q].acted, split, ENGINE_THRESHOLDS, known)
    ret = evaluate(requests, retrieval_rank, split, {}, known)
    return Comparison(eng, ret, rows)


def evaluate_engine(requests: list[EvalRequest], generated: Path, retrieval_rank: Callable[[str], list[str]] | None = None,
                    split: str = "all") -> Comparison:
    """The scenario engine (runtime/scenarios.py) on a throw-away store."""
    from .scenarios import scenario_engine
    from .store import open_store

    with tempfile.TemporaryDirectory(prefix="ummaya-eval-abstention-") as tmp:
        store = open_store(f"sqlite:///{tmp}/eval.sqlite3")
        try:
            engine = scenario_engine(generated, store=store)
            rank = retrieval_rank or (lambda q: [c.adapter_id for c in engine.retriever.search(q, top_k=10)])
            return compare(requests, engine, rank, split)
        finally:
            store.close()


def _line(name: str, s: Scores) -> str:
    return (f"| {name} | {s.n} | {s.recall_at_1:.3f} | {s.abstain_precision:.3f} | {s.abstain_recall:.3f} | "
            f"{s.abstain_f1:.3f} | {s.abstain_tp} | {s.abstain_fp} | {s.abstain_fn} |")


def format_comparison(c: Comparison) -> str:
    head = "| rows | n | R@1 | abst.P | abst.R | abst.F1 | tp | fp (in-scope turned away) | fn |"
    lines = ["end to end (the engine's way out, `no_adapter`):", head, "|" + "---|" * 9,
             _line("overall", c.engine.overall)]
    lines += [_line(f"split={k}", v) for k, v in c.engine.by_split.items()]
    lines += [_line(f"kind={k}", v) for k, v in c.engine.by_kind.items() if k == "out_of_scope"]
    lines += ["", "retrieval alone, same rows:", head, "|" + "---|" * 9, _line("overall", c.retrieval.overall)]
    lines += [_line(f"split={k}", v) for k in SPLITS if (v := c.retrieval.by_split.get(k)) is not None]
    why = _count_why(c.rows)
    lines += ["", "ways out by the scope decision's code: " + ", ".join(f"{k} {n}" for k, n in why.items())]
    spent = [r for r in c.rows.values() if r.spent]
    lines += [f"upstream calls spent before a way out: {sum(r.spent for r in spent)}"
              + (" (" + "; ".join(repr(r.query) for r in spent[:5]) + ")" if spent else "")]
    return "\n".join(lines)


__all__ = ["DISPATCHED", "ENGINE_THRESHOLDS", "Comparison", "EngineRow", "acted_on", "spent_on_way_out", "compare", "evaluate_engine", "format_comparison"]
