"""The evaluation suite interface: a name, and a run against a release → figures + per-case outcomes.

A suite is any object with a ``name`` and a ``run(release) -> SuiteResult``. ``release`` is a
:class:`ReleaseUnderTest`: the release's **own** unpacked bundle (catalog, retrieval index,
fixtures) and retrieval policy, never the checkout's build, plus the project folder the
evaluation sets are read from. What a suite returns:

* ``figures`` — the gated numbers, each in [0, 1] and *higher is better* (rates, recalls, F1);
  the promotion gate compares them with the alias's floors and with the release being replaced;
* ``cases`` — case id → passed, so a refusal can name the cases that changed;
* ``info`` — shown with the figures, never gated (latency, counts);
* ``floors`` — the suite's own minimums (used when the alias declares none for a figure);
* ``eval_set`` — the sha256 of the evaluation set it ran, so two releases' figures are known to
  come from the same set.

Suites are registered by name in :data:`SUITES` as ``"module:attribute"`` (imported only when
run). :data:`EXPECTED` lists every suite a release is meant to have; one that is expected but not
registered yet, or whose evaluation set is not in the project, is reported ``missing`` — never
counted as passed.
"""

from __future__ import annotations

import hashlib
import importlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

# Every suite a release should carry, in report order. A name here without a registration below
# is "missing" until its module lands.
EXPECTED: tuple[str, ...] = ("retrieval", "turns", "conversations", "arguments", "citizen")

# name -> "module:attribute" (an object with ``name`` and ``run``). To plug a suite in, add a line.
SUITES: dict[str, str] = {
    "retrieval": "ummaya.runtime.suites.builtin_suites:RETRIEVAL",
    "turns": "ummaya.runtime.suites.builtin_suites:TURNS",
    "conversations": "ummaya.runtime.suites.builtin_suites:CONVERSATIONS",
}


class SuiteMissing(Exception):
    """The suite cannot run here (not registered yet, or its evaluation set is absent)."""


@dataclass(frozen=True)
class ReleaseUnderTest:
    release_id: str
    folder: Path  # the unpacked release bundle: catalog.json, index/documents.json, fixtures/
    policy: Any  # runtime.retrieve.policy.RetrievalPolicy
    project: Path | None  # where evals/ and registry/scenarios/ are read from

    def retriever(self) -> Any:
        """The release's retriever, as its policy describes it."""
        return self.policy.retriever(self.folder)

    def engine(self, store: Any) -> Any:
        """A turn engine over the release's catalog, retriever and fixtures (offline planner)."""
        from ummaya.runtime.assemble import build_engine

        return build_engine(self.folder, store=store, retriever=self.retriever())

    def eval_file(self, relative: str) -> Path:
        """A file or folder of the project's evaluation sets; SuiteMissing when it is absent."""
        if self.project is None:
            raise SuiteMissing(f"no project folder here to read {relative} from")
        path = self.project / relative
        if not path.exists():
            raise SuiteMissing(f"{path}: no evaluation set")
        return path


@dataclass
class SuiteResult:
    figures: dict[str, float]
    cases: dict[str, bool]
    info: dict[str, Any] = field(default_factory=dict)
    floors: dict[str, float] = field(default_factory=dict)
    eval_set: str | None = None


@runtime_checkable
class Suite(Protocol):
    name: str

    def run(self, release: ReleaseUnderTest) -> SuiteResult: ...


@dataclass
class SuiteOutcome:
    """A suite's run as stored with the release: ok (figures), missing, or error (message)."""

    suite: str
    status: str  # ok | missing | error
    result: SuiteResult | None = None
    message: str = ""

    def meta(self) -> dict[str, Any]:
        r = self.result
        out: dict[str, Any] = {"message": self.message} if self.message else {}
        if r is not None:
            out |= {"info": r.info, "floors": r.floors, "eval_set": r.eval_set}
        return out


def sha256_of(paths: Iterable[Path]) -> str:
    """One digest over evaluation-set files (names and bytes, in name order)."""
    h = hashlib.sha256()
    for p in sorted(paths, key=lambda p: p.as_posix()):
        h.update(p.name.encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def load_suite(name: str, registry: dict[str, str] | None = None) -> Suite:
    target = (registry if registry is not None else SUITES).get(name)
    if target is None:
        raise SuiteMissing(f"no suite {name!r} is registered yet")
    module, _, attr = target.partition(":")
    try:
        obj = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as exc:
        raise SuiteMissing(f"suite {name!r} ({target}) cannot be loaded: {exc}") from None
    if not isinstance(obj, Suite):
        raise SuiteMissing(f"suite {name!r} ({target}) has no name/run")
    return obj


def run_suites(release: ReleaseUnderTest, names: Iterable[str] | None = None,
               registry: dict[str, str] | None = None) -> list[SuiteOutcome]:
    """Run the named suites (default: every expected and every registered one) against a release.
    A suite that crashes is an ``error`` (its message kept), never a pass."""
    reg = registry if registry is not None else SUITES
    chosen = list(names) if names is not None else list(dict.fromkeys([*EXPECTED, *reg]))
    out = []
    for name in chosen:
        try:
            suite = load_suite(name, reg)
            out.append(SuiteOutcome(name, "ok", suite.run(release)))
        except SuiteMissing as exc:
            out.append(SuiteOutcome(name, "missing", message=str(exc)))
        except Exception as exc:  # noqa: BLE001 - a broken suite is recorded, not a crashed publish
            out.append(SuiteOutcome(name, "error", message=f"{type(exc).__name__}: {exc}"))
    return out
