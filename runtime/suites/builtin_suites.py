"""The three suites that exist today, on the one interface (suite.py): retrieval, turns, conversations.

Each reads its evaluation set from the project and runs it against the release's own bundle.
"""

from __future__ import annotations

import asyncio
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .suite import ReleaseUnderTest, SuiteResult, sha256_of


def _adapter_ids(folder: Path) -> set[str]:
    """The adapter ids of an unpacked release (its catalog.json)."""
    import json

    catalog = json.loads((folder / "catalog.json").read_text(encoding="utf-8"))
    return {a["id"] for a in catalog["adapters"]}


def _temp_store(tmp: str) -> Any:
    from ummaya.runtime.store import open_store

    return open_store(f"sqlite:///{Path(tmp) / 'suite.sqlite3'}")


@dataclass(frozen=True)
class RetrievalSuite:
    """evals/retrieval.yaml through the release's retriever (its policy): R@1, R@5, MRR and
    abstention F1 overall and per split; a case is one request (top-1 right, or rightly abstained)."""

    name: str = "retrieval"
    eval_set: str = "evals/retrieval.yaml"

    def run(self, release: ReleaseUnderTest) -> SuiteResult:
        from ummaya.runtime.retrieve.eval_retrieval import THRESHOLDS, evaluate, is_pending, load_eval_set

        path = release.eval_file(self.eval_set)
        requests = load_eval_set(path)
        retriever = release.retriever()
        # Requests for adapters this release does not have are pending (not scored), as in
        # `ummaya eval retrieval`: a registry that is still growing neither fails nor flatters.
        known = _adapter_ids(release.folder)
        rep = evaluate(requests, lambda q: [c.adapter_id for c in retriever.search(q, top_k=10)], known=known)
        figures: dict[str, float] = {}
        for split, scores in (("all", rep.overall), *rep.by_split.items()):
            for k in ("recall_at_1", "recall_at_5", "mrr", "abstain_f1"):
                figures[f"{split}.{k}"] = round(getattr(scores, k), 4)
        failed = {(f["split"], f["query"]) for f in rep.failures}
        cases = {f"{r.split}: {r.query}": (r.split, r.query) not in failed for r in requests if not is_pending(r, known)}
        floors = {f"{split}.{k}": v for split, row in THRESHOLDS.items() for k, v in row.items()}
        return SuiteResult(figures, cases, info={"requests": rep.overall.n, "policy": release.policy.label},
                           floors=floors, eval_set=sha256_of([path]))


@dataclass(frozen=True)
class TurnsSuite:
    """registry/scenarios/ through the whole engine (offline planner, Mock): pass and grounded rates;
    a case is one scenario turn."""

    name: str = "turns"
    scenarios: str = "registry/scenarios"

    def run(self, release: ReleaseUnderTest) -> SuiteResult:
        from ummaya.runtime.eval_turns import evaluate, load
        from ummaya.runtime.scenarios import scenario_engine

        path = release.eval_file(self.scenarios)
        scenarios = load(path, release.folder)  # ids checked against this release's catalog
        with tempfile.TemporaryDirectory(prefix="ummaya-suite-") as tmp:
            store = _temp_store(tmp)
            try:
                # The scenarios' own engine (pinned clock, no credentials), on this release's
                # build and retriever: the verdict the tests and `ummaya check` give.
                engine = scenario_engine(release.folder, store=store, retriever=release.retriever())
                rep = asyncio.run(evaluate(engine, scenarios, planner="offline"))
            finally:
                store.close()
        lat = rep.latency()
        cases = {f"{r.scenario}#{r.turn}": not r.problems for r in rep.rows}
        files = sorted(path.glob("*.yaml")) if path.is_dir() else [path]
        return SuiteResult({"pass_rate": round(rep.pass_rate, 4), "grounded_rate": round(rep.grounded_rate, 4)},
                           cases, info={"scenarios": len(rep.scenarios), "turns": len(rep.rows), **lat},
                           eval_set=sha256_of(files))


@dataclass(frozen=True)
class ConversationsSuite:
    """evals/conversations.yaml in fresh sessions: pass rate overall, per split and per category,
    and 1.0 / 0.0 for "no personal value reached an upstream"; a case is one conversation."""

    name: str = "conversations"
    eval_set: str = "evals/conversations.yaml"

    def run(self, release: ReleaseUnderTest) -> SuiteResult:
        from ummaya.runtime.eval_conversations import TARGETS, evaluate, load_conversations

        path = release.eval_file(self.eval_set)
        convs = load_conversations(path)
        with tempfile.TemporaryDirectory(prefix="ummaya-suite-") as tmp:
            store = _temp_store(tmp)
            try:
                rep = evaluate(convs, engine=release.engine(store))
            finally:
                store.close()
        d = rep.as_dict()
        figures = {"pass_rate": d["overall"]["rate"] or 0.0,
                   "no_personal_data_leak": 0.0 if d["personal_data_leaks"] else 1.0}
        figures |= {f"{s}.pass_rate": v["rate"] for s, v in d["splits"].items()}
        figures |= {f"category.{c}.pass_rate": v["rate"] for c, v in d["categories"].items()}
        cases = {o.conversation.id: o.passed for o in rep.outcomes}
        floors = {f"{s}.pass_rate": t for s, t in TARGETS.items()} | {"no_personal_data_leak": 1.0}
        return SuiteResult(figures, cases, info={"conversations": d["overall"]["n"]}, floors=floors,
                           eval_set=sha256_of([path]))


RETRIEVAL = RetrievalSuite()
TURNS = TurnsSuite()
CONVERSATIONS = ConversationsSuite()
