"""``ummaya consent list | revoke | verify``: the append-only, hash-chained consent record."""

from __future__ import annotations

import click

from ._common import RecordId, SessionName, db_option_for, emit_json, fail, open_db

db_option = db_option_for()

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
@click.option("--session", "session_id", default=None, type=SessionName(standing=True),
              help="Only this session ('*' = standing consents).")
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
@click.argument("consent_id", required=False, type=RecordId())
@click.option("--adapter", "adapter_id", default=None, help="With --session: revoke this adapter's active consents.")
@click.option("--session", "session_id", default=None, type=SessionName(standing=True),
              help="With --adapter ('*' = a standing consent).")
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


@consent.command("grant")
@click.argument("adapter_id")
@click.option("--session", "session_id", required=True, type=SessionName(standing=True),
              help="The session the consent is for: a local name, a server-issued id, or '*' "
                   "(a standing consent for every session).")
@click.option("--root", type=click.Path(exists=True, file_okay=False), default=None,
              help="Project folder whose generated/ names the adapter and its consent notice.")
@click.option("--json", "as_json", is_flag=True, help="Print the recorded grant as one JSON object.")
@db_option
def grant(adapter_id: str, session_id: str, root: str | None, as_json: bool, db: str | None) -> None:
    """Record consent for ADAPTER_ID with the notice its manifest declares (purpose, data items,
    retention, right to refuse), in the same keyed ledger the gate reads."""
    from ummaya.paths import generated_dir
    from ummaya.runtime.catalog import Catalog, CatalogError
    from ummaya.runtime.store import LedgerBroken

    try:
        catalog = Catalog.load(generated_dir(root))
    except CatalogError as exc:
        fail(f"error [catalog_missing]: {exc}", 2)
    if adapter_id not in catalog.adapters:
        raise click.BadParameter(f"unknown adapter id {adapter_id!r} (ummaya adapters lists them)",
                                 param_hint="ADAPTER_ID")
    m = catalog.get(adapter_id)
    notice = m.permission.consent
    if notice is None:
        raise click.BadParameter(f"{adapter_id} declares no consent notice (gate "
                                 f"{m.permission.gate!r}): there is nothing to consent to",
                                 param_hint="ADAPTER_ID")
    with open_db(db) as store:
        try:
            rec = store.grant_consent(session_id, adapter_id, purpose=notice.purpose.ko,
                                      data_items=list(notice.data_items),
                                      retention=notice.retention.ko, refusal=notice.refusal.ko)
        except LedgerBroken as exc:
            fail(f"error [ledger_broken]: {exc}", 1)
        except Exception as exc:  # noqa: BLE001 - e.g. an unreadable ledger key file
            fail(f"error [ledger_unavailable]: {exc}", 1)
    if as_json:
        emit_json({"granted": rec.to_dict()})
        return
    click.echo(f"granted {rec.consent_id} (session={rec.session_id} adapter={rec.adapter_id})")
    click.echo(f"    목적 purpose: {rec.purpose}")
    click.echo(f"    항목 data items: {', '.join(rec.data_items)}")
    click.echo(f"    보유 retention: {rec.retention}")
    click.echo(f"    거부 right to refuse: {rec.refusal}")


@consent.command("anchor")
@click.option("--json", "as_json", is_flag=True)
@db_option
def anchor(as_json: bool, db: str | None) -> None:
    """Operator repair: check every record's link and signature, then sign the head checkpoint at
    the chain's end (a legacy ledger, a crash mid-append, after a key rotation). Refuses a chain
    whose records do not verify. See docs/ledger.md before using it."""
    with open_db(db) as store:
        try:
            report = store.anchor()
        except Exception as exc:  # noqa: BLE001 - key file problems and the like
            fail(f"error [ledger_unavailable]: {exc}", 1)
    if as_json:
        emit_json(report.to_dict())
    elif report.ok:
        click.echo(f"anchored: head at seq={report.head_seq} ({report.records} records) {report.head}")
    else:
        click.echo(f"NOT anchored: record seq={report.broken_seq} consent={report.broken_consent_id}: "
                   f"{report.reason}", err=True)
    if not report.ok:
        raise SystemExit(1)


@consent.command("rotate-key")
@click.option("--json", "as_json", is_flag=True)
@db_option
def rotate_key(as_json: bool, db: str | None) -> None:
    """Rotate the ledger key kept in UMMAYA_HOME/ledger.key: the ledger must verify first; the old
    key moves to ledger.retired (it still verifies older records), a new key is written 0600 and
    the head is re-signed with it. Restart running servers afterwards. With UMMAYA_LEDGER_KEY set,
    rotate by hand (docs/ledger.md)."""
    from ummaya.runtime.store.ledger import rotate_key_file

    with open_db(db) as store:
        try:
            report = rotate_key_file(store)
        except Exception as exc:  # noqa: BLE001
            fail(f"error [ledger_rotation]: {exc}", 1)
    if as_json:
        emit_json(report.to_dict())
    elif report.ok:
        click.echo(f"rotated: new key {store.ledger_keys().current_id}; head re-signed at "
                   f"seq={report.head_seq}")
    else:
        click.echo(f"NOT rotated: {report.reason}", err=True)
    if not report.ok:
        raise SystemExit(1)
