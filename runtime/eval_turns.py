"""``ummaya eval turns``: the scenario set through a whole engine, with any planner.

Every scenario in ``registry/scenarios/`` (single- and multi-turn) runs on a fresh session; each
turn is checked against its ``expect`` (runtime/scenarios.py ``check``) and timed. The report:

- **pass rate** — scenarios whose every turn met its expectation;
- **grounded rate** — turns whose answer the claim check left whole (``grounded: true``);
- **stop-reason confusion** — expected → got, per turn, so a model that answers where it should
  ask (or the other way round) shows as a cell, not just as a failure;
- **latency** — p50/p95 wall time per turn, model and upstreams included.

It is the same engine the CLI and the server use, so running it with ``--planner openai`` against
K-EXAONE (FriendliAI), vLLM or Ollama measures that model inside UMMAYA's guarantees.
"""

from __future__ import annotations

import statistics
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


from .scenarios import Scenario, ScenarioError, check, parse_scenario_file, turn_request


@dataclass
class TurnRow:
    scenario: str
    turn: int
    request: str
    expected: str
    got: str
    grounded: bool
    ms: float
    problems: list[str]


@dataclass
class TurnsReport:
    planner: str
    rows: list[TurnRow] = field(default_factory=list)
    scenarios: dict[str, bool] = field(default_factory=dict)  # id -> every turn passed

    @property
    def pass_rate(self) -> float:
        return sum(self.scenarios.values()) / len(self.scenarios) if self.scenarios else 0.0

    @property
    def grounded_rate(self) -> float:
        return sum(r.grounded for r in self.rows) / len(self.rows) if self.rows else 0.0

    def confusion(self) -> dict[str, dict[str, int]]:
        out: dict[str, Counter[str]] = {}
        for r in self.rows:
            out.setdefault(r.expected, Counter())[r.got] += 1
        return {e: dict(sorted(c.items())) for e, c in sorted(out.items())}

    def latency(self) -> dict[str, float]:
        ms = sorted(r.ms for r in self.rows)
        if not ms:
            return {"p50_ms": 0.0, "p95_ms": 0.0}
        return {"p50_ms": round(statistics.median(ms), 1),
                "p95_ms": round(ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))], 1)}

    def as_dict(self) -> dict[str, Any]:
        return {
            "planner": self.planner,
            "scenarios": len(self.scenarios), "turns": len(self.rows),
            "pass_rate": round(self.pass_rate, 4), "grounded_rate": round(self.grounded_rate, 4),
            "stop_reason_confusion": self.confusion(), **self.latency(),
            "failures": [{"scenario": r.scenario, "turn": r.turn, "request": r.request, "problems": r.problems}
                         for r in self.rows if r.problems],
        }


def load(path: Path, generated: Path | None = None) -> list[Scenario]:
    """Scenarios from a file, or from every ``*.yaml`` in a folder (in name order), each adapter id
    in ``calls`` and ``consents`` checked against the compiled catalog in ``generated`` (None: the
    one the runtime loads, ``paths.generated_dir()``) — the catalog the evaluated engine runs on.

    Raises ``ScenarioError`` (a ValueError) listing every problem as ``file:line: message``: a
    scenario naming an adapter the catalog does not have would otherwise run and fail as a wrong
    call, not as the typo it is."""
    from ummaya.model.documents import Problem
    from ummaya.paths import generated_dir

    catalog = (generated if generated is not None else generated_dir()) / "catalog.json"
    adapters = catalog_ids(catalog)
    files = sorted(path.glob("*.yaml")) if path.is_dir() else [path]
    out: list[Scenario] = []
    problems: list[Problem] = []
    for f in files:
        rel = _shown(f)
        _, parsed, errs = parse_scenario_file(f, rel, adapters)
        problems += errs
        if parsed is not None:
            out.extend(parsed.scenarios)
    if problems:
        raise ScenarioError(sorted(problems))
    return out


def catalog_ids(catalog: Path) -> set[str]:
    """The adapter ids of a compiled ``catalog.json``; a ValueError naming it if it cannot be read."""
    from .scenarios import catalog_ids as read_ids

    try:
        return read_ids(catalog)
    except (OSError, ValueError, TypeError) as exc:
        raise ValueError(f"{catalog}: no compiled catalog to check the scenarios' adapter ids against "
                         f"(run `ummaya build`): {exc}") from exc


def _shown(f: Path) -> str:
    """A file as an error names it: relative to the working directory when it is inside it."""
    try:
        return f.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return f.as_posix()


async def evaluate(engine: Any, scenarios: list[Scenario], *, planner: str,
                   only: str | None = None, progress: Any = None, context_tokens: int | None = None,
                   deadline_s: float | None = None) -> TurnsReport:
    """Run every turn of every scenario (a wrong turn does not stop the later ones: their figures
    count too); ``only``: ids containing this text; ``context_tokens``/``deadline_s``: each turn's
    prompt budget and deadline (None: the planner's and the engine's defaults)."""
    import uuid

    rep = TurnsReport(planner)
    for sc in scenarios:
        if only and only not in sc.id:
            continue
        session = f"eval-{sc.id}-{uuid.uuid4().hex[:8]}"
        consents: tuple[str, ...] = tuple(sc.consents)
        ok = True
        for n, turn in enumerate(sc.all_turns(), 1):
            consents = consents + tuple(c for c in turn.consents if c not in consents)
            t0 = time.perf_counter()
            req = turn_request(sc, turn, session, consents)
            req.context_budget_tokens, req.deadline_s = context_tokens, deadline_s
            result = await engine.ask(req)
            ms = (time.perf_counter() - t0) * 1000
            problems = check(turn.expect, result, turn.language or sc.language)
            ok = ok and not problems
            rep.rows.append(TurnRow(sc.id, n, turn.request, turn.expect.stop_reason, result.stop_reason,
                                    bool(getattr(result, "grounded", True)), round(ms, 1), problems))
            if progress is not None:
                progress(rep.rows[-1])
        rep.scenarios[sc.id] = ok
    return rep


def format_report(rep: TurnsReport) -> str:
    d = rep.as_dict()
    lines = [
        f"planner {rep.planner}: {d['scenarios']} scenarios, {d['turns']} turns",
        f"  pass rate      {rep.pass_rate:6.1%}  ({sum(rep.scenarios.values())}/{len(rep.scenarios)} scenarios)",
        f"  grounded rate  {rep.grounded_rate:6.1%}  ({sum(r.grounded for r in rep.rows)}/{len(rep.rows)} turns)",
        f"  latency/turn   p50 {d['p50_ms']:.1f} ms   p95 {d['p95_ms']:.1f} ms",
        "  stop reasons (expected → got):",
    ]
    for expected, got in rep.confusion().items():
        cells = ", ".join(f"{g} {n}" for g, n in got.items())
        lines.append(f"    {expected:20} → {cells}")
    return "\n".join(lines)
