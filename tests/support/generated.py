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


def cached_build() -> Path:
    """The real build of the repository's registry, written once per registry state and shared:
    keyed by the build inputs' hash (the release id), in the temporary folder, so every xdist
    worker and every later session with the same registry reuses one build instead of each
    running ``plan_build`` (a minute on two busy cores). Treat it as read-only; copy to poison."""
    import contextlib
    import os
    import shutil
    import tempfile

    from ummaya.codegen.emit_lock import hash_inputs, release_id

    rid = release_id(hash_inputs(REPO))
    cached = Path(tempfile.gettempdir()) / f"ummaya-serve-gen-{rid[:16]}"
    if not (cached / ".complete").exists():
        tmp = Path(tempfile.mkdtemp(prefix="ummaya-serve-gen-"))
        build_generated(tmp / "g")
        (tmp / "g" / ".complete").write_text(rid)
        with contextlib.suppress(OSError):  # another worker got there first: use its build
            os.replace(tmp / "g", cached)
        shutil.rmtree(tmp, ignore_errors=True)
    return cached
