"""Issue 11 item 6: a consent ledger that cannot be rolled back unnoticed (SQLite and PostgreSQL).

The attacker here is an insider with database access but not the ledger key or the head folder:
they drop the append-only triggers and then delete the newest rows (a revocation), rewrite a row
and re-hash everything after it, or append a forged grant. Each must fail ``consent verify``, and
the gate must not open on a ledger that fails.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from tests.store.conftest import db_url, pg_base_url, pg_url, store  # noqa: F401  (fixtures)
from tests.store.test_store import NOTICE, Raw
from ummaya.cli import main
from ummaya.runtime.permission import decide
from ummaya.runtime.store import GENESIS_HASH, LedgerBroken, open_store
from ummaya.runtime.store.ledger import HeadFile, Keyring, key_id_of, mac
from ummaya.runtime.store.records import ConsentRecord, canonical_json


@pytest.fixture
def raw(db_url: str, store):  # noqa: F811
    r = Raw(db_url)
    yield r
    r.close()


def drop_guards(raw: Raw) -> None:
    if raw.pg:
        raw("ALTER TABLE consents DISABLE TRIGGER USER")
    else:
        raw("DROP TRIGGER consents_no_update")
        raw("DROP TRIGGER consents_no_delete")


def protected(adapter_id: str = "welfare_eligibility_check") -> SimpleNamespace:
    """Just what ``gate.decide`` reads of a manifest with a consent gate."""
    return SimpleNamespace(id=adapter_id, tier="mock",
                           permission=SimpleNamespace(gate="login", consent=object()))


def insert_row(raw: Raw, rec: ConsentRecord) -> None:
    raw("INSERT INTO consents (consent_id, session_id, adapter_id, purpose, data_items, retention, "
        "refusal, granted_at, action, prev_hash, hash, key_id) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (rec.consent_id, rec.session_id, rec.adapter_id, rec.purpose, json.dumps(rec.data_items),
         rec.retention, rec.refusal, rec.to_dict()["granted_at"], rec.action, rec.prev_hash,
         rec.hash, rec.key_id))


def cli(*args: str) -> object:
    return CliRunner().invoke(main, list(args))


# ---------------------------------------------------------------- the three rollbacks of issue 11


def test_deleting_the_revocation_at_the_tail_fails_verify_and_the_gate(store, raw, db_url) -> None:  # noqa: F811
    g = store.grant_consent("s1", "welfare_eligibility_check", **NOTICE)
    r = store.revoke_consent(g.consent_id)[0]
    assert not store.has_consent("s1", "welfare_eligibility_check")
    assert decide(protected(), "s1", store).decision == "consent_required"
    drop_guards(raw)
    raw("DELETE FROM consents WHERE seq = ?", (r.seq,))  # the revocation was the newest row
    # A plain hash chain would still be intact here; the signed head says otherwise.
    report = store.verify()
    assert not report.ok and report.broken_seq == r.seq and "deleted" in report.reason
    assert store.active_consent("s1", "welfare_eligibility_check") is not None  # the rollback "worked"
    assert not store.has_consent("s1", "welfare_eligibility_check")  # … but counts for nothing
    assert decide(protected(), "s1", store).decision == "deny"
    out = cli("consent", "verify", "--db", db_url)
    assert out.exit_code == 1 and "BROKEN" in out.output and "deleted" in out.output
    # Appending would bury the deletion under a new signed head: refused, head unchanged.
    head_before = store.ledger_heads().read(store_ledger_id(raw))
    with pytest.raises(LedgerBroken):
        store.grant_consent("s2", "welfare_eligibility_check", **NOTICE)
    with pytest.raises(LedgerBroken):
        store.revoke_consent(g.consent_id)
    assert store.ledger_heads().read(store_ledger_id(raw)) == head_before
    assert not store.verify().ok


def test_deleting_every_row_fails_verify(store, raw) -> None:  # noqa: F811
    store.grant_consent("s1", "a", **NOTICE)
    store.grant_consent("s2", "a", **NOTICE)
    drop_guards(raw)
    raw("DELETE FROM consents")
    report = store.verify()
    assert not report.ok and "empty" in report.reason and report.broken_seq == 2


def test_rewrite_and_rehash_the_rest_of_the_chain_fails(store, raw) -> None:  # noqa: F811
    """Move a grant to the attacker's session and recompute every hash after it — the way a plain
    SHA-256 chain could be repaired. Without the key the first rewritten record fails."""
    recs = [store.grant_consent(f"s{i}", "welfare_eligibility_check", **NOTICE) for i in range(4)]
    drop_guards(raw)
    rows = store.list_consents()
    rows[1].session_id = "attacker"
    prev = rows[0].hash
    for rec in rows[1:]:  # re-hash everything from the edit onwards, links included
        rec.prev_hash = prev
        rec.hash = hashlib.sha256(canonical_json(rec.hashed_payload()).encode()).hexdigest()
        raw("UPDATE consents SET session_id = ?, prev_hash = ?, hash = ? WHERE seq = ?",
            (rec.session_id, rec.prev_hash, rec.hash, rec.seq))
        prev = rec.hash
    report = store.verify()
    assert not report.ok and report.broken_seq == recs[1].seq and "ledger key" in report.reason
    assert store.active_consent("attacker", "welfare_eligibility_check") is not None
    assert not store.has_consent("attacker", "welfare_eligibility_check")
    assert decide(protected(), "attacker", store).decision == "deny"


def test_rewrite_with_a_guessed_key_fails(store, raw) -> None:  # noqa: F811
    """Even a correct HMAC under some other key (same key id spelled in the row) fails."""
    store.grant_consent("s1", "a", **NOTICE)
    drop_guards(raw)
    rec = store.list_consents()[0]
    rec.session_id = "attacker"
    rec.hash = rec.compute_hash(b"x" * 32)
    raw("UPDATE consents SET session_id = ?, hash = ? WHERE seq = ?", ("attacker", rec.hash, rec.seq))
    report = store.verify()
    assert not report.ok and report.broken_seq == rec.seq


@pytest.mark.parametrize("how", ["plain_sha256", "other_key", "unkeyed_legacy_style"])
def test_forged_append_with_triggers_dropped_fails(store, raw, how: str) -> None:  # noqa: F811
    g = store.grant_consent("s1", "welfare_eligibility_check", **NOTICE)
    drop_guards(raw)
    forged = ConsentRecord(
        consent_id="f" * 32, session_id="attacker", adapter_id="welfare_eligibility_check",
        purpose=g.purpose, data_items=g.data_items, retention=g.retention, refusal=g.refusal,
        granted_at=g.granted_at, action="grant", prev_hash=g.hash,
        key_id=None if how == "unkeyed_legacy_style" else g.key_id,
    )
    if how == "plain_sha256" or how == "unkeyed_legacy_style":
        forged.hash = hashlib.sha256(canonical_json(forged.hashed_payload()).encode()).hexdigest()
    else:
        forged.hash = forged.compute_hash(os.urandom(32))
    insert_row(raw, forged)
    report = store.verify()
    assert not report.ok and report.broken_seq == g.seq + 1
    assert store.active_consent("attacker", "welfare_eligibility_check") is not None
    assert not store.has_consent("attacker", "welfare_eligibility_check")
    assert decide(protected(), "attacker", store).decision == "deny"


def test_edited_head_checkpoint_fails(store, raw) -> None:  # noqa: F811
    store.grant_consent("s1", "a", **NOTICE)
    r = store.grant_consent("s2", "a", **NOTICE)
    lid = store_ledger_id(raw)
    path = store.ledger_heads().path(lid)
    data = json.loads(path.read_text())
    # Point the head at the first record (as if to make deleting the second one look fine).
    first = store.list_consents()[0]
    data.update(seq=first.seq, hash=first.hash)
    path.write_text(json.dumps(data))
    report = store.verify()
    assert not report.ok and "signature" in report.reason
    path.unlink()
    report = store.verify()
    assert not report.ok and "no signed head" in report.reason
    assert r.seq is not None


def test_ledger_id_swapped_fails(store, raw) -> None:  # noqa: F811
    store.grant_consent("s1", "a", **NOTICE)
    if raw.pg:
        raw("ALTER TABLE ledger_meta DISABLE TRIGGER USER")
    else:
        raw("DROP TRIGGER ledger_meta_no_delete")
    raw("DELETE FROM ledger_meta")
    assert not store.verify().ok
    raw("INSERT INTO ledger_meta (ledger_id, created_at) VALUES (?, ?)",
        ("0" * 32, "2026-01-01T00:00:00.000000Z"))
    report = store.verify()
    assert not report.ok and "no signed head" in report.reason


def store_ledger_id(raw: Raw) -> str:
    return raw("SELECT ledger_id FROM ledger_meta")[0][0]


# ---------------------------------------------------------------- the key


def test_key_file_created_0600_and_reused(tmp_path: Path) -> None:
    home = tmp_path / "home"
    k1 = Keyring.from_env({}, home)
    assert stat.S_IMODE((home / "ledger.key").stat().st_mode) == 0o600
    assert len(k1.current) == 64  # 32 random bytes, hex
    assert Keyring.from_env({}, home).current == k1.current
    (home / "ledger.key").chmod(0o644)
    with pytest.raises(Exception, match="too open"):
        Keyring.from_env({}, home)


def test_env_key_wins_and_short_keys_are_refused(tmp_path: Path) -> None:
    k = Keyring.from_env({"UMMAYA_LEDGER_KEY": "k" * 40}, tmp_path)
    assert k.current == b"k" * 40 and not (tmp_path / "ledger.key").exists()
    with pytest.raises(Exception, match="at least 32"):
        Keyring.from_env({"UMMAYA_LEDGER_KEY": "short"}, tmp_path)


def test_key_never_stored_in_the_database(store, raw) -> None:  # noqa: F811
    store.grant_consent("s1", "a", **NOTICE)
    key = store.ledger_keys().current.decode()
    dump = json.dumps([list(map(str, r)) for r in raw("SELECT * FROM consents")])
    dump += json.dumps([list(map(str, r)) for r in raw("SELECT * FROM ledger_meta")])
    assert key not in dump and key_id_of(key.encode()) in dump


def test_a_different_key_cannot_verify_or_append(db_url: str, tmp_path: Path, monkeypatch) -> None:  # noqa: F811
    monkeypatch.setenv("UMMAYA_LEDGER_KEY", "a" * 40)
    s = open_store(db_url)
    try:
        s.grant_consent("s1", "a", **NOTICE)
        assert s.verify().ok
    finally:
        s.close()
    monkeypatch.setenv("UMMAYA_LEDGER_KEY", "b" * 40)  # someone with the DB but the wrong key
    s = open_store(db_url)
    try:
        report = s.verify()
        assert not report.ok and "unknown key" in report.reason
        with pytest.raises(LedgerBroken):
            s.grant_consent("s2", "a", **NOTICE)
    finally:
        s.close()


def test_rotation_by_environment(db_url: str, monkeypatch) -> None:  # noqa: F811
    old, new = "o" * 40, "n" * 40
    monkeypatch.setenv("UMMAYA_LEDGER_KEY", old)
    s = open_store(db_url)
    try:
        s.grant_consent("s1", "a", **NOTICE)
    finally:
        s.close()
    monkeypatch.setenv("UMMAYA_LEDGER_KEY", new)
    monkeypatch.setenv("UMMAYA_LEDGER_RETIRED_KEYS", old)
    s = open_store(db_url)
    try:
        report = s.verify()  # old records verify with the retired key; the head needs re-signing
        assert not report.ok and "anchor" in report.reason
        assert s.anchor().ok and s.verify().ok
        s.grant_consent("s2", "a", **NOTICE)
        assert s.verify().ok
        rows = s.list_consents()
        assert [r.key_id for r in rows] == [key_id_of(old.encode()), key_id_of(new.encode())]
    finally:
        s.close()
    # A record signed with the retired key *after* one signed with its successor is refused,
    # so a leaked retired key cannot extend the chain.
    s = open_store(db_url)
    try:
        last = s.list_consents()[-1]
        forged = ConsentRecord(consent_id="e" * 32, session_id="attacker", adapter_id="a",
                               purpose="p", data_items=["x"], retention="r", refusal="f",
                               granted_at=last.granted_at, action="grant", prev_hash=last.hash,
                               key_id=key_id_of(old.encode()))
        forged.hash = forged.compute_hash(old.encode())
        raw = Raw(db_url)
        try:
            drop_guards(raw)
            insert_row(raw, forged)
        finally:
            raw.close()
        report = s.verify()
        assert not report.ok and "retired" in report.reason
    finally:
        s.close()


def test_rotate_key_command(db_url: str) -> None:  # noqa: F811
    assert cli("consent", "grant", "welfare_eligibility_check", "--session", "s1",
               "--db", db_url).exit_code == 0
    home = Path(os.environ["UMMAYA_HOME"])
    before = (home / "ledger.key").read_text()
    out = cli("consent", "rotate-key", "--db", db_url)
    assert out.exit_code == 0, out.output
    assert (home / "ledger.key").read_text() != before
    assert (home / "ledger.retired").read_text() == before
    assert stat.S_IMODE((home / "ledger.key").stat().st_mode) == 0o600
    assert stat.S_IMODE((home / "ledger.retired").stat().st_mode) == 0o600
    assert cli("consent", "grant", "welfare_eligibility_check", "--session", "s2",
               "--db", db_url).exit_code == 0
    out = cli("consent", "verify", "--db", db_url, "--json")
    assert out.exit_code == 0 and json.loads(out.output)["records"] == 2


# ---------------------------------------------------------------- the grant command


def test_consent_grant_records_the_manifests_notice(db_url: str) -> None:  # noqa: F811
    from ummaya.paths import generated_dir
    from ummaya.runtime.catalog import Catalog

    m = Catalog.load(generated_dir()).get("welfare_eligibility_check")
    out = cli("consent", "grant", "welfare_eligibility_check", "--session", "s1", "--db", db_url,
              "--json")
    assert out.exit_code == 0, out.output
    g = json.loads(out.output)["granted"]
    c = m.permission.consent
    assert (g["purpose"], g["data_items"], g["retention"], g["refusal"]) == (
        c.purpose.ko, list(c.data_items), c.retention.ko, c.refusal.ko)
    s = open_store(db_url)
    try:
        assert s.has_consent("s1", "welfare_eligibility_check")
        assert not s.has_consent("s2", "welfare_eligibility_check")
        assert decide(m, "s1", s).decision == "allow"
    finally:
        s.close()
    # Bad values end as usage errors (exit 2), nothing recorded.
    for args in (["no_such_adapter", "--session", "s1"],
                 ["kakao_keyword_search", "--session", "s1"],  # read-only: nothing to consent to
                 ["welfare_eligibility_check", "--session", "bad\x07name"],
                 ["welfare_eligibility_check"]):
        out = cli("consent", "grant", *args, "--db", db_url)
        assert out.exit_code == 2 and "Traceback" not in out.output, (args, out.output)
    out = cli("consent", "verify", "--db", db_url, "--json")
    assert json.loads(out.output)["records"] == 1


def test_anchor_refuses_a_tampered_chain_and_repairs_a_lost_head(store, raw, db_url) -> None:  # noqa: F811
    store.grant_consent("s1", "a", **NOTICE)
    g = store.grant_consent("s2", "a", **NOTICE)
    path = store.ledger_heads().path(store_ledger_id(raw))
    path.unlink()  # e.g. the head folder was lost
    assert not store.verify().ok
    out = cli("consent", "anchor", "--db", db_url)
    assert out.exit_code == 0 and f"seq={g.seq}" in out.output
    assert store.verify().ok
    drop_guards(raw)
    raw("UPDATE consents SET session_id = 'attacker' WHERE seq = ?", (g.seq,))
    out = cli("consent", "anchor", "--db", db_url)
    assert out.exit_code == 1 and "NOT anchored" in out.output


def test_head_checkpoint_payload_is_signed_with_the_current_key(store, raw) -> None:  # noqa: F811
    r = store.grant_consent("s1", "a", **NOTICE)
    lid = store_ledger_id(raw)
    head = HeadFile().read(lid)
    keys = store.ledger_keys()
    assert (head.seq, head.hash, head.key_id) == (r.seq, r.hash, keys.current_id)
    assert head.mac == mac(keys.current, head.payload())
    assert GENESIS_HASH == r.prev_hash
