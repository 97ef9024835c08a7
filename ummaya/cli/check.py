"""``ummaya check [--root DIR] [--against REF]``: the gates CI runs.

drift (generated/ and llms/ match a fresh build) + coverage (every adapter carries what it must)
+ placeholders (no scaffold TODOs, example URLs or sample fixtures left) + hints (budget, copies,
rank-1 takeovers on the evaluation set: ci/hints.py) + hosts (every URL's
host that resolves here resolves to a public address) + scenarios (when registry/scenarios/ exists:
valid, every adapter covered, every scenario passes when run) + with ``--against``, the breaking-change
gate against a previous lock file or git ref.
"""

from __future__ import annotations

import sys

import click

from ._common import fail, root_option


@click.command()
@root_option
@click.option("--against", "against", metavar="REF", default=None, help="Lock file or git ref to check for breaking changes against.")
def check(root: str | None, against: str | None) -> None:
    """Fail when generated output drifted, an adapter misses coverage, or an interface broke."""
    from ummaya.ci.breaking import breaking_changes, current_interfaces, load_reference
    from ummaya.ci.coverage import coverage_gaps
    from ummaya.ci.drift import drift_gate
    from ummaya.ci.placeholders import placeholder_gaps
    from ummaya.codegen.url_checks import resolution_problems
    from ummaya.ci.scenario_gate import start_scenario_gate
    from ummaya.paths import ProjectNotFound, require_root

    try:
        project = require_root(root)
    except ProjectNotFound as exc:
        fail(str(exc), 2)

    failed: list[str] = []
    plan, d = drift_gate(project)
    for note in plan.notes:
        click.echo(f"note: {note}", err=True)
    if not plan.ok:
        failed.append("build")
        click.echo(f"build: {len(plan.problems)} problem(s)", err=True)
        for p in plan.problems:
            click.echo(f"  {p}", err=True)
    elif d:
        failed.append("drift")
        click.echo("drift: generated/ or llms/ differ from what `ummaya build` would write (run it and commit):", err=True)
        click.echo("  " + d.summary().replace("\n", "\n  "), err=True)

    if plan.registry is not None:
        # The scenarios run longest (worker processes, ci/scenario_gate.py) and the host lookups
        # wait on DNS: both start now, while the gates below run, and are collected in order.
        scenarios_done = start_scenario_gate(project, plan.registry)
        hosts_done = _in_thread(resolution_problems, plan.registry)
        gaps = coverage_gaps(plan.registry, plan.parsed if plan.parser_available else None)
        if gaps:
            failed.append("coverage")
            click.echo(f"coverage: {len(gaps)} gap(s)", err=True)
            for p in gaps:
                click.echo(f"  {p}", err=True)
        left = placeholder_gaps(plan.registry)
        if left:
            failed.append("placeholders")
            click.echo(f"placeholders: {len(left)} scaffold placeholder(s) to fill", err=True)
            for p in left:
                click.echo(f"  {p}", err=True)
        from ummaya.ci.hints import hint_problems, takeovers

        stuffed = hint_problems(plan.registry)
        review: list[str] = []
        if plan.ok:
            reference = None
            if against is not None:
                try:
                    reference = load_reference(project, against)
                except ValueError:
                    reference = None  # reported by the breaking gate below
            taken = takeovers(project, plan.registry, plan.outputs.get("generated/index/documents.json"),
                              reference, plan.outputs.get("generated/registry.lock"))
            # Against the pull request's base a takeover is known to be new: it fails. Without a
            # base it is printed for review (ci/hints.py).
            (stuffed if reference is not None else review).extend(taken)
        if stuffed:
            failed.append("hints")
            click.echo(f"hints: {len(stuffed)} problem(s) (hint budget, copied hints, rank-1 takeovers "
                       "to review)", err=True)
            for p in stuffed:
                click.echo(f"  {p}", err=True)
        if review:
            click.echo(f"hints review: {len(review)} evaluation request(s) taken at rank 1 by an adapter no "
                       "request expects yet (fails with --against <base>; review them)", err=True)
            for p in review:
                click.echo(f"  {p}", err=True)
        resolved = hosts_done()
        if resolved:
            failed.append("hosts")
            click.echo(f"hosts: {len(resolved)} URL host(s) resolve to a non-public address", err=True)
            for p in resolved:
                click.echo(f"  {p}", err=True)
        # Valid files, every adapter covered, and every scenario run exactly as the tests run it
        # (ci/scenario_gate.py): the gate and tests/turn/test_scenarios.py share one comparison.
        missing = scenarios_done()
        if missing:
            failed.append("scenarios")
            click.echo(f"scenarios: {len(missing)} problem(s)", err=True)
            for p in missing:
                click.echo(f"  {p}", err=True)

    if against is not None:
        try:
            old = load_reference(project, against)
        except ValueError as exc:
            fail(f"breaking: {exc}", 2)
        new, problems = current_interfaces(project)
        breaks = breaking_changes(old["adapters"], new)
        if breaks:
            failed.append("breaking")
            click.echo(f"breaking: {len(breaks)} breaking change(s) against {against}", err=True)
            for b in breaks:
                click.echo(f"  {b}", err=True)

    gates = "drift, coverage, placeholders, scenarios" + (f", breaking vs {against}" if against else "")
    if failed:
        click.echo(f"check failed: {', '.join(failed)}", err=True)
        sys.exit(1)
    click.echo(f"check passed ({gates}): release {plan.release_id[:12]}, {plan.adapters} adapters")
    if plan.registry is not None:
        _print_provenance(plan.registry.manifests)


def _in_thread(fn, *args):
    """Run ``fn(*args)`` in a thread of its own; the returned callable waits for its result."""
    import concurrent.futures as cf

    pool = cf.ThreadPoolExecutor(max_workers=1)
    future = pool.submit(fn, *args)
    pool.shutdown(wait=False)

    def result():
        return future.result()

    return result


def _print_provenance(manifests) -> None:
    """Where each adapter's fixtures came from (issue 12): recorded, documented or synthetic."""
    from ummaya.codegen.fixture_provenance import share_text

    rows = [(lm.id, share_text(lm.manifest)) for lm in manifests if lm.manifest.fixtures]
    if not rows:
        return
    click.echo("fixture provenance (recorded / documented / synthetic, per adapter):")
    width = max(len(i) for i, _ in rows)
    for adapter_id, text in sorted(rows):
        click.echo(f"  {adapter_id:<{width}}  {text}")
