"""Scenario gate: every scenario file is valid, every adapter is exercised by a scenario, and every
scenario passes.

The schema is ``runtime.scenarios`` (the one the tests run): unknown keys, a stop reason outside
the closed list, an adapter id the registry does not hold, a scenario with neither ``request`` +
``expect`` nor ``turns`` — each is a ``path:line`` problem. Then every adapter id must appear in
some turn's ``expect.calls``. Then every scenario runs exactly as tests/turn/test_scenarios.py runs
it — ``runtime.scenarios.scenario_engine`` and ``run_scenario``, whose ``check`` is the strict
comparison — so the gate and the tests cannot disagree about a scenario. Until scenario files
exist this gate has nothing to say.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import Any

from ummaya.codegen.loader import SCENARIOS_DIR, Problem, load_registry


def scenario_gate(root: Path, registry: Any = None, generated: Path | None = None) -> list[Problem]:
    """``ummaya check``'s scenario step: invalid files, adapters no scenario calls, then every
    scenario that fails when run on ``generated`` (default: the project's generated/)."""
    root = Path(root).resolve()
    scenarios, invalid, uncovered = _read(root, registry)
    if invalid:
        return invalid  # nothing in an invalid file can be run and trusted
    return sorted(uncovered + scenario_failures(root, scenarios, generated))


def scenario_coverage(root: Path, registry: Any = None) -> list[Problem]:
    """Problems in the scenario files, and adapters no scenario expects a call to."""
    _, invalid, uncovered = _read(Path(root).resolve(), registry)
    return invalid or uncovered


def _read(root: Path, registry: Any) -> tuple[list[tuple[Path, Any]], list[Problem], list[Problem]]:
    """(valid scenarios, problems in the files, adapters no scenario expects a call to)."""
    from ummaya.runtime.scenarios import validate_scenarios

    if not any((root / "registry" / SCENARIOS_DIR).glob("*.yaml")):
        return [], [], []
    if registry is None:
        registry, _ = load_registry(root)
    known = registry.by_id()
    scenarios, problems = validate_scenarios(root, set(known))
    if problems:
        # An invalid file covers nothing we can trust; listing every adapter as uncovered too
        # would bury the real error.
        return scenarios, sorted(problems), []
    covered = {a for _, sc in scenarios for a in sc.calls}
    uncovered = [Problem(lm.source.rel, lm.source.line_of(("id",)),
                         f"{adapter_id}: no scenario in registry/{SCENARIOS_DIR}/ expects a call to this adapter")
                 for adapter_id, lm in sorted(known.items()) if adapter_id not in covered]
    return scenarios, [], sorted(uncovered)


def scenario_failures(root: Path, scenarios: list[tuple[Path, Any]], generated: Path | None = None) -> list[Problem]:
    """Every scenario that fails when run, at the line of its id: each problem is one of
    ``runtime.scenarios.check``'s, word for word what the failing test prints."""
    from ummaya.runtime.catalog import CatalogError
    from ummaya.runtime.scenarios import run_scenario, scenario_engine
    from ummaya.runtime.store import open_store

    if not scenarios:
        return []
    generated = Path(generated) if generated is not None else root / "generated"
    problems: list[Problem] = []
    with tempfile.TemporaryDirectory(prefix="ummaya-check-") as tmp:
        store = open_store(f"sqlite:///{Path(tmp) / 'scenarios.sqlite3'}")
        try:
            try:
                engine = scenario_engine(generated, store=store)
            except CatalogError as exc:
                return [Problem("generated/catalog.json", 1, f"cannot run the scenarios: {exc}")]

            async def run_all() -> list[Any]:
                return [await run_scenario(engine, sc, session_prefix="check") for _, sc in scenarios]

            outcomes = asyncio.run(run_all())
        finally:
            store.close()
    for (path, sc), outcome in zip(scenarios, outcomes, strict=True):
        rel = path.relative_to(root).as_posix()
        problems += [Problem(rel, _line_of_id(path, sc.id), f"{sc.id}: {p}") for p in outcome.problems]
    return problems


def _line_of_id(path: Path, scenario_id: str) -> int:
    """The line of ``id: <scenario_id>`` (ids are unique across the files: validate_scenarios)."""
    for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        key, _, value = text.strip().removeprefix("- ").partition(":")
        if key.strip() == "id" and value.strip().strip("'\"") == scenario_id:
            return number
    return 1
