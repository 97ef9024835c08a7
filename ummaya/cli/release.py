"""``ummaya release publish | list | promote ALIAS RELEASE_ID``: immutable releases and aliases.

``publish`` stores the current build (``generated/``: catalog.json, the retrieval index's
documents.json, fixture bodies, registry.lock) as one deterministic bundle in the database, with
its retrieval policy; the release id is the build's lock hash (``dev-<bundle hash>`` for a dev
catalog). Publishing the same build again is a no-op; a different build under the same id is
refused (releases are immutable). ``promote`` points an alias at a release; serving resolves
aliases on every request, so a promotion takes effect at once on every replica.
"""

from __future__ import annotations

import click

from ._common import DatabaseURL, emit_json, fail, open_db

FILTERS = click.Choice(["primitive", "tier", "domain", "agency"])


def _store(db: str | None):  # noqa: ANN202
    return open_db(db)


@click.group()
def release() -> None:
    """Publish builds as immutable releases and point aliases at them."""


@release.command()
@click.option("--db", default=None, type=DatabaseURL(), help="Store URL; default: UMMAYA_DATABASE_URL or ~/.ummaya.")
@click.option("--root", type=click.Path(exists=True, file_okay=False), default=None, help="Project folder whose generated/ to publish.")
@click.option("--analyzer", type=click.Choice(["ngram", "kiwi"]), default="ngram", show_default=True, help="Query analysis (ngram: Kiwi-free, fast cold start).")
@click.option("--default-top-k", type=click.IntRange(1, 20), default=5, show_default=True)
@click.option("--max-top-k", type=click.IntRange(1, 50), default=20, show_default=True)
@click.option("--allow-filter", "allowed", type=FILTERS, multiple=True, help="Filters requests may use (repeat; default: all four).")
@click.option("--max-candidates", type=click.IntRange(1, 20), default=5, show_default=True, help="At most this many candidates reach the planner.")
@click.option("--max-tool-tokens", type=click.IntRange(100, 100000), default=4000, show_default=True, help="Token budget of the candidates' tool schemas.")
@click.option("--promote", "promote_to", default=None, metavar="ALIAS", help="Point ALIAS at the release after publishing.")
@click.option("--json", "as_json", is_flag=True)
def publish(db: str | None, root: str | None, analyzer: str, default_top_k: int, max_top_k: int,
            allowed: tuple[str, ...], max_candidates: int, max_tool_tokens: int,
            promote_to: str | None, as_json: bool) -> None:
    """Publish the current build as an immutable release."""
    from ummaya.paths import generated_dir
    from ummaya.runtime.serve.releases import RerankBudget, RetrievalPolicy
    from ummaya.runtime.serve.releases import publish as do_publish
    from ummaya.runtime.store import ReleaseConflict

    policy = RetrievalPolicy(analyzer=analyzer, default_top_k=default_top_k, max_top_k=max_top_k,  # type: ignore[arg-type]
                             allowed_filters=list(allowed) or ["primitive", "tier", "domain", "agency"],
                             rerank=RerankBudget(max_candidates=max_candidates, max_tool_tokens=max_tool_tokens))
    with _store(db) as store:
        try:
            rel = do_publish(store, generated_dir(root), policy)
        except FileNotFoundError as exc:
            fail(f"error [build_missing]: {exc}", 2)
        except ReleaseConflict as exc:
            fail(f"error [release_conflict]: {exc}", 2)
        if promote_to:
            store.promote(promote_to, rel.release_id)
        out = rel.to_dict() | {"aliases": sorted(a for a, r in store.aliases().items() if r == rel.release_id)}
    if as_json:
        emit_json(out)
    else:
        click.echo(f"{rel.release_id}  ({out['meta'].get('adapters')} adapters, policy {policy.analyzer}, "
                   f"top_k {policy.default_top_k}){'  → ' + promote_to if promote_to else ''}")


@release.command("list")
@click.option("--db", default=None, type=DatabaseURL())
@click.option("--json", "as_json", is_flag=True)
def list_(db: str | None, as_json: bool) -> None:
    """List releases (oldest first) and the aliases pointing at them."""
    with _store(db) as store:
        aliases = store.aliases()
        rows = [r.to_dict() | {"aliases": sorted(a for a, rid in aliases.items() if rid == r.release_id)}
                for r in store.list_releases()]
    if as_json:
        emit_json({"releases": rows, "aliases": aliases})
        return
    if not rows:
        click.echo("no releases yet — `ummaya release publish`")
    for r in rows:
        click.echo(f"{r['release_id']}  {r['created_at']}  {r['meta'].get('adapters', '?')} adapters"
                   f"  {', '.join(r['aliases'])}")


@release.command()
@click.argument("alias")
@click.argument("release_id")
@click.option("--db", default=None, type=DatabaseURL())
@click.option("--json", "as_json", is_flag=True)
def promote(alias: str, release_id: str, db: str | None, as_json: bool) -> None:
    """Point ALIAS at RELEASE_ID (the release must exist)."""
    from ummaya.runtime.store import UnknownRelease

    with _store(db) as store:
        before = store.aliases().get(alias)
        try:
            store.promote(alias, release_id)
        except UnknownRelease:
            if as_json:
                emit_json({"error": {"code": "release_not_found", "message": f"no release {release_id!r}"}})
                raise SystemExit(2) from None
            fail(f"error [release_not_found]: no release {release_id!r}", 2)
    if as_json:
        emit_json({"alias": alias, "release_id": release_id, "previous": before})
    else:
        click.echo(f"{alias}: {before or '-'} → {release_id}")
