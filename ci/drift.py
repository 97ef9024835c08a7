"""The drift gate: generated/ and llms/ must be exactly what ``ummaya build`` writes today."""

from __future__ import annotations

from pathlib import Path

from ummaya.codegen.builder import Drift, Plan, drift, plan_build


def drift_gate(root: Path, plan: Plan | None = None) -> tuple[Plan, Drift | None]:
    """The plan (with any load/link problems) and the drift, None when the registry does not build."""
    plan = plan or plan_build(root)
    if not plan.ok:
        return plan, None
    return plan, drift(root, plan.outputs)
