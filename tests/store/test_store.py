"""The storage suite: every test runs against SQLite and against a real PostgreSQL server."""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime, timedelta, timezone

import pytest

from ummaya.runtime.events import Event
from ummaya.runtime.store import (
    MIGRATIONS,
    InvalidTransition,
    ReleaseConflict,
    RetentionPolicy,
    Session,
    Trace,
    UnknownConsent,
    UnknownRelease,
    UnknownTrace,
    open_store,
    sqlite_path,
)

UTC = timezone.utc
NOTICE = dict(purpose="가까운 응급실 검색", data_items=["현재 위치"], retention="세션 종료 시 삭제",
              refusal="거부할 수 있으며, 거부하면 위치 기반 검색을 하지 않습니다")


class Raw:
    """Plain SQL on the same database, bypassing the store (what a tamperer would do)."""

    def __init__(self, url: str):
        self.url = url
        if url.startswith("sqlite"):
            self.conn = sqlite3.connect(sqlite_path(url), isolation_level=None)
            self.pg = False
        else:
            import psycopg

            self.conn = psycopg.connect(url, autocommit=True)
            self.pg = True

    def __call__(self, sql: str, params: tuple = ()) -> list[tuple]:
        if self.pg:
            sql = sql.replace("?", "%s")
        cur = self.conn.execute(sql, params)
        return cur.fetchall() if cur.description else []

    def close(self) -> None:
        self.conn.close()


@pytest.fixture
def raw(db_url: str, store):
    r = Raw(db_url)
    yield r
    r.close()


def _refused(raw: Raw, sql: str) -> bool:
    try:
        raw(sql)
    except Exception as exc:
        return "append-only" in str(exc)
    return False


# ---------------------------------------------------------------- migrations


def test_migrations_recorded_once_and_idempotent(db_url: str) -> None:
    first = open_store(db_url, migrate=False)
    try:
        assert first.applied_migrations() == []
        assert first.migrate() == [m.name for m in MIGRATIONS]
        assert first.migrate() == []
        assert first.applied_migrations() == sorted(m.name for m in MIGRATIONS)
    finally:
        first.close()
    again = open_store(db_url)  # a later process opening the same database
    try:
        assert again.migrate() == []
        assert again.applied_migrations() == sorted(m.name for m in MIGRATIONS)
    finally:
        again.close()
    raw = Raw(db_url)
    try:
        rows = raw("SELECT name, count(*) FROM _migrations GROUP BY name")
        assert all(n == 1 for _, n in rows) and len(rows) == len(MIGRATIONS)
    finally:
        raw.close()


def test_failed_migration_leaves_nothing_behind(db_url: str, monkeypatch) -> None:
    from ummaya.runtime.store import sql
    from ummaya.runtime.store.migrations import Migration

    bad = Migration("m999_broken", sqlite=("CREATE TABLE half_done (x INTEGER)", "THIS IS NOT SQL"),
                    postgresql=("CREATE TABLE half_done (x INTEGER)", "THIS IS NOT SQL"))
    monkeypatch.setattr(sql, "MIGRATIONS", [*MIGRATIONS, bad])
    s = open_store(db_url, migrate=False)
    try:
        with pytest.raises(Exception):
            s.migrate()
        assert s.applied_migrations() == []  # all-or-nothing: not even m001 is recorded
    finally:
        s.close()
    raw = Raw(db_url)
    try:
        with pytest.raises(Exception):
            raw("SELECT count(*) FROM half_done")
    finally:
        raw.close()
    monkeypatch.setattr(sql, "MIGRATIONS", MIGRATIONS)
    s = open_store(db_url)  # the fixed list applies cleanly afterwards
    try:
        assert s.applied_migrations() == sorted(m.name for m in MIGRATIONS)
    finally:
        s.close()


def test_ping(db_url: str) -> None:
    s = open_store(db_url, migrate=False)
    try:
        assert s.ping() is False  # reachable, but the schema is not there yet
        s.migrate()
        assert s.ping() is True
    finally:
        s.close()
    assert s.ping() is False  # closed


def test_migration_names_are_ordered_and_unique() -> None:
    names = [m.name for m in MIGRATIONS]
    assert names == sorted(names) and len(set(names)) == len(names)
    assert all(n.startswith("m") and n[1:4].isdigit() for n in names)


