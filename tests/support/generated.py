"""A ``generated/`` folder built from the repository's registry by the real build (``plan_build``),
for tests that need one of their own (a release to publish, a copy to poison)."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def build_generated(out: Path) -> str:
    """Write the build's ``generated/`` outputs under ``out``; returns the release id."""
    from ummaya.codegen.builder import plan_build

    plan = plan_build(REPO)
    assert plan.ok, "\n".join(map(str, plan.problems))
    for rel, data in plan.outputs.items():
        if rel.startswith("generated/"):
            path = out / rel.removeprefix("generated/")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
    return plan.release_id
