"""``ummaya trace list | show ID`` and ``ummaya traces purge``: what each turn left behind."""

from __future__ import annotations

import json

import click

from ._common import RecordId, SessionName, emit_json, fail, open_db
from .consent import db_option


@click.group()
def trace() -> None:
    """Stored traces (redacted per the retention policy; every one has an expiry)."""


@trace.command("list")
@click.option("--limit", type=click.IntRange(1, 10_000), default=20, show_default=True)
@click.option("--session", "session_id", default=None, type=SessionName(), help="Only this session's traces.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object: {\"traces\": [...]} (no events).")
@db_option
def list_cmd(limit: int, session_id: str | None, as_json: bool, db: str | None) -> None:
    """Newest first."""
    with open_db(db) as store:
        traces = store.list_traces(limit=limit, session_id=session_id)
    if as_json:
        emit_json({"traces": [t.to_dict(events=False) for t in traces]})
        return
    if not traces:
        click.echo("no traces")
        return
    for t in traces:
        d = t.to_dict(events=False)
        request = (t.request_text or "").replace("\n", " ")
        if len(request) > 40:
            request = request[:39] + "…"
        click.echo(f"{t.trace_id}  {d['created_at']}  {t.state:<10} {t.stop_reason or '-':<18} "
                   f"expires {d['expires_at']}  {request}")


@trace.command("show")
@click.argument("trace_id", type=RecordId())
@click.option("--json", "as_json", is_flag=True, help="The whole stored trace, events included.")
@db_option
def show(trace_id: str, as_json: bool, db: str | None) -> None:
    """One trace with its state timeline, calls and events."""
    with open_db(db) as store:
        t = store.get_trace(trace_id)
    if t is None:
        if as_json:
            emit_json({"error": {"code": "trace_not_found", "message": f"no trace {trace_id}"}})
            raise SystemExit(1)
        fail(f"error [trace_not_found]: no trace {trace_id}", 1)
    d = t.to_dict()
    if as_json:
        emit_json(d)
        return
    for key in ("trace_id", "created_at", "expires_at", "release_id", "release_alias", "session_id",
                "state", "stop_reason", "text_policy"):
        click.echo(f"{key:<14} {d[key] if d[key] is not None else '-'}")
    click.echo(f"{'timings':<14} {json.dumps(t.timings, ensure_ascii=False)}")
    click.echo(f"{'states':<14} " + " → ".join(f"{s['state']}@{s.get('at', '?')}" for s in t.states))
    click.echo(f"{'request':<14} {t.request_text if t.request_text is not None else '(not kept)'}")
    click.echo(f"{'answer':<14} {t.answer_text if t.answer_text is not None else '(not kept)'}")
    if t.calls:
        click.echo("calls:")
        for c in t.calls:
            click.echo("  " + " ".join(f"{k}={c[k]}" for k in ("adapter_id", "primitive", "tier", "status")
                                       if k in c))
    if t.events:
        click.echo("events:")
        for e in t.events:
            click.echo(f"  #{e['seq']:<3} {e['t_ms']:>9.1f} ms  {e['type']:<14} {e['stage']:<9} "
                       + json.dumps(e["data"], ensure_ascii=False)[:160])


@click.group()
def traces() -> None:
    """Trace housekeeping."""


@traces.command("purge")
@click.option("--json", "as_json", is_flag=True)
@db_option
def purge(as_json: bool, db: str | None) -> None:
    """Delete every trace whose expires_at has passed (with its events)."""
    with open_db(db) as store:
        n = store.purge_expired()
    if as_json:
        emit_json({"purged": n})
    else:
        click.echo(f"purged {n} expired trace(s)")
