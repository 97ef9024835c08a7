"""Argument fidelity (``ummaya eval arguments``): is the right adapter asked the right question?

``evals/arguments.yaml`` holds citizen requests and the call that must follow each: the first call
to ``adapter`` in the scored turn must carry every field of ``arguments`` with exactly that value
(numbers compared as numbers) and none of ``absent``; ``adapter: null`` with ``stop_reason:
needs_input`` means the right answer is to ask. ``before`` messages run first in the same session
(not scored); ``consents`` are granted up front. Every case runs at the set's ``clock`` on the
embedded default (offline planner, Mock dispatch, a throwaway SQLite store) — the arguments a
citizen's ``ummaya ask --json`` shows, since the call rows are the arguments sent.

The held-out split is decided by the id alone (sha1, first hex digit 0–4) and scored only at the
end, never used for tuning. Figures are per split and per slot class.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import hashlib
import tempfile
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field

TARGETS = {"dev": 0.97, "heldout": 0.95}


class ArgumentCase(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str = Field(min_length=1)
    request: str = Field(min_length=1)
    before: list[str] = Field(default_factory=list)
    adapter: str | None
    arguments: dict[str, Any] = Field(default_factory=dict)
    absent: list[str] = Field(default_factory=list)
    slot_class: str = Field(min_length=1)
    mode: Literal["auto", "live", "mock"] = "mock"
    language: Literal["ko", "en"] | None = None
    consents: list[str] = Field(default_factory=list)
    stop_reason: str | None = None

    @property
    def split(self) -> str:
        return split_of(self.id)


class ArgumentSet(BaseModel):
    model_config = ConfigDict(extra="forbid")
    format: Literal[1] = 1
    clock: dt.datetime
    cases: list[ArgumentCase]


def split_of(case_id: str) -> str:
    return "heldout" if hashlib.sha1(case_id.encode("utf-8")).hexdigest()[0] in "01234" else "dev"


def load(path: Path) -> ArgumentSet:
    data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    s = ArgumentSet.model_validate(data)
    seen: set[str] = set()
    for c in s.cases:
        if c.id in seen:
            raise ValueError(f"{path}: duplicate case id {c.id!r}")
        seen.add(c.id)
    return s


def _same(want: Any, got: Any) -> bool:
    if isinstance(want, bool) or isinstance(got, bool):
        return want is got
    if isinstance(want, (int, float)) and isinstance(got, (int, float)):
        return float(want) == float(got)
    return want == got


@dataclass
class CaseOutcome:
    case: ArgumentCase
    passed: bool
    problems: list[str] = field(default_factory=list)
    got: dict[str, Any] | None = None
    stop_reason: str = ""
    calls: list[str] = field(default_factory=list)


def judge(case: ArgumentCase, result: Any) -> CaseOutcome:
    calls = [c for c in result.calls if c.get("status") != "refused"]
    names = [c["adapter_id"] for c in result.calls]
    if case.adapter is None:
        want = case.stop_reason or "needs_input"
        ok = result.stop_reason == want
        return CaseOutcome(case, ok, [] if ok else [f"stop {result.stop_reason}, want {want}"], None,
                           result.stop_reason, names)
    row = next((c for c in calls if c["adapter_id"] == case.adapter), None)
    if row is None:
        return CaseOutcome(case, False, [f"{case.adapter} not called (calls: {names or '-'}, stop {result.stop_reason})"],
                           None, result.stop_reason, names)
    args = row.get("arguments") or {}
    problems = []
    for k, v in case.arguments.items():
        if k not in args:
            problems.append(f"{k}: missing, want {v!r}")
        elif not _same(v, args[k]):
            problems.append(f"{k}: {args[k]!r}, want {v!r}")
    for k in case.absent:
        if k in args:
            problems.append(f"{k}: sent {args[k]!r}, want it absent")
    if case.stop_reason and result.stop_reason != case.stop_reason:
        problems.append(f"stop {result.stop_reason}, want {case.stop_reason}")
    return CaseOutcome(case, not problems, problems, args, result.stop_reason, names)


async def run_case(engine: Any, case: ArgumentCase) -> CaseOutcome:
    from .turn import TurnRequest

    session = f"args-{case.id}-{uuid.uuid4().hex[:8]}"
    consents = tuple(case.consents)
    for message in case.before:
        await engine.ask(TurnRequest(message, session_id=session, mode=case.mode, consents=consents))
    result = await engine.ask(TurnRequest(case.request, session_id=session, mode=case.mode, consents=consents))
    return judge(case, result)


@dataclass
class Report:
    outcomes: list[CaseOutcome]
    split: str = "all"

    @staticmethod
    def rate(rows: list[CaseOutcome]) -> dict[str, Any]:
        n = len(rows)
        passed = sum(o.passed for o in rows)
        return {"n": n, "passed": passed, "rate": round(passed / n, 4) if n else None}

    def below(self) -> list[str]:
        out = []
        for s, target in TARGETS.items():
            r = self.rate([o for o in self.outcomes if o.case.split == s])
            if r["n"] and r["rate"] < target:
                out.append(f"{s} {r['rate']:.3f} < {target}")
        return out

    def as_dict(self) -> dict[str, Any]:
        rows = self.outcomes
        classes = sorted({o.case.slot_class for o in rows})
        return {
            "split": self.split,
            "overall": self.rate(rows),
            "splits": {s: r for s in ("dev", "heldout") if (r := self.rate([o for o in rows if o.case.split == s]))["n"]},
            "slot_classes": {c: self.rate([o for o in rows if o.case.slot_class == c]) for c in classes},
            "adapters": {a: self.rate([o for o in rows if (o.case.adapter or "(ask)") == a])
                         for a in sorted({o.case.adapter or "(ask)" for o in rows})},
            "targets": TARGETS,
            "below": self.below(),
            "failures": [{"id": o.case.id, "split": o.case.split, "slot_class": o.case.slot_class,
                          "request": o.case.request, "adapter": o.case.adapter, "want": o.case.arguments,
                          "got": o.got, "calls": o.calls, "stop_reason": o.stop_reason, "problems": o.problems}
                         for o in rows if not o.passed],
        }


def format_table(rep: Report) -> str:
    d = rep.as_dict()
    o = d["overall"]
    lines = [f"arguments ({d['split']}): {o['passed']}/{o['n']} passed ({(o['rate'] or 0):.1%})"]
    for s, v in d["splits"].items():
        lines.append(f"  {s:<8} {v['passed']:>4}/{v['n']:<4} {v['rate']:.1%}  (target ≥ {TARGETS[s]:.0%})")
    lines.append("  by slot class:")
    for c, v in d["slot_classes"].items():
        lines.append(f"    {c:<12} {v['passed']:>4}/{v['n']:<4} {v['rate']:.1%}")
    return "\n".join(lines)


def evaluate(arg_set: ArgumentSet, *, split: str = "all", generated: Path | None = None, engine: Any = None,
             only: str | None = None) -> Report:
    """Run the cases of ``split`` (dev | heldout | all) at the set's clock."""
    from .request_context import fixed_clock

    chosen = [c for c in arg_set.cases if (split == "all" or c.split == split) and (not only or only in c.id)]

    async def run_all(eng: Any) -> list[CaseOutcome]:
        return [await run_case(eng, c) for c in chosen]

    with fixed_clock(arg_set.clock):
        if engine is not None:
            return Report(asyncio.run(run_all(engine)), split)
        from .assemble import build_engine
        from .store import open_store

        with tempfile.TemporaryDirectory(prefix="ummaya-eval-args-") as tmp:
            store = open_store(f"sqlite:///{tmp}/eval.sqlite3")
            try:
                eng = build_engine(generated, store=store)
                return Report(asyncio.run(run_all(eng)), split)
            finally:
                store.close()


__all__ = ["ArgumentCase", "ArgumentSet", "CaseOutcome", "Report", "TARGETS", "evaluate", "format_table", "judge",
           "load", "split_of"]
