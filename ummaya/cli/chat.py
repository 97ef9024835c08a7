"""``ummaya chat``: an interactive session — streamed answers, tool progress, Live/Mock/Handoff
badges, and consent asked for with the four items the law requires shown."""

from __future__ import annotations

import asyncio
import uuid
from typing import TYPE_CHECKING

import click

from ._common import DatabaseURL, SessionName, fail, make_model_planner, model_options, open_db

if TYPE_CHECKING:  # the runtime is imported when the command runs, not when the CLI starts
    from ummaya.runtime.dialogue.state import Policy

BADGE_STYLE = {"live": "bold green", "mock": "bold yellow", "handoff": "bold cyan"}


@click.command()
@click.option("--mode", type=click.Choice(["auto", "live", "mock"]), default="auto", show_default=True)
@click.option("--planner", type=click.Choice(["offline", "openai"]), default="offline", show_default=True)
@model_options
@click.option("--session", "session_id", default=None, type=SessionName(), help="Resume a local session (default: a new one).")
@click.option("--policy", type=click.Choice(["default", "lookup_only"]), default=None, help="Session policy mode (lookup_only: public look-ups only; never a protected check or submission).")
@click.option("--db", default=None, type=DatabaseURL(), help="Store URL (default: UMMAYA_DATABASE_URL or ~/.ummaya).")
@click.option("--root", type=click.Path(exists=True, file_okay=False), default=None)
def chat(mode: str, planner: str, base_url: str | None, model: str | None, profile: str | None, fallback: str | None,
         timeout_s: float | None, context_tokens: int | None, deadline_s: float | None, session_id: str | None,
         policy: Policy | None, db: str | None, root: str | None) -> None:
    """Talk to UMMAYA; empty line or Ctrl-D to quit."""
    from rich.console import Console
    from rich.prompt import Confirm, Prompt

    from ummaya.paths import generated_dir
    from ummaya.runtime.request_context import RequestError
    from ummaya.runtime.catalog import CatalogError
    from ummaya.runtime.plan.protocol import ProviderError
    from ummaya.runtime.service import TurnService

    console = Console()
    try:
        planner_obj = make_model_planner(planner, base_url, model, profile, fallback, timeout_s, context_tokens)
        service = TurnService.load(generated_dir(root), planner=planner_obj, store=open_db(db))
    except CatalogError as exc:
        fail(f"error [catalog_missing]: {exc}", 2)
    except ProviderError as exc:
        fail(f"error [{exc.code}]: {exc.message}", 2)
    session_id = session_id or f"chat-{uuid.uuid4().hex[:12]}"
    console.print(f"[dim]UMMAYA · session {session_id} · release {service.catalog.release_id[:12]} · planner {planner}"
                  + (f" · policy {policy}" if policy else "") + "[/dim]")
    while True:
        try:
            query = Prompt.ask("[bold]>[/bold]", console=console, default="", show_default=False)
        except (EOFError, KeyboardInterrupt):
            break
        if not query.strip():
            break
        consents: tuple[str, ...] = ()
        while True:
            try:
                stop = asyncio.run(_turn(service, console, query, session_id, mode, consents, policy,
                                         context_tokens, deadline_s))
            except RequestError as exc:
                console.print(f"[red]{exc.code}[/red]: {exc.message}")
                break
            if stop is None or stop[0] != "consent_required":
                break
            adapter_id = stop[1]
            if adapter_id and Confirm.ask("위 내용에 동의하시겠습니까? / Do you consent?", console=console, default=False):
                consents = (adapter_id,)
                continue
            console.print("[dim]동의하지 않아 실행하지 않았습니다. / Not run without consent.[/dim]")
            break


async def _turn(service, console, query: str, session_id: str, mode: str, consents: tuple[str, ...],
                policy: Policy | None = None, context_tokens: int | None = None, deadline_s: float | None = None):
    from ummaya.runtime.turn import TraceOrigin, TurnRequest

    from ._operator import echo_notes, operator_notes

    pending_consent = None
    stop = None
    calls: list[dict] = []
    async for e in service.stream(TurnRequest(query, session_id=session_id, mode=mode, consents=consents, policy=policy,
                                          context_budget_tokens=context_tokens, deadline_s=deadline_s,
                                          origin=TraceOrigin("cli_chat"))):
        d = e.data
        if e.type == "call_started":
            style = BADGE_STYLE.get(d["tier"], "bold")
            console.print(f"[{style}][{d['tier'].upper()}][/{style}] {d['adapter_id']} …", highlight=False)
        elif e.type == "call_finished":
            console.print(f"[dim]  ↳ {d['status']} · {d['latency_ms']:.0f} ms[/dim]", highlight=False)
            calls.append(d)
        elif e.type == "permission" and d["decision"] == "consent_required":
            pending_consent = d["adapter_id"]
        elif e.type == "delta":
            console.print(d["text"], end="", highlight=False, markup=False)
        elif e.type == "stop":
            console.print()
            console.print(f"[dim]stop: {d['stop_reason']} ({d['layer']})[/dim]")
            stop = (d["stop_reason"], pending_consent)
            # The chat asks for consent itself; the other notes are the operator's (stderr).
            reason = d["stop_reason"] if d["stop_reason"] != "consent_required" else "completed"
            echo_notes(operator_notes(service.catalog, calls, reason, mode=mode))
    return stop
