"""``ummaya release publish | evaluate | list | promote ALIAS RELEASE_ID``: releases, gated.

``publish`` stores the current build (``generated/``: catalog.json, the retrieval index's
documents.json, fixture bodies, registry.lock) as one deterministic bundle in the database, with
its retrieval policy (``--policy FILE``, runtime/retrieve/policy.py), then runs the evaluation
suites against that stored bundle and keeps their figures with the release (runtime/suites/).
The release id is the build's lock hash (``dev-<bundle hash>`` for a dev catalog); publishing the
same build again is a no-op, a different build under the same id is refused (releases are
immutable). ``evaluate`` runs the suites again for a stored release (a suite that landed later).

``promote`` points an alias at a release only when the gate holds (evals/promotion.yaml: floors,
tolerance against the release the alias points at now, required suites) and prints the report
naming the figures and cases that changed. ``--force --reason TEXT`` moves it anyway; every move
is recorded with who made it, whether it was forced and why (``release list`` shows them).
Serving resolves aliases on every request, so a promotion takes effect at once on every replica.
"""

from __future__ import annotations

import getpass
import os
from pathlib import Path

import click

from ._common import DatabaseURL, emit_json, fail, open_db

FILTERS = click.Choice(["primitive", "tier", "domain", "agency"])


def _store(db: str | None):  # noqa: ANN202
    return open_db(db)


def _project(root: str | None) -> Path | None:
    from ummaya.paths import find_root

    return Path(root).resolve() if root else find_root()


def _actor(actor: str | None) -> str:
    if actor:
        return actor
    try:
        return os.environ.get("UMMAYA_ACTOR") or getpass.getuser()
    except (KeyError, OSError):
        return "unknown"


@click.group()
def release() -> None:
    """Publish builds as immutable releases, evaluate them, and point aliases at them."""


@release.command()
@click.option("--db", default=None, type=DatabaseURL(), help="Store URL; default: UMMAYA_DATABASE_URL or ~/.ummaya.")
@click.option("--root", type=click.Path(exists=True, file_okay=False), default=None, help="Project folder whose generated/ to publish (and whose evals/ to run).")
@click.option("--policy", "policy_file", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="Retrieval policy file (YAML/JSON); the options below then are not used.")
@click.option("--analyzer", type=click.Choice(["ngram", "kiwi"]), default="ngram", show_default=True, help="Query analysis (ngram: Kiwi-free, fast cold start).")
@click.option("--default-top-k", type=click.IntRange(1, 20), default=5, show_default=True)
@click.option("--max-top-k", type=click.IntRange(1, 50), default=20, show_default=True)
@click.option("--allow-filter", "allowed", type=FILTERS, multiple=True, help="Filters requests may use (repeat; default: all four).")
@click.option("--max-candidates", type=click.IntRange(1, 20), default=5, show_default=True, help="At most this many candidates reach the planner.")
@click.option("--max-tool-tokens", type=click.IntRange(100, 100000), default=4000, show_default=True, help="Token budget of the candidates' tool schemas.")
@click.option("--promote", "promote_to", default=None, metavar="ALIAS", help="Then promote to ALIAS (through the gate).")
@click.option("--evaluate/--no-evaluate", "evaluate_suites", default=True, show_default=True,
              help="Run the evaluation suites (without them the gate refuses a promotion until `release evaluate`).")
