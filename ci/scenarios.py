"""Scenario gate: every scenario file is valid, and every adapter is exercised by a scenario.

The schema is ``runtime.scenarios`` (the one the tests run): unknown keys, a stop reason outside
the closed list, an adapter id the registry does not hold, a scenario with neither ``request`` +
``expect`` nor ``turns`` — each is a ``path:line`` problem. Then every adapter id must appear in
some turn's ``expect.calls``. Until scenario files exist this gate has nothing to say.
"""

from __future__ import annotations

from pathlib import Path

from ummaya.codegen.loader import SCENARIOS_DIR, Problem, load_registry


def scenario_coverage(root: Path, registry=None) -> list[Problem]:
    """Problems in the scenario files, and adapters no scenario expects a call to."""
    from ummaya.runtime.scenarios import validate_scenarios

    root = Path(root).resolve()
    if not any((root / "registry" / SCENARIOS_DIR).glob("*.yaml")):
        return []
    if registry is None:
        registry, _ = load_registry(root)
    known = registry.by_id()
    scenarios, problems = validate_scenarios(root, set(known))
    covered = {a for _, sc in scenarios for a in sc.calls}
    if problems:
        # An invalid file covers nothing we can trust; listing every adapter as uncovered too
        # would bury the real error.
        return sorted(problems)
    for adapter_id, lm in sorted(known.items()):
        if adapter_id not in covered:
            problems.append(Problem(lm.source.rel, lm.source.line_of(("id",)), f"{adapter_id}: no scenario in registry/{SCENARIOS_DIR}/ expects a call to this adapter"))
    return sorted(problems)
