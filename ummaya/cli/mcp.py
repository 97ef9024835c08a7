"""``ummaya mcp``: the registry as an MCP server over stdio (one tool per adapter, plus ``ask``).

An MCP host starts this command and talks JSON-RPC over its stdin/stdout, so nothing but protocol
may reach stdout: logs go to stderr. See README.md for a host configuration.
"""

from __future__ import annotations

import click

MODES = click.Choice(["auto", "live", "mock"])


@click.command()
@click.option("--mode", type=MODES, default="auto", show_default=True,
              help="auto: Live where credentials exist, Mock otherwise (labelled either way).")
@click.option("--session", "session_id", default=None, metavar="ID",
              help="Consent and conversation session for this server (default: a fresh mcp-… id). "
                   "Consents given with `ummaya consent grant ADAPTER --session ID` apply to it.")
@click.option("--planner", type=click.Choice(["offline", "openai"]), default="offline", show_default=True,
              help="Planner for the `ask` tool.")
@click.option("--db", default=None, help="Store URL (sqlite:///path or postgresql://…); default: UMMAYA_DATABASE_URL or ~/.ummaya.")
@click.option("--root", type=click.Path(file_okay=False), default=None, help="Project folder whose generated/ to load.")
def mcp(mode: str, session_id: str | None, planner: str, db: str | None, root: str | None) -> None:
    """Serve MCP over stdio, e.g. in an MCP host's configuration: {"command": "ummaya", "args": ["mcp"]}."""
    import logging
    import sys

    import anyio

    from ummaya.paths import generated_dir
    from ummaya.runtime.catalog import CatalogError
    from ummaya.runtime.mcp import McpBackend, run_stdio
    from ummaya.runtime.mcp.server import new_session_id
    from ummaya.runtime.service import TurnService
    from ummaya.runtime.store import open_store

    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        service = TurnService.load(generated_dir(root), planner=planner, store=open_store(db))
    except CatalogError as exc:
        click.echo(f"error [catalog_missing]: {exc}", err=True)
        raise SystemExit(2) from exc
    session = session_id or new_session_id()
    click.echo(f"ummaya mcp: {len(service.catalog.adapters)} adapter tools + ask · release "
               f"{service.catalog.release_id[:12]} · mode {mode} · session {session}", err=True)
    backend = McpBackend(lambda: service, mode=mode, session_id=session)
    anyio.run(run_stdio, backend)