# ---------------------------------------------------------------- sessions


def test_sessions_get_put(store) -> None:
    assert store.get_session("s1") is None
    saved = store.put_session(Session("s1", slots={"place": {"name": "동아대 승학캠퍼스",
                                                             "lat": 35.1158, "lon": 128.9662}},
                                      turns=1))
    got = store.get_session("s1")
    assert got is not None and got.turns == 1
    assert got.slots["place"]["name"] == "동아대 승학캠퍼스"
    assert got.created_at == saved.created_at
    got.turns += 1
    got.slots["date"] = "2026-11-30"
    updated = store.put_session(got)
    again = store.get_session("s1")
    assert again.turns == 2 and again.slots["date"] == "2026-11-30"
    assert again.created_at == saved.created_at  # kept across updates
    assert again.updated_at >= saved.updated_at and updated.updated_at == again.updated_at


# ---------------------------------------------------------------- consents


def test_consent_grant_revoke_has_consent(store) -> None:
    assert not store.has_consent("s1", "nmc_emergency_rooms")
    g = store.grant_consent("s1", "nmc_emergency_rooms", **NOTICE)
    assert g.action == "grant" and g.seq is not None and len(g.hash) == 64
    assert store.has_consent("s1", "nmc_emergency_rooms")
    assert not store.has_consent("s2", "nmc_emergency_rooms")  # per session
    assert not store.has_consent("s1", "kma_forecast")  # per adapter
    active = store.active_consent("s1", "nmc_emergency_rooms")
    assert active.consent_id == g.consent_id and active.data_items == ["현재 위치"]

    revoked = store.revoke_consent(g.consent_id)
    assert [r.action for r in revoked] == ["revoke"] and revoked[0].consent_id == g.consent_id
    assert not store.has_consent("s1", "nmc_emergency_rooms")
    assert store.revoke_consent(g.consent_id) == []  # revoking twice appends nothing
    with pytest.raises(UnknownConsent):
        store.revoke_consent("nope")

    # a new grant after a revoke counts again; revoking by (session, adapter) revokes it
    g2 = store.grant_consent("s1", "nmc_emergency_rooms", **NOTICE)
    assert store.has_consent("s1", "nmc_emergency_rooms")
    out = store.revoke_consent(session_id="s1", adapter_id="nmc_emergency_rooms")
    assert [r.consent_id for r in out] == [g2.consent_id]
    assert not store.has_consent("s1", "nmc_emergency_rooms")

    records = store.list_consents("s1")
    assert [(r.consent_id, r.action) for r in records] == [
        (g.consent_id, "grant"), (g.consent_id, "revoke"),
        (g2.consent_id, "grant"), (g2.consent_id, "revoke")]
    assert store.verify().ok and store.verify().records == 4


def test_standing_consent_wildcard_session(store) -> None:
    w = store.grant_consent("*", "hira_pharmacies", **NOTICE)
    assert store.has_consent("any-session", "hira_pharmacies")
    assert store.has_consent("another", "hira_pharmacies")
    assert not store.has_consent("any-session", "nmc_emergency_rooms")
    store.revoke_consent(w.consent_id)
    assert not store.has_consent("any-session", "hira_pharmacies")


def test_consent_notice_items_required(store) -> None:
    with pytest.raises(ValueError):
        store.grant_consent("s1", "a", **{**NOTICE, "refusal": " "})
    with pytest.raises(ValueError):
        store.grant_consent("s1", "a", **{**NOTICE, "data_items": []})
    assert store.list_consents() == []


def test_consent_chain_links(store) -> None:
    a = store.grant_consent("s1", "a", **NOTICE)
    b = store.grant_consent("s2", "b", **NOTICE)
    c = store.revoke_consent(a.consent_id)[0]
    assert a.prev_hash == "0" * 64
    assert b.prev_hash == a.hash and c.prev_hash == b.hash
    assert [r.hash for r in store.list_consents()] == [a.hash, b.hash, c.hash]
    assert store.verify().head == c.hash
    key = store.ledger_keys().current
    assert all(r.compute_hash(key) == r.hash for r in store.list_consents())


def test_consents_are_append_only_in_the_database(store, raw) -> None:
    store.grant_consent("s1", "a", **NOTICE)
    assert _refused(raw, "UPDATE consents SET purpose = 'x'")
    assert _refused(raw, "DELETE FROM consents")
    assert len(store.list_consents()) == 1 and store.verify().ok


