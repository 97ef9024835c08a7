"""The promotion gate: a release's figures against the alias's floors and the release it replaces.

``evaluate_release`` unpacks a stored release into a temporary folder, runs the suites against
that bundle (its own catalog, index, fixtures and policy) and stores each suite's figures and
cases with the release. ``gate`` decides whether an alias may move to it:

* a figure below the alias's **floor** (or, where the alias declares none, the suite's own) is
  refused;
* a figure lower than the same figure of the release the alias points at now by more than the
  declared **tolerance** is refused;
* a **required** suite the release lacks (missing or error) is refused, and so is any suite (or
  figure) the current release has and this one does not: an unmeasured suite is not a pass;
* a suite that is expected but neither release has is reported ``missing``.

The report names every figure compared and the cases that changed (passing before, failing now,
and the other way round). The gate file (``evals/promotion.yaml``) declares per alias::

    format: 1
    aliases:
      production:
        require: [retrieval, turns, conversations]
        floors: {"retrieval.holdout.recall_at_1": 0.89}
        tolerance: {"retrieval.*": 0.01, "*": 0.0}

Floors and tolerances are matched by the first pattern (fnmatch, in file order) that fits
``suite.figure``; an alias not in the file gets ``default``.
"""

from __future__ import annotations

import fnmatch
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .suite import EXPECTED, ReleaseUnderTest, SuiteOutcome, run_suites

GATE_FILE = "evals/promotion.yaml"
MAX_CASES_LISTED = 50


class AliasGate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    require: list[str] = Field(default_factory=lambda: ["retrieval", "turns", "conversations"])
    floors: dict[str, float] = Field(default_factory=dict)
    tolerance: dict[str, float] = Field(default_factory=lambda: {"*": 0.0})

    def floor(self, key: str, suite_floors: dict[str, float]) -> float | None:
        for pattern, v in self.floors.items():
            if fnmatch.fnmatchcase(key, pattern):
                return v
        return suite_floors.get(key.split(".", 1)[1])

    def tolerance_for(self, key: str) -> float:
        for pattern, v in self.tolerance.items():
            if fnmatch.fnmatchcase(key, pattern):
                return v
        return 0.0


class GateFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    format: Literal[1] = 1
    default: AliasGate = Field(default_factory=AliasGate)
    aliases: dict[str, AliasGate] = Field(default_factory=dict)

    def for_alias(self, alias: str) -> AliasGate:
        return self.aliases.get(alias, self.default)


def load_gates(path: Path | None) -> GateFile:
    """The gate file; the built-in default (three suites required, the suites' own floors, no
    tolerance) when there is none."""
    if path is None or not Path(path).is_file():
        return GateFile()
    try:
        raw = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
        return GateFile.model_validate(raw)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise ValueError(f"{path}:{mark.line + 1 if mark else '?'}: not valid YAML") from None
    except ValidationError as exc:
        first = exc.errors()[0]
        raise ValueError(f"{path}: {'.'.join(map(str, first['loc']))}: {first['msg']}") from None


# -- evaluating a stored release ------------------------------------------------------------------

def evaluate_release(store: Any, release_id: str, project: Path | None, *,
                     names: list[str] | None = None, registry: dict[str, str] | None = None) -> list[SuiteOutcome]:
    """Run the suites against the stored release's own bundle and store the figures with it."""
    from ummaya.runtime.retrieve.policy import RetrievalPolicy
    from ummaya.runtime.serve.releases import unpack_bundle

    release = store.resolve(release_id)
    if release is None or release.release_id != release_id:
        raise LookupError(f"no release {release_id!r}")
    blob = store.release_catalog(release_id)
    if blob is None:
        raise LookupError(f"release {release_id} has no stored bundle")
    policy = RetrievalPolicy.model_validate(release.retrieval_policy or {})
    with tempfile.TemporaryDirectory(prefix="ummaya-release-eval-") as tmp:
        folder = unpack_bundle(blob, Path(tmp))
        outcomes = run_suites(ReleaseUnderTest(release_id, folder, policy, project), names, registry)
    for o in outcomes:
        r = o.result
        store.add_release_evaluation(release_id, o.suite, status=o.status,
                                     figures=r.figures if r else {}, cases=r.cases if r else {},
                                     meta=o.meta())
    return outcomes


# -- the gate ---------------------------------------------------------------------------------------