@click.option("--json", "as_json", is_flag=True)
def publish(db: str | None, root: str | None, policy_file: Path | None, analyzer: str, default_top_k: int,
            max_top_k: int, allowed: tuple[str, ...], max_candidates: int, max_tool_tokens: int,
            promote_to: str | None, evaluate_suites: bool, as_json: bool) -> None:
    """Publish the current build as an immutable release and evaluate it."""
    from ummaya.paths import generated_dir
    from ummaya.runtime.retrieve.policy import PolicyUnavailable, load_policy
    from ummaya.runtime.serve.releases import RerankBudget, RetrievalPolicy
    from ummaya.runtime.serve.releases import publish as do_publish
    from ummaya.runtime.store import ReleaseConflict
    from ummaya.runtime.suites import SUITES, evaluate_release

    if policy_file is not None:
        try:
            policy = load_policy(policy_file)
        except ValueError as exc:
            fail(f"error [invalid_policy]: {exc}", 2)
    else:
        policy = RetrievalPolicy(analyzer=analyzer, default_top_k=default_top_k, max_top_k=max_top_k,
                                 allowed_filters=list(allowed) or ["primitive", "tier", "domain", "agency"],
                                 rerank=RerankBudget(max_candidates=max_candidates, max_tool_tokens=max_tool_tokens))
    try:
        policy.check_available()
    except PolicyUnavailable as exc:
        fail(f"error [policy_unavailable]: {exc}", 2)
    project = _project(root)
    with _store(db) as store:
        try:
            rel = do_publish(store, generated_dir(root), policy)
        except FileNotFoundError as exc:
            fail(f"error [build_missing]: {exc}", 2)
        except ReleaseConflict as exc:
            fail(f"error [release_conflict]: {exc}", 2)
        evaluations = store.release_evaluations(rel.release_id)
        # Publishing again runs only what has no figures yet (a suite registered since, or one
        # that failed to run): figures already stored for this immutable bundle stand.
        pending = [s for s in SUITES if s not in evaluations or evaluations[s].status != "ok"]
        if evaluate_suites and (not evaluations or pending):
            evaluate_release(store, rel.release_id, project, names=None if not evaluations else pending)
            evaluations = store.release_evaluations(rel.release_id)
        report = None
        if promote_to:
            report = _gated_promote(store, promote_to, rel.release_id, project, None, False, None)
        out = rel.to_dict() | {"aliases": sorted(a for a, r in store.aliases().items() if r == rel.release_id),
                               "evaluations": {s: e.to_dict(cases=False) for s, e in evaluations.items()}}
        if report is not None:
            out["promotion"] = report.as_dict()
    if as_json:
        emit_json(out)
    else:
        click.echo(f"{rel.release_id}  ({out['meta'].get('adapters')} adapters, policy {policy.label} "
                   f"{policy.backend}/{policy.analyzer}, top_k {policy.default_top_k})")
        for s, e in evaluations.items():
            click.echo(f"  {s:<14} {e.status:<8} " + _figures_line(e))
        if report is not None:
            from ummaya.runtime.suites import format_report

            click.echo(format_report(report))
    if report is not None and not report.allowed:
        raise SystemExit(1)


@release.command()
@click.argument("release_id")
@click.option("--db", default=None, type=DatabaseURL())
@click.option("--root", type=click.Path(exists=True, file_okay=False), default=None, help="Project folder whose evals/ to run.")
@click.option("--suite", "suites", multiple=True, help="Only this suite (repeat).")
@click.option("--json", "as_json", is_flag=True)
def evaluate(release_id: str, db: str | None, root: str | None, suites: tuple[str, ...], as_json: bool) -> None:
    """Run the evaluation suites again against a stored release (its own bundle) and keep the figures."""
    from ummaya.runtime.suites import evaluate_release

    with _store(db) as store:
        try:
            outcomes = evaluate_release(store, release_id, _project(root), names=list(suites) or None)
        except LookupError as exc:
            fail(f"error [release_not_found]: {exc}", 2)
        evaluations = store.release_evaluations(release_id)
    if as_json:
        emit_json({"release_id": release_id,
                   "evaluations": {o.suite: evaluations[o.suite].to_dict() for o in outcomes}})
        return
    for o in outcomes:
        click.echo(f"{o.suite:<14} {o.status:<8} " + (_figures_line(evaluations[o.suite]) or o.message))


def _figures_line(e: object) -> str:
    figures = getattr(e, "figures", {}) or {}
    if getattr(e, "status", "") != "ok":
        return (getattr(e, "meta", {}) or {}).get("message", "")
    head = [k for k in ("all.recall_at_1", "holdout.recall_at_1", "all.abstain_f1", "pass_rate",
                        "heldout.pass_rate", "grounded_rate") if k in figures]
    return "  ".join(f"{k} {figures[k]:.3f}" for k in head[:4])


