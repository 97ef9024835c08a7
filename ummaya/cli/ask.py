"""``ummaya ask QUERY``: one turn on the embedded default (offline planner, no network needed)."""

from __future__ import annotations

import asyncio
import sys
from typing import TYPE_CHECKING

import click

from ._common import DatabaseURL, SessionName, emit_json, make_model_planner, model_options, open_db

if TYPE_CHECKING:  # the runtime is imported when the command runs, not when the CLI starts
    from ummaya.runtime.dialogue.state import Policy

MODES = click.Choice(["auto", "live", "mock"])


@click.command()
@click.argument("query")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (trace_id, stop_reason, answer, calls, …).")
@click.option("--mode", type=MODES, default="auto", show_default=True, help="auto: Live where credentials exist, Mock otherwise (labelled).")
@click.option("--session", "session_id", default=None, type=SessionName(), help="A local session name: carry resolved slots (e.g. a location) and consents across turns.")
@click.option("--consent", "consents", multiple=True, metavar="ADAPTER_ID", help="Grant consent for this adapter up front (recorded, hash-chained).")
@click.option("--policy", type=click.Choice(["default", "lookup_only"]), default=None, help="Session policy mode: lookup_only never goes on into a protected check or submission (default: the session's current mode, else default).")
@click.option("--planner", type=click.Choice(["offline", "openai"]), default="offline", show_default=True, help="offline: embedded, deterministic; openai: an OpenAI-compatible server (K-EXAONE by default).")
@model_options
@click.option("--top-k", type=click.IntRange(1, 20), default=5, show_default=True)
@click.option("--db", default=None, type=DatabaseURL(), help="Store URL (sqlite:///path or postgresql://…); default: UMMAYA_DATABASE_URL or ~/.ummaya.")
@click.option("--root", type=click.Path(exists=True, file_okay=False), default=None, help="Project folder whose generated/ to load.")
def ask(query: str, as_json: bool, mode: str, session_id: str | None, consents: tuple[str, ...],
        policy: Policy | None, planner: str, base_url: str | None, model: str | None, profile: str | None,
        fallback: str | None, timeout_s: float | None, context_tokens: int | None, deadline_s: float | None,
        top_k: int, db: str | None, root: str | None) -> None:
    """Ask for a public-service outcome, e.g. ummaya ask "동아대 승학캠퍼스 근처 응급실 알려줘"."""
    from ummaya.paths import generated_dir
    from ummaya.runtime.catalog import CatalogError
    from ummaya.runtime.request_context import RequestError
    from ummaya.runtime.plan.protocol import ProviderError
    from ummaya.runtime.service import TurnService
    from ummaya.runtime.turn import TraceOrigin, TurnRequest

    if query == "-":
        query = sys.stdin.read()
    try:
        planner_obj = make_model_planner(planner, base_url, model, profile, fallback, timeout_s, context_tokens)
        service = TurnService.load(generated_dir(root), planner=planner_obj, store=open_db(db))
        unknown = [c for c in consents if c not in service.catalog.adapters]
        if unknown:
            raise click.BadParameter(f"unknown adapter id(s): {', '.join(unknown)}", param_hint="--consent")
        result = asyncio.run(service.answer(TurnRequest(query, session_id=session_id, mode=mode, consents=consents, top_k=top_k,
                                                    policy=policy, context_budget_tokens=context_tokens, deadline_s=deadline_s,
                                                    origin=TraceOrigin("cli_ask"))))
    except RequestError as exc:
        if as_json:
            emit_json({"error": {"code": exc.code, "message": exc.message}})
        else:
            click.echo(f"error [{exc.code}]: {exc.message}", err=True)
        raise SystemExit(2) from exc
    except CatalogError as exc:
        click.echo(f"error [catalog_missing]: {exc}", err=True)
        raise SystemExit(2) from exc
    except ProviderError as exc:
        if as_json:
            emit_json({"error": {"code": exc.code, "message": exc.message}})
        else:
            click.echo(f"error [{exc.code}]: {exc.message}", err=True)
        raise SystemExit(3) from exc
    from ._operator import echo_notes, operator_notes

    notes = operator_notes(service.catalog, result.calls, result.stop_reason, mode=mode, error=result.error)
    if as_json:  # a program reads this: the notes are for a person at a terminal
        emit_json(result.to_json())
        return
    click.echo(result.answer)
    click.echo("")
    chain = " → ".join(f"{c['adapter_id']} [{c['tier']}: {c['status']}]" for c in result.calls) or "-"
    grounded = "grounded" if result.grounded else f"not grounded: {len(result.removed_claims)} claim(s) removed"
    click.secho(f"stop: {result.stop_reason} ({result.layer}) · {grounded} · calls: {chain} · trace: {result.trace_id}", dim=True)
    echo_notes(notes)
