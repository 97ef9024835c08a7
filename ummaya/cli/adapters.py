"""``ummaya adapters [--json]``: what the catalog can do."""

from __future__ import annotations

import click

from ._common import emit_json, fail, root_option


def _rows(root: str | None) -> list[dict]:
    from ummaya.paths import find_root, generated_dir
    from ummaya.runtime.catalog import Catalog, CatalogError

    try:
        catalog = Catalog.load(generated_dir(root))
        manifests = [catalog.adapters[i] for i in catalog.ids]
    except CatalogError:
        # Not built yet: list what the registry declares rather than nothing.
        from pathlib import Path

        from ummaya.codegen.loader import load_registry

        project = Path(root) if root else find_root()
        if project is None:
            raise
        registry, _ = load_registry(project)
        manifests = [lm.manifest for lm in registry.manifests]
    return [
        {"adapter_id": m.id, "primitive": m.primitive, "tier": m.tier, "agency": m.agency.code, "title": {"ko": m.title.ko, "en": m.title.en}}
        for m in manifests
    ]


@click.command()
@root_option
@click.option("--json", "as_json", is_flag=True, help="One JSON object: {\"adapters\": [...]}.")
def adapters(root: str | None, as_json: bool) -> None:
    """List the catalog: adapter id, primitive, tier and agency."""
    from ummaya.runtime.catalog import CatalogError

    try:
        rows = _rows(root)
    except CatalogError as exc:
        fail(str(exc), 2)
    if as_json:
        emit_json({"adapters": rows})
        return
    width = max((len(r["adapter_id"]) for r in rows), default=10)
    click.echo(f"{'adapter_id':<{width}}  {'primitive':<9}  {'tier':<7}  agency  title")
    for r in rows:
        click.echo(f"{r['adapter_id']:<{width}}  {r['primitive']:<9}  {r['tier']:<7}  {r['agency']:<6}  {r['title']['ko']} / {r['title']['en']}")
    click.echo(f"{len(rows)} adapters")