@release.command("list")
@click.option("--db", default=None, type=DatabaseURL())
@click.option("--json", "as_json", is_flag=True)
def list_(db: str | None, as_json: bool) -> None:
    """List releases (oldest first), their figures, the aliases pointing at them and every alias move."""
    with _store(db) as store:
        aliases = store.aliases()
        history = store.alias_history()
        rows = []
        for r in store.list_releases():
            evals = store.release_evaluations(r.release_id)
            rows.append(r.to_dict() | {
                "aliases": sorted(a for a, rid in aliases.items() if rid == r.release_id),
                "evaluations": {s: e.to_dict(cases=False) for s, e in evals.items()},
                "history": [m.to_dict(report=False) for m in history if m.release_id == r.release_id]})
    if as_json:
        emit_json({"releases": rows, "aliases": aliases, "history": [m.to_dict() for m in history]})
        return
    if not rows:
        click.echo("no releases yet — `ummaya release publish`")
    for r in rows:
        click.echo(f"{r['release_id']}  {r['created_at']}  {r['meta'].get('adapters', '?')} adapters"
                   f"  {r['retrieval_policy'].get('name', 'bm25f-compiled')}@{r['retrieval_policy'].get('version', 1)}"
                   f"  {', '.join(r['aliases'])}")
        for s, e in r["evaluations"].items():
            click.echo(f"    {s:<14} {e['status']:<8} " + _figures_line(_Row(e)))
        for m in r["history"]:
            forced = f"  FORCED: {m['reason']}" if m["forced"] else ""
            click.echo(f"    {m['moved_at']}  {m['alias']} ← (was {m['previous_release_id'] or '-'}) by {m['actor']}{forced}")


class _Row:
    def __init__(self, d: dict) -> None:
        self.figures, self.status, self.meta = d.get("figures", {}), d.get("status"), d.get("meta", {})


def _gated_promote(store: object, alias: str, release_id: str, project: Path | None, gates_file: Path | None,
                   force: bool, reason: str | None, actor: str | None = None):  # noqa: ANN202
    from ummaya.runtime.suites import GATE_FILE, gate, load_gates

    path = gates_file or (project / GATE_FILE if project is not None else None)
    try:
        rules = load_gates(path)
    except ValueError as exc:
        fail(f"error [invalid_gates]: {exc}", 2)
    report = gate(store, alias, release_id, rules)
    if report.allowed or force:
        store.promote(alias, release_id, actor=_actor(actor), forced=force and not report.allowed,  # type: ignore[attr-defined]
                      reason=reason if force else None, report=report.as_dict())
    return report


@release.command()
@click.argument("alias")
@click.argument("release_id")
@click.option("--db", default=None, type=DatabaseURL())
@click.option("--root", type=click.Path(exists=True, file_okay=False), default=None, help="Project folder whose evals/promotion.yaml holds the gate.")
@click.option("--gates", "gates_file", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="Gate file (default: evals/promotion.yaml in the project).")
@click.option("--force", is_flag=True, help="Move the alias even though the gate refuses (needs --reason; recorded).")
@click.option("--reason", default=None, help="Why the gate is overridden (recorded in the release history).")
@click.option("--actor", default=None, help="Who promotes (default: UMMAYA_ACTOR, else the login name).")
@click.option("--json", "as_json", is_flag=True)
def promote(alias: str, release_id: str, db: str | None, root: str | None, gates_file: Path | None,
            force: bool, reason: str | None, actor: str | None, as_json: bool) -> None:
    """Point ALIAS at RELEASE_ID when its evaluations hold (exit 1 and a report when they do not)."""
    from ummaya.runtime.suites import format_report

    if force and not (reason or "").strip():
        fail("error [reason_required]: --force needs --reason TEXT (it is recorded with who forced it)", 2)
    with _store(db) as store:
        if store.resolve(release_id) is None or store.resolve(release_id).release_id != release_id:
            if as_json:
                emit_json({"error": {"code": "release_not_found", "message": f"no release {release_id!r}"}})
                raise SystemExit(2) from None
            fail(f"error [release_not_found]: no release {release_id!r}", 2)
        before = store.aliases().get(alias)
        report = _gated_promote(store, alias, release_id, _project(root), gates_file, force, reason, actor)
    moved = report.allowed or force
    if as_json:
        emit_json({"alias": alias, "release_id": release_id, "previous": before, "promoted": moved,
                   "forced": force and not report.allowed, "report": report.as_dict()})
    else:
        click.echo(format_report(report))
        click.echo(f"{alias}: {before or '-'} → {release_id}" + ("" if moved else "  NOT MOVED (--force --reason to override)")
                   + ("  (forced)" if force and not report.allowed else ""))
    if not moved:
        raise SystemExit(1)
