"""``ummaya build [--check] [--root DIR]``: compile registry/ into generated/ and llms/."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click

from ._common import fail, root_option


def _progress(start: float):
    def say(message: str) -> None:
        click.echo(f"[{time.perf_counter() - start:5.1f}s] {message}", err=True)

    return say


def report_problems(plan) -> None:
    for note in plan.notes:
        click.echo(f"note: {note}", err=True)
    for problem in plan.problems:
        click.echo(str(problem), err=True)


@click.command()
@root_option
@click.option("--check", "check_only", is_flag=True, help="Build in memory and fail if generated/ or llms/ differ.")
@click.option("--force", is_flag=True, help="Rebuild even when the lock says nothing changed.")
@click.option("--quiet", "-q", is_flag=True, help="No progress lines.")
def build(root: str | None, check_only: bool, force: bool, quiet: bool) -> None:
    """Compile registry/ into generated/ and llms/ (incremental; a no-op when nothing changed)."""
    from ummaya.paths import ProjectNotFound, require_root

    try:
        project = require_root(root)
    except ProjectNotFound as exc:
        fail(str(exc), 2)
    start = time.perf_counter()
    say = None if quiet else _progress(start)
    from ummaya.codegen import builder as b

    if check_only:
        sys.exit(run_drift_check(project, say))
    result = b.build(project, progress=say, force=force)
    if result.noop:
        click.echo(f"up to date: release {result.release_id[:12]} ({result.seconds:.2f}s)")
        return
    plan = result.plan
    report_problems(plan)
    if not plan.ok:
        fail(f"build failed: {len(plan.problems)} problem(s); generated/ and llms/ left untouched", 1)
    click.echo(f"built release {plan.release_id[:12]}: {plan.adapters} adapters, {len(plan.outputs)} files ({result.seconds:.2f}s)")


def run_drift_check(project: Path, say=None) -> int:
    """0 when generated/ and llms/ are exactly what a build would write; prints what drifted."""
    from ummaya.codegen import builder as b

    plan = b.plan_build(project, progress=say)
    report_problems(plan)
    if not plan.ok:
        click.echo(f"drift check: the registry does not build ({len(plan.problems)} problem(s))", err=True)
        return 1
    d = b.drift(project, plan.outputs)
    if d:
        click.echo("drift: generated/ or llms/ differ from what `ummaya build` would write:", err=True)
        click.echo(d.summary(), err=True)
        click.echo("run `ummaya build` and commit the result", err=True)
        return 1
    click.echo(f"no drift: release {plan.release_id[:12]}, {len(plan.outputs)} files match")
    return 0