@dataclass
class GateReport:
    alias: str
    release_id: str
    previous_release_id: str | None
    refusals: list[str] = field(default_factory=list)
    figures: list[dict[str, Any]] = field(default_factory=list)
    suites: dict[str, str] = field(default_factory=dict)  # suite -> ok | missing | error | not evaluated
    changed_cases: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def allowed(self) -> bool:
        return not self.refusals

    def as_dict(self) -> dict[str, Any]:
        return {"alias": self.alias, "release_id": self.release_id,
                "previous_release_id": self.previous_release_id, "allowed": self.allowed,
                "refusals": self.refusals, "suites": self.suites, "figures": self.figures,
                "changed_cases": self.changed_cases, "notes": self.notes}


def gate(store: Any, alias: str, release_id: str, gates: GateFile) -> GateReport:
    """May ``alias`` move to ``release_id``? (Nothing is moved here.)"""
    rules = gates.for_alias(alias)
    previous = store.aliases().get(alias)
    rep = GateReport(alias, release_id, previous)
    cand = store.release_evaluations(release_id)
    cur = store.release_evaluations(previous) if previous and previous != release_id else {}
    for suite in dict.fromkeys([*EXPECTED, *rules.require, *cand, *cur]):
        c, p = cand.get(suite), cur.get(suite)
        status = c.status if c is not None else "not evaluated"
        rep.suites[suite] = status
        if status != "ok":
            why = (c.meta.get("message") if c is not None else "") or status
            if suite in rules.require:
                rep.refusals.append(f"{suite}: required, but {status} ({why})")
            elif p is not None and p.status == "ok":
                rep.refusals.append(f"{suite}: {previous} has figures, {release_id} has none ({status}: {why})")
            else:
                rep.notes.append(f"{suite}: {status} — not evaluated, not counted as passed")
            continue
        floors = c.meta.get("floors") or {}
        prev = p if p is not None and p.status == "ok" else None
        if prev is not None and prev.meta.get("eval_set") != c.meta.get("eval_set"):
            rep.notes.append(f"{suite}: the two releases were evaluated on different evaluation sets")
        for name, value in sorted(c.figures.items()):
            key = f"{suite}.{name}"
            row: dict[str, Any] = {"figure": key, "value": value}
            floor = rules.floor(key, floors)
            if floor is not None:
                row["floor"] = floor
                if value < floor:
                    rep.refusals.append(f"{key} {value:.4f} is below the floor {floor}")
            if prev is not None and name in prev.figures:
                before, tol = prev.figures[name], rules.tolerance_for(key)
                row |= {"previous": before, "delta": round(value - before, 4), "tolerance": tol}
                if value < before - tol - 1e-9:
                    rep.refusals.append(f"{key} {before:.4f} → {value:.4f} ({value - before:+.4f}, "
                                        f"tolerance {tol})")
            rep.figures.append(row)
        if prev is not None:
            for name in sorted(set(prev.figures) - set(c.figures)):
                rep.refusals.append(f"{suite}.{name}: {previous} has it ({prev.figures[name]:.4f}), "
                                    f"{release_id} does not")
            worse = sorted(k for k, ok in c.cases.items() if not ok and prev.cases.get(k) is True)
            better = sorted(k for k, ok in c.cases.items() if ok and prev.cases.get(k) is False)
            if worse or better:
                rep.changed_cases[suite] = {"now_failing": worse[:MAX_CASES_LISTED],
                                            "now_passing": better[:MAX_CASES_LISTED]}
                if len(worse) > MAX_CASES_LISTED or len(better) > MAX_CASES_LISTED:
                    rep.notes.append(f"{suite}: {len(worse)} now failing, {len(better)} now passing "
                                     f"(first {MAX_CASES_LISTED} listed)")
    return rep


def format_report(rep: GateReport) -> str:
    lines = [f"{rep.alias}: {rep.previous_release_id or '-'} → {rep.release_id}: "
             + ("allowed" if rep.allowed else "REFUSED")]
    lines += [f"  refused: {r}" for r in rep.refusals]
    lines.append("  suites: " + ", ".join(f"{s} {st}" for s, st in rep.suites.items()))
    for f in rep.figures:
        prev = f" (was {f['previous']:.4f}, {f['delta']:+.4f}, tolerance {f['tolerance']})" if "previous" in f else ""
        floor = f" floor {f['floor']}" if "floor" in f else ""
        lines.append(f"    {f['figure']:<48} {f['value']:.4f}{prev}{floor}")
    for suite, ch in rep.changed_cases.items():
        for c in ch["now_failing"]:
            lines.append(f"  {suite}: now failing: {c}")
        for c in ch["now_passing"]:
            lines.append(f"  {suite}: now passing: {c}")
    lines += [f"  note: {n}" for n in rep.notes]
    return "\n".join(lines)