def _drop_guards(raw: Raw, table: str = "consents") -> None:
    if raw.pg:
        raw(f"ALTER TABLE {table} DISABLE TRIGGER USER")
    else:
        raw(f"DROP TRIGGER {table}_no_update")
        raw(f"DROP TRIGGER {table}_no_delete")


def test_tamper_edit_detected(store, raw) -> None:
    recs = [store.grant_consent(f"s{i}", "nmc_emergency_rooms", **NOTICE) for i in range(4)]
    assert store.verify().ok
    _drop_guards(raw)
    raw("UPDATE consents SET data_items = ? WHERE seq = ?",
        ('["현재 위치", "주민등록번호"]', recs[2].seq))
    report = store.verify()
    assert not report.ok
    assert report.broken_seq == recs[2].seq and report.broken_consent_id == recs[2].consent_id
    assert "edited" in report.reason and report.records == 4


def test_tamper_revoke_row_deleted_detected(store, raw) -> None:
    g = store.grant_consent("s1", "a", **NOTICE)
    r = store.revoke_consent(g.consent_id)[0]
    later = store.grant_consent("s2", "b", **NOTICE)
    _drop_guards(raw)
    raw("DELETE FROM consents WHERE seq = ?", (r.seq,))  # silently "un-revoke"
    assert store.active_consent("s1", "a") is not None  # the deletion took effect …
    assert not store.has_consent("s1", "a")  # … but the gate fails closed
    report = store.verify()  # … and the chain says so
    assert not report.ok and report.broken_seq == later.seq and "link" in report.reason


def test_tamper_rehash_without_the_key_is_detected(store, raw) -> None:
    """Editing a row and recomputing its hash without the ledger key fails at that very row
    (tests/security/test_ledger.py covers re-hashing the whole rest of the chain)."""
    import hashlib

    from ummaya.runtime.store.records import canonical_json

    a = store.grant_consent("s1", "a", **NOTICE)
    store.grant_consent("s1", "b", **NOTICE)
    forged = store.list_consents()[0]
    forged.session_id = "*"
    forged.hash = hashlib.sha256(canonical_json(forged.hashed_payload()).encode()).hexdigest()
    _drop_guards(raw)
    raw("UPDATE consents SET session_id = ?, hash = ? WHERE seq = ?", ("*", forged.hash, a.seq))
    report = store.verify()
    assert not report.ok and report.broken_seq == a.seq and "ledger key" in report.reason


# ---------------------------------------------------------------- traces


def _events(text: str) -> list:
    return [
        Event(seq=0, type="turn_started", stage="context", t_ms=0.0,
              data={"request": text, "session_id": "s1", "language": "ko"}),
        Event(seq=1, type="call_started", stage="dispatch", t_ms=3.5,
              data={"call_id": "c1", "adapter_id": "nmc_emergency_rooms", "tier": "mock",
                    "arguments": {"phone": "010-9876-5432", "radius_km": 5}}),
        Event(seq=2, type="answer", stage="answer", t_ms=9.0, data={"text": f"답: {text}"}),
        Event(seq=3, type="stop", stage="answer", t_ms=9.1,
              data={"stop_reason": "completed", "layer": "answer"}),
    ]


REQUEST = "제 번호 010-1234-5678, 메일 hong@example.com 으로 응급실 알려줘"


def _trace(**kw) -> Trace:
    base = dict(release_id="rel-abc", release_alias="prod", session_id="s1",
                stop_reason="completed", request_text=REQUEST,
                answer_text="연락처 010-1234-5678 확인. 50,000원, 2026-11-30, 1002번 버스",
                timings={"total_ms": 12.5, "retrieve_ms": 1.25}, events=_events(REQUEST),
                calls=[{"adapter_id": "nmc_emergency_rooms", "primitive": "find", "tier": "mock",
                        "status": "ok", "note": "caller 01012345678"}],
                meta={"query": REQUEST, "candidates": [{"adapter_id": "nmc_emergency_rooms"}]})
    base.update(kw)
    return Trace(**base)


def _all_stored_text(raw: Raw) -> str:
    rows = raw("SELECT * FROM traces") + raw("SELECT * FROM trace_events")
    return json.dumps([[str(v) for v in r] for r in rows], ensure_ascii=False)


