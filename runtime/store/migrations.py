"""Schema changes as named, append-only migrations (the simonw/llm pattern).

Each migration has a name (``m001_…``) and its statements per dialect. Applied names are recorded
in ``_migrations``; applying is idempotent. Never edit or reorder a migration that has shipped:
add a new one at the end.

Timestamps are TIMESTAMPTZ on PostgreSQL and fixed-width UTC ISO text on SQLite (which sorts
correctly as text); JSON is JSONB / TEXT.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Migration:
    name: str
    sqlite: tuple[str, ...]
    postgresql: tuple[str, ...]

    def statements(self, dialect: str) -> tuple[str, ...]:
        return self.sqlite if dialect == "sqlite" else self.postgresql


def _both(template: str) -> tuple[str, str]:
    """One DDL text for both dialects; {ts} {json} {blob} {serial} differ."""
    sqlite = template.format(ts="TEXT", json="TEXT", blob="BLOB",
                             serial="INTEGER PRIMARY KEY AUTOINCREMENT")
    pg = template.format(ts="TIMESTAMPTZ", json="JSONB", blob="BYTEA",
                         serial="BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY")
    return sqlite, pg


_M001 = [
    _both("""CREATE TABLE sessions (
        session_id TEXT PRIMARY KEY,
        created_at {ts} NOT NULL,
        updated_at {ts} NOT NULL,
        slots {json} NOT NULL,
        turns INTEGER NOT NULL DEFAULT 0
    )"""),
    _both("""CREATE TABLE consents (
        seq {serial},
        consent_id TEXT NOT NULL,
        session_id TEXT NOT NULL,
        adapter_id TEXT NOT NULL,
        purpose TEXT NOT NULL,
        data_items {json} NOT NULL,
        retention TEXT NOT NULL,
        refusal TEXT NOT NULL,
        granted_at {ts} NOT NULL,
        action TEXT NOT NULL CHECK (action IN ('grant', 'revoke')),
        prev_hash TEXT NOT NULL UNIQUE,
        hash TEXT NOT NULL UNIQUE,
        UNIQUE (consent_id, action)
    )"""),
    _both("CREATE INDEX consents_by_adapter ON consents (adapter_id, session_id)"),
    _both("""CREATE TABLE traces (
        trace_id TEXT PRIMARY KEY,
        created_at {ts} NOT NULL,
        updated_at {ts} NOT NULL,
        expires_at {ts} NOT NULL,
        release_id TEXT,
        release_alias TEXT,
        session_id TEXT,
        stop_reason TEXT,
        state TEXT NOT NULL,
        states {json} NOT NULL,
        timings {json} NOT NULL,
        request_text TEXT,
        answer_text TEXT,
        text_policy TEXT NOT NULL,
        calls {json} NOT NULL,
        meta {json} NOT NULL
    )"""),
    _both("CREATE INDEX traces_by_expiry ON traces (expires_at)"),
    _both("CREATE INDEX traces_by_created ON traces (created_at, trace_id)"),
    _both("CREATE INDEX traces_by_session ON traces (session_id)"),
    _both("""CREATE TABLE trace_events (
        trace_id TEXT NOT NULL REFERENCES traces (trace_id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        type TEXT NOT NULL,
        stage TEXT NOT NULL,
        t_ms DOUBLE PRECISION NOT NULL,
        data {json} NOT NULL,
        PRIMARY KEY (trace_id, seq)
    )"""),
    _both("""CREATE TABLE releases (
        release_id TEXT PRIMARY KEY,
        created_at {ts} NOT NULL,
        catalog_path TEXT,
        catalog_blob {blob},
        catalog_sha256 TEXT,
        retrieval_policy {json} NOT NULL,
        meta {json} NOT NULL
    )"""),
    _both("""CREATE TABLE aliases (
        alias TEXT PRIMARY KEY,
        release_id TEXT NOT NULL REFERENCES releases (release_id),
        updated_at {ts} NOT NULL
    )"""),
]

# The database itself refuses UPDATE and DELETE on consents and releases (append-only, immutable).
# The hash chain is what detects tampering by someone who removes these guards.
_M002_SQLITE = []
_M002_PG = [
    """CREATE FUNCTION ummaya_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        RAISE EXCEPTION '% on % refused: the table is append-only', TG_OP, TG_TABLE_NAME;
    END $$""",
]
for _table in ("consents", "releases"):
    for _op in ("UPDATE", "DELETE"):
        _M002_SQLITE.append(
            f"CREATE TRIGGER {_table}_no_{_op.lower()} BEFORE {_op} ON {_table} "
            f"BEGIN SELECT RAISE(ABORT, '{_op} on {_table} refused: the table is append-only'); END"
        )
        _M002_PG.append(
            f"CREATE TRIGGER {_table}_no_{_op.lower()} BEFORE {_op} ON {_table} "
            f"FOR EACH ROW EXECUTE FUNCTION ummaya_refuse_change()"
        )

MIGRATIONS: list[Migration] = [
    Migration(
        "m001_initial",
        sqlite=tuple(s for s, _ in _M001),
        postgresql=tuple(p for _, p in _M001),
    ),
    Migration("m002_append_only_guards", sqlite=tuple(_M002_SQLITE), postgresql=tuple(_M002_PG)),
]

# The keyed ledger (runtime/store/ledger.py): which key signed each record, and the ledger's own
# random id, which names its signed head checkpoint outside the database. Both append-only.
_M003 = [
    _both("ALTER TABLE consents ADD COLUMN key_id TEXT"),
    _both("""CREATE TABLE ledger_meta (
        ledger_id TEXT PRIMARY KEY,
        created_at {ts} NOT NULL
    )"""),
]
_M003_SQLITE = [s for s, _ in _M003]
_M003_PG = [p for _, p in _M003]
for _op in ("UPDATE", "DELETE"):
    _M003_SQLITE.append(
        f"CREATE TRIGGER ledger_meta_no_{_op.lower()} BEFORE {_op} ON ledger_meta "
        f"BEGIN SELECT RAISE(ABORT, '{_op} on ledger_meta refused: the table is append-only'); END"
    )
    _M003_PG.append(
        f"CREATE TRIGGER ledger_meta_no_{_op.lower()} BEFORE {_op} ON ledger_meta "
        f"FOR EACH ROW EXECUTE FUNCTION ummaya_refuse_change()"
    )
MIGRATIONS.append(
    Migration("m003_keyed_consent_ledger", sqlite=tuple(_M003_SQLITE), postgresql=tuple(_M003_PG)))

# The dialogue state (runtime/dialogue/state.py) lives with its session and expires with it.
_M004 = [
    _both("ALTER TABLE sessions ADD COLUMN dialogue {json}"),
    _both("ALTER TABLE sessions ADD COLUMN dialogue_expires_at {ts}"),
    _both("CREATE INDEX sessions_by_dialogue_expiry ON sessions (dialogue_expires_at)"),
]
MIGRATIONS.append(
    Migration("m004_session_dialogue", sqlite=tuple(s for s, _ in _M004), postgresql=tuple(p for _, p in _M004)))

# Over HTTP the server issues session ids (a client-chosen id is never adopted), each bound to the
# API key that started it; a trace remembers the key that created it. Only key fingerprints are
# stored (runtime/serve/auth.py), never keys.
_M005 = [
    _both("""CREATE TABLE server_sessions (
        session_id TEXT PRIMARY KEY,
        issued_at {ts} NOT NULL,
        owner TEXT
    )"""),
    _both("ALTER TABLE traces ADD COLUMN owner TEXT"),
]
MIGRATIONS.append(Migration("m005_server_sessions_and_trace_owner",
                            sqlite=tuple(s for s, _ in _M005), postgresql=tuple(p for _, p in _M005)))

# The promotion gate (runtime/suites/): each release's evaluation figures per suite, and every
# alias move — who moved it, whether the gate was overridden (--force) and why, and the gate's
# report. Both append-only: a re-evaluation adds a row (the newest per suite counts), history is
# never rewritten.
_M006 = [
    _both("""CREATE TABLE release_evaluations (
        seq {serial},
        release_id TEXT NOT NULL REFERENCES releases (release_id),
        suite TEXT NOT NULL,
        evaluated_at {ts} NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('ok', 'missing', 'error')),
        figures {json} NOT NULL,
        cases {json} NOT NULL,
        meta {json} NOT NULL
    )"""),
    _both("CREATE INDEX release_evaluations_by_release ON release_evaluations (release_id, suite, seq)"),
    _both("""CREATE TABLE release_history (
        seq {serial},
        alias TEXT NOT NULL,
        release_id TEXT NOT NULL REFERENCES releases (release_id),
        previous_release_id TEXT,
        moved_at {ts} NOT NULL,
        actor TEXT NOT NULL,
        forced INTEGER NOT NULL DEFAULT 0,
        reason TEXT,
        report {json} NOT NULL
    )"""),
    _both("CREATE INDEX release_history_by_alias ON release_history (alias, seq)"),
]
_M006_SQLITE = [s for s, _ in _M006]
_M006_PG = [p for _, p in _M006]
for _table in ("release_evaluations", "release_history"):
    for _op in ("UPDATE", "DELETE"):
        _M006_SQLITE.append(
            f"CREATE TRIGGER {_table}_no_{_op.lower()} BEFORE {_op} ON {_table} "
            f"BEGIN SELECT RAISE(ABORT, '{_op} on {_table} refused: the table is append-only'); END"
        )
        _M006_PG.append(
            f"CREATE TRIGGER {_table}_no_{_op.lower()} BEFORE {_op} ON {_table} "
            f"FOR EACH ROW EXECUTE FUNCTION ummaya_refuse_change()"
        )
MIGRATIONS.append(Migration("m006_release_evaluations_and_history",
                            sqlite=tuple(_M006_SQLITE), postgresql=tuple(_M006_PG)))

# A consent question asked over MCP (runtime/mcp/elicitation.py): its nonce is answered once, before
# it expires, and a revocation invalidates every question still open for that adapter and session.
_M007 = [
    _both("""CREATE TABLE consent_requests (
        nonce TEXT PRIMARY KEY,
        session_id TEXT NOT NULL,
        adapter_id TEXT NOT NULL,
        issued_at {ts} NOT NULL,
        expires_at {ts} NOT NULL,
        used_at {ts}
    )"""),
    _both("CREATE INDEX consent_requests_open ON consent_requests (adapter_id, session_id)"),
]
MIGRATIONS.append(Migration("m007_consent_requests",
                            sqlite=tuple(s for s, _ in _M007), postgresql=tuple(p for _, p in _M007)))

# Key of the PostgreSQL advisory lock that serializes migrations across processes.
MIGRATION_LOCK_KEY = 0x756D6D6179610001  # "ummaya" + 1
# Key of the advisory lock that serializes appends to the consent hash chain.
CONSENT_CHAIN_LOCK_KEY = 0x756D6D6179610002

__all__ = ["Migration", "MIGRATIONS", "MIGRATION_LOCK_KEY", "CONSENT_CHAIN_LOCK_KEY"]
