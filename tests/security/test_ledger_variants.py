"""Red-team ledger variants, on SQLite and PostgreSQL.

Rolling the signed head back *together with* the database's tail is consistent by construction;
what stops it is that only the key's owner may write the head. A head folder or file others can
write was accepted before (the key file was checked, the head was not)."""

from __future__ import annotations

import json
import os

from tests.security.test_ledger_tamper import drop_guards, raw, store_ledger_id  # noqa: F401
from tests.store.conftest import db_url, pg_base_url, pg_url, store  # noqa: F401  (fixtures)
from tests.store.test_store import NOTICE, Raw


def test_head_writable_by_others_fails_verify(store, raw: Raw) -> None:  # noqa: F811
    store.grant_consent("s1", "a", **NOTICE)
    heads = store.ledger_heads()
    path = heads.path(store_ledger_id(raw))
    assert store.verify().ok
    for target, mode in ((heads.folder, 0o777), (heads.folder, 0o770), (path, 0o666), (path, 0o620)):
        old = os.stat(target).st_mode & 0o777
        os.chmod(target, mode)
        try:
            report = store.verify()
            assert not report.ok and "writable by others" in report.reason, (target, oct(mode), report)
        finally:
            os.chmod(target, old)
    assert store.verify().ok


def test_head_only_rollback_fails_and_reordered_rows_fail(store, raw: Raw) -> None:  # noqa: F811
    """A head copied before the last grant (without touching the database) and two rows swapped."""
    store.grant_consent("s1", "a", **NOTICE)
    path = store.ledger_heads().path(store_ledger_id(raw))
    old_head = path.read_bytes()
    store.grant_consent("s2", "a", **NOTICE)
    store.grant_consent("s3", "a", **NOTICE)
    new_head = path.read_bytes()
    path.write_bytes(old_head)
    report = store.verify()
    assert not report.ok and "without moving it" in report.reason
    path.write_bytes(new_head)
    assert store.verify().ok
    drop_guards(raw)
    rows = raw("SELECT seq, session_id FROM consents ORDER BY seq")
    (s2, sess2), (s3, sess3) = rows[1], rows[2]
    raw("UPDATE consents SET session_id = ? WHERE seq = ?", ("tmp", s2))
    raw("UPDATE consents SET session_id = ? WHERE seq = ?", (sess2, s3))
    raw("UPDATE consents SET session_id = ? WHERE seq = ?", (sess3, s2))
    assert not store.verify().ok
    assert json.loads(new_head)["seq"] == s3