def test_trace_redacted_by_default(store, raw) -> None:
    stored = store.put_trace(_trace())
    got = store.get_trace(stored.trace_id)
    assert got.text_policy == "redacted"
    assert got.request_text == "제 번호 [전화번호], 메일 [이메일] 으로 응급실 알려줘"
    assert got.answer_text == "연락처 [전화번호] 확인. 50,000원, 2026-11-30, 1002번 버스"
    assert got.events[0]["data"]["request"] == got.request_text
    assert got.events[1]["data"]["arguments"] == {"phone": "[전화번호]", "radius_km": 5}
    assert got.calls[0]["note"] == "caller [전화번호]"
    assert [e["type"] for e in got.events] == ["turn_started", "call_started", "answer", "stop"]
    everything = _all_stored_text(raw)
    for secret in ("010-1234-5678", "hong@example.com", "01012345678", "010-9876-5432"):
        assert secret not in everything


def test_trace_retention_none_keeps_identity_only(store, raw) -> None:
    policy = RetentionPolicy(raw_text="none", ttl_days=7)
    stored = store.put_trace(_trace(), policy)
    got = store.get_trace(stored.trace_id)
    assert got.request_text is None and got.answer_text is None and got.text_policy == "none"
    assert got.events[0]["data"]["request"] is None and got.events[2]["data"]["text"] is None
    assert got.meta["query"] is None
    # identity fields survive
    assert (got.trace_id, got.release_id, got.release_alias, got.stop_reason, got.session_id) == (
        stored.trace_id, "rel-abc", "prod", "completed", "s1")
    assert got.timings == {"total_ms": 12.5, "retrieve_ms": 1.25}
    assert got.events[3]["data"]["stop_reason"] == "completed"
    assert got.expires_at - got.created_at == timedelta(days=7)
    assert "응급실" not in _all_stored_text(raw)


def test_trace_retention_full_keeps_raw(store) -> None:
    stored = store.put_trace(_trace(), RetentionPolicy(raw_text="full"))
    got = store.get_trace(stored.trace_id)
    assert got.request_text == REQUEST and got.text_policy == "full"
    assert got.events[1]["data"]["arguments"]["phone"] == "010-9876-5432"


def test_traces_disabled_stores_nothing(store) -> None:
    assert store.put_trace(_trace(), RetentionPolicy(traces_enabled=False)) is None
    assert store.list_traces() == []


def test_trace_expiry_always_set_and_purge_only_expired(store, raw) -> None:
    now = datetime.now(UTC)
    old = store.put_trace(_trace(created_at=now - timedelta(days=31)))
    fresh = store.put_trace(_trace(created_at=now - timedelta(days=29)))
    short = store.put_trace(_trace(created_at=now - timedelta(hours=2)),
                            RetentionPolicy(ttl_days=1 / 24))
    explicit = store.put_trace(_trace(expires_at=now + timedelta(days=365)))
    for t in (old, fresh, short, explicit):
        assert store.get_trace(t.trace_id, include_expired=True).expires_at is not None
    assert store.get_trace(old.trace_id, include_expired=True).expires_at == old.created_at + timedelta(days=30)
    assert raw("SELECT count(*) FROM traces WHERE expires_at IS NULL")[0][0] == 0
    listed = {t.trace_id: t for t in store.list_traces(include_expired=True)}
    assert all(t.expires_at for t in listed.values()) and len(listed) == 4
    # Expired means unreadable at once, before any purge (issue 11 item 8).
    assert store.get_trace(old.trace_id) is None and store.get_trace(short.trace_id) is None
    assert {t.trace_id for t in store.list_traces()} == {fresh.trace_id, explicit.trace_id}

    assert store.purge_expired(now) == 2  # old and short
    left = {t.trace_id for t in store.list_traces(include_expired=True)}
    assert left == {fresh.trace_id, explicit.trace_id}
    assert store.get_trace(old.trace_id) is None
    ids = {r[0] for r in raw("SELECT DISTINCT trace_id FROM trace_events")}
    assert ids == left  # events went with their traces
    assert store.purge_expired(now) == 0
    assert store.purge_expired(now + timedelta(days=2)) == 1  # fresh expires next
    assert {t.trace_id for t in store.list_traces(include_expired=True)} == {explicit.trace_id}


