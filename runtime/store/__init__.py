"""Storage: sessions, consents, traces and releases behind one interface, two backends.

``open_store(url)`` picks the backend: None → ``UMMAYA_DATABASE_URL`` if set, else SQLite at
``state_dir()/ummaya.sqlite3``; ``sqlite:///path`` (or a bare file path) → SQLite with WAL;
``postgresql://…`` → PostgreSQL through psycopg 3. Migrations are applied on open.
"""

from __future__ import annotations

import os

from .sql import SQLStore, Store, apply_retention
from .migrations import MIGRATIONS
from .records import (
    GENESIS_HASH,
    AliasMove,
    TRACE_STATES,
    ChainReport,
    ConsentRecord,
    InvalidTransition,
    LedgerBroken,
    Release,
    ReleaseConflict,
    ReleaseEvaluation,
    RetentionPolicy,
    Session,
    StoreError,
    StoreFault,
    Trace,
    UnknownConsent,
    UnknownRelease,
    UnknownTrace,
    new_trace_id,
)
from ummaya.wire.redact import redact, redact_value

DEFAULT_FILENAME = "ummaya.sqlite3"


def default_url() -> str:
    env = os.environ.get("UMMAYA_DATABASE_URL")
    if env:
        return env
    from ummaya.paths import state_dir

    return f"sqlite:///{state_dir() / DEFAULT_FILENAME}"


def sqlite_path(url: str) -> str:
    """``sqlite:///abs/path`` → ``/abs/path``; ``sqlite:///:memory:`` / ``sqlite://`` → memory;
    anything without a scheme is a file path."""
    if not url.startswith("sqlite:"):
        return url
    rest = url[len("sqlite:"):]
    if rest.startswith("//"):
        rest = rest[2:]
    if rest in ("", "/:memory:", ":memory:"):
        return ":memory:"
    if rest.startswith("//"):  # sqlite:////abs/path (the SQLAlchemy spelling) is /abs/path too
        rest = "/" + rest.lstrip("/")
    return rest


def open_store(url: str | None = None, *, policy: RetentionPolicy | None = None,
               migrate: bool = True) -> Store:
    url = url or default_url()
    if url.startswith(("postgresql://", "postgres://")):
        from .postgres import PostgresStore

        store: Store = PostgresStore(url, policy)
    elif url.startswith("sqlite:") or "://" not in url:
        from .sqlite import SQLiteStore

        path = sqlite_path(url)
        store = SQLiteStore(path, policy, url=url if url.startswith("sqlite:") else None)
    else:
        raise ValueError(f"unsupported database URL {url!r} (sqlite:///path or postgresql://…)")
    if migrate:
        try:
            store.migrate()
        except BaseException:
            store.close()
            raise
    return store


__all__ = [
    "open_store", "default_url", "sqlite_path", "Store", "SQLStore", "apply_retention",
    "MIGRATIONS", "GENESIS_HASH", "TRACE_STATES", "ChainReport", "ConsentRecord",
    "AliasMove", "InvalidTransition", "LedgerBroken", "Release", "ReleaseConflict", "ReleaseEvaluation", "RetentionPolicy", "Session", "StoreError",
    "StoreFault",
    "Trace", "UnknownConsent", "UnknownRelease", "UnknownTrace", "new_trace_id", "redact",
    "redact_value",
]
