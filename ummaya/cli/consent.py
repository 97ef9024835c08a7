"""``ummaya consent list | revoke | verify``: the append-only, hash-chained consent record."""

from __future__ import annotations

import click

from ._common import emit_json, fail

db_option = click.option(
    "--db", default=None, metavar="URL",
    help="Store URL (sqlite:///path or postgresql://…); default: UMMAYA_DATABASE_URL, else "
         "state_dir()/ummaya.sqlite3.",
)


def open_db(db: str | None):
    from ummaya.runtime.store import open_store

    try:
        return open_store(db)
    except Exception as exc:  # unreachable server, bad URL, unreadable file
        fail(f"error [store_unavailable]: {exc}", 2)


def _status(records) -> dict[str, str]:
    """consent_id -> active | revoked."""
    status: dict[str, str] = {}
    for r in records:
        status[r.consent_id] = "revoked" if r.action == "revoke" else status.get(r.consent_id, "active")
    return status


@click.group()
def consent() -> None:
    """Consents given for adapters that need them (purpose, data items, retention, right to refuse)."""


@consent.command("list")
@click.option("--session", "session_id", default=None, help="Only this session ('*' = standing consents).")
@click.option("--all", "show_all", is_flag=True, help="Every record in the chain, revokes included.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object: {\"consents\": [...]}.")
@db_option
def list_cmd(session_id: str | None, show_all: bool, as_json: bool, db: str | None) -> None:
    """List consents, newest last, with whether each is still active."""
    with open_db(db) as store:
        records = store.list_consents(session_id)
    status = _status(records)
    rows = records if show_all else [r for r in records if r.action == "grant"]
    if as_json:
        emit_json({"consents": [{**r.to_dict(), "status": status[r.consent_id]} for r in rows]})
        return
    if not rows:
        click.echo("no consents recorded")
        return
    for r in rows:
        click.echo(f"{r.consent_id}  {r.action:<6} {status[r.consent_id]:<7} "
                   f"session={r.session_id}  adapter={r.adapter_id}  at={r.to_dict()['granted_at']}")
        if r.action == "grant":
            click.echo(f"    목적 purpose: {r.purpose}")
            click.echo(f"    항목 data items: {', '.join(r.data_items)}")
            click.echo(f"    보유 retention: {r.retention}")
            click.echo(f"    거부 right to refuse: {r.refusal}")


@consent.command("revoke")
@click.argument("consent_id", required=False)
@click.option("--adapter", "adapter_id", default=None, help="With --session: revoke this adapter's active consents.")
@click.option("--session", "session_id", default=None, help="With --adapter ('*' = a standing consent).")
@click.option("--json", "as_json", is_flag=True)
@db_option
def revoke(consent_id: str | None, adapter_id: str | None, session_id: str | None, as_json: bool,
           db: str | None) -> None:
    """Revoke CONSENT_ID, or every active consent for --adapter in --session (appends, never edits)."""
    from ummaya.runtime.store import UnknownConsent

    if consent_id is None and (adapter_id is None or session_id is None):
        raise click.UsageError("give a CONSENT_ID, or both --adapter and --session")
    if consent_id is not None and (adapter_id or session_id):
        raise click.UsageError("give a CONSENT_ID or --adapter/--session, not both")
    with open_db(db) as store:
        try:
            out = store.revoke_consent(consent_id, session_id=session_id, adapter_id=adapter_id)
        except UnknownConsent:
            fail(f"error [unknown_consent]: no consent {consent_id}", 1)
    if as_json:
        emit_json({"revoked": [r.to_dict() for r in out]})
        return
    if not out:
        click.echo("nothing to revoke (already revoked, or no active consent)")
    for r in out:
        click.echo(f"revoked {r.consent_id} (session={r.session_id} adapter={r.adapter_id})")


@consent.command("verify")
@click.option("--json", "as_json", is_flag=True)
@db_option
def verify(as_json: bool, db: str | None) -> None:
    """Walk the hash chain; exit 1 and name the first broken record when it was tampered with."""
    with open_db(db) as store:
        report = store.verify()
    if as_json:
        emit_json(report.to_dict())
    elif report.ok:
        click.echo(f"ok: {report.records} consent records, chain intact; head {report.head}")
    else:
        click.echo(f"BROKEN at record seq={report.broken_seq} consent={report.broken_consent_id}: "
                   f"{report.reason} ({report.records} records)", err=True)
    if not report.ok:
        raise SystemExit(1)