def test_trace_state_timeline(store) -> None:
    t = store.put_trace(Trace(request_text="응급실", release_id="r1"))
    assert t.state == "received" and [s["state"] for s in t.states] == ["received"]
    for state in ("resolved", "retrieving", "reranking", "generating", "completed"):
        store.advance_state(t.trace_id, state)
    got = store.get_trace(t.trace_id)
    assert got.state == "completed"
    assert [s["state"] for s in got.states] == [
        "received", "resolved", "retrieving", "reranking", "generating", "completed"]
    stamps = [s["at"] for s in got.states]
    assert stamps == sorted(stamps)
    with pytest.raises(InvalidTransition):
        store.advance_state(t.trace_id, "failed")  # nothing after a terminal state
    t2 = store.put_trace(Trace())
    store.advance_state(t2.trace_id, "retrieving")
    with pytest.raises(InvalidTransition):
        store.advance_state(t2.trace_id, "resolved")  # never backwards
    with pytest.raises(InvalidTransition):
        store.advance_state(t2.trace_id, "sleeping")
    assert store.advance_state(t2.trace_id, "failed").state == "failed"
    assert store.get_trace(t2.trace_id).state == "failed"
    with pytest.raises(UnknownTrace):
        store.advance_state("missing", "resolved")


def test_add_events_redacted_like_the_trace(store) -> None:
    t = store.put_trace(Trace(request_text="x"))
    n = store.add_events(t.trace_id, [Event(seq=0, type="delta", stage="answer", t_ms=1.0,
                                            data={"text": "카드 4111 1111 1111 1111"})])
    assert n == 1
    assert store.get_trace(t.trace_id).events[0]["data"]["text"] == "카드 [카드번호]"


def test_list_traces_newest_first_with_limit(store) -> None:
    now = datetime.now(UTC)
    ids = [store.put_trace(Trace(created_at=now - timedelta(minutes=10 - i))).trace_id
           for i in range(5)]
    listed = store.list_traces(limit=3)
    assert [t.trace_id for t in listed] == ids[::-1][:3]
    assert all(t.events == [] for t in listed)
    store.put_trace(Trace(session_id="only-me"))
    assert [t.session_id for t in store.list_traces(session_id="only-me")] == ["only-me"]


def test_put_trace_twice_replaces(store) -> None:
    t = _trace()
    store.put_trace(t)
    t.stop_reason = "adapter_error"
    t.events = t.events[:1]
    store.put_trace(t)
    got = store.get_trace(t.trace_id)
    assert got.stop_reason == "adapter_error" and len(got.events) == 1
    assert len(store.list_traces()) == 1


# ---------------------------------------------------------------- releases


def test_releases_publish_promote_resolve(store, raw) -> None:
    policy = {"analyzer": "kiwi+ngram", "backend": "whoosh", "top_k": 5,
              "filters": ["primitive", "tier", "domain", "agency"]}
    r1 = store.publish_release("sha256:aaa", retrieval_policy=policy, catalog_blob=b'{"a":1}')
    assert r1.catalog_sha256 and r1.immutable
    again = store.publish_release("sha256:aaa", retrieval_policy=dict(policy),
                                  catalog_blob=b'{"a":1}')
    assert again.created_at == r1.created_at  # idempotent
    with pytest.raises(ReleaseConflict):
        store.publish_release("sha256:aaa", retrieval_policy=policy, catalog_blob=b'{"a":2}')
    with pytest.raises(ReleaseConflict):
        store.publish_release("sha256:aaa", retrieval_policy={**policy, "top_k": 9},
                              catalog_blob=b'{"a":1}')
    assert store.release_catalog("sha256:aaa") == b'{"a":1}'
    store.publish_release("sha256:bbb", retrieval_policy=policy, catalog_path="/srv/r2/catalog.json")
    assert [r.release_id for r in store.list_releases()] == ["sha256:aaa", "sha256:bbb"]

    assert store.resolve("prod") is None
    with pytest.raises(UnknownRelease):
        store.promote("prod", "sha256:nope")
    assert store.aliases() == {}
    store.promote("prod", "sha256:aaa")
    got = store.resolve("prod")
    assert got.release_id == "sha256:aaa" and got.alias == "prod"
    assert got.retrieval_policy == policy
    store.promote("prod", "sha256:bbb")
    assert store.resolve("prod").release_id == "sha256:bbb"
    assert store.resolve("sha256:aaa").alias is None  # by id
    assert store.resolve("staging") is None  # unknown alias: no fallback
    assert store.aliases() == {"prod": "sha256:bbb"}
    assert _refused(raw, "UPDATE releases SET retrieval_policy = retrieval_policy")
    assert _refused(raw, "DELETE FROM releases")


