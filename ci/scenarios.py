"""Scenario coverage: every adapter must be exercised by at least one end-to-end scenario.

A scenario file under ``registry/scenarios/*.yaml`` holds one scenario or a list under
``scenarios:``; each is ``{id, request, language?, expect: {calls: [adapter ids in order],
stop_reason, answer_contains: [...]}}``. Until scenario files exist this gate has nothing to say.
"""

from __future__ import annotations

from pathlib import Path

from ummaya.codegen.loader import SCENARIOS_DIR, Located, Problem, load_registry, parse_yaml


def _scenarios(doc: Located) -> list[tuple[tuple, dict]]:
    data = doc.data
    if isinstance(data, dict) and "scenarios" in data:
        items, base = data["scenarios"], ("scenarios",)
    elif isinstance(data, list):
        items, base = data, ()
    else:
        items, base = [data], None
    if not isinstance(items, list):
        return []
    return [((*base, i) if base is not None else (), s) for i, s in enumerate(items) if isinstance(s, dict)]


def scenario_coverage(root: Path, registry=None) -> list[Problem]:
    """Problems for adapters no scenario expects a call to, and for scenarios naming unknown ids."""
    root = Path(root).resolve()
    files = sorted((root / "registry" / SCENARIOS_DIR).glob("*.yaml"))
    if not files:
        return []
    if registry is None:
        registry, _ = load_registry(root)
    known = registry.by_id()
    problems: list[Problem] = []
    covered: set[str] = set()
    for path in files:
        doc, errs = parse_yaml(path, path.relative_to(root).as_posix())
        problems += errs
        if doc is None:
            continue
        for loc, scenario in _scenarios(doc):
            calls = (scenario.get("expect") or {}).get("calls") or []
            if not isinstance(calls, list):
                problems.append(Problem(doc.rel, doc.line_of((*loc, "expect", "calls")), "expect.calls must be a list of adapter ids"))
                continue
            for j, adapter_id in enumerate(calls):
                if adapter_id in known:
                    covered.add(adapter_id)
                else:
                    problems.append(Problem(doc.rel, doc.line_of((*loc, "expect", "calls", j)), f"scenario {scenario.get('id', '?')}: unknown adapter '{adapter_id}'"))
    for adapter_id, lm in sorted(known.items()):
        if adapter_id not in covered:
            problems.append(Problem(lm.source.rel, lm.source.line_of(("id",)), f"{adapter_id}: no scenario in registry/{SCENARIOS_DIR}/ expects a call to this adapter"))
    return sorted(problems)