# ---------------------------------------------------------------- URLs


def test_open_store_urls(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("UMMAYA_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("UMMAYA_DATABASE_URL", raising=False)
    s = open_store(None)
    try:
        assert s.dialect == "sqlite"
        assert s.path == str(tmp_path / "home" / "ummaya.sqlite3")
        mode = s._conn.execute("PRAGMA journal_mode").fetchone()[0]
        assert mode == "wal"
    finally:
        s.close()
    monkeypatch.setenv("UMMAYA_DATABASE_URL", f"sqlite:///{tmp_path / 'env.db'}")
    s = open_store()
    try:
        assert s.path == str(tmp_path / "env.db")
    finally:
        s.close()
    assert sqlite_path("sqlite:///tmp/x.db") == "/tmp/x.db"
    assert sqlite_path("sqlite://") == ":memory:"
    with pytest.raises(ValueError):
        open_store("mysql://x")


# ---------------------------------------------------------------- robustness


def test_one_store_shared_by_threads(store) -> None:
    """A server shares one Store across worker threads: nothing lost, the chain stays a line."""
    from concurrent.futures import ThreadPoolExecutor

    def work(i: int) -> str:
        store.grant_consent(f"t{i}", "a", **NOTICE)
        return store.put_trace(_trace(session_id=f"t{i}")).trace_id

    with ThreadPoolExecutor(8) as pool:
        ids = list(pool.map(work, range(40)))
    assert len(set(ids)) == 40
    assert {t.trace_id for t in store.list_traces(limit=100)} == set(ids)
    assert store.verify().ok and store.verify().records == 40
    assert all(store.has_consent(f"t{i}", "a") for i in range(40))


def test_timeline_stamps_normalized_and_odd_values_kept(store) -> None:
    start = datetime(2026, 11, 30, 8, 0, tzinfo=timezone(timedelta(hours=9)))
    t = Trace(created_at=start, states=[
        {"state": "received", "at": start.isoformat()},
        {"state": "completed", "at": start + timedelta(milliseconds=12)},
    ], events=[{"seq": 0, "type": "evidence", "stage": "project", "t_ms": 1.0,
                "data": {"freshness": datetime(2026, 11, 30, 7, 59, tzinfo=UTC)}}])
    store.put_trace(t)
    got = store.get_trace(t.trace_id)
    assert [s["at"] for s in got.states] == ["2026-11-29T23:00:00.000000Z",
                                             "2026-11-29T23:00:00.012000Z"]
    assert got.state == "completed" and got.created_at == start
    assert got.events[0]["data"]["freshness"] == "2026-11-30T07:59:00Z"


def test_events_must_be_the_one_event_model(store) -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError):
        store.put_trace(Trace(events=[{"seq": 0, "type": "not_an_event", "stage": "x", "t_ms": 0}]))
    with pytest.raises(ValidationError):
        store.put_trace(Trace(events=[{"type": "delta", "stage": "answer", "t_ms": 0}]))  # no seq
    assert store.list_traces() == []


def test_postgres_reconnects_after_connection_loss(db_url: str, store) -> None:
    if store.dialect != "postgresql":
        pytest.skip("PostgreSQL connection handling")
    def backend_pid() -> int:
        with store.tx(write=False) as tx:
            return tx.q("SELECT pg_backend_pid() AS p")[0]["p"]

    pid = backend_pid()
    raw = Raw(db_url)
    try:
        raw("SELECT pg_terminate_backend(?)", (pid,))  # what a server restart does to us
    finally:
        raw.close()
    with pytest.raises(Exception):
        store.list_traces()  # the call in flight fails …
    t = store.put_trace(Trace(request_text="after"))  # … the next one reconnects
    assert store.get_trace(t.trace_id) is not None
    assert backend_pid() != pid
