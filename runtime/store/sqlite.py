"""SQLite backend: the embedded default (one file, WAL, safe across processes on one machine)."""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

from .sql import SQLStore, Tx
from .records import RetentionPolicy, StoreFault, iso, json_dumps, parse_iso

BUSY_TIMEOUT_ENV = "UMMAYA_DB_BUSY_TIMEOUT_MS"


def _busy_timeout_ms() -> int:
    """How long a write waits for another connection's lock (default 30 s) before store_busy."""
    try:
        return max(1, int(os.environ.get(BUSY_TIMEOUT_ENV) or 30000))
    except ValueError:
        return 30000


class SQLiteStore(SQLStore):
    dialect = "sqlite"

    def __init__(self, path: str | Path, policy: RetentionPolicy | None = None, *,
                 url: str | None = None):
        self.path = str(path)
        super().__init__(url or f"sqlite:///{self.path}", policy)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            # A new database file is the owner's only (0600): it holds session ids, which are
            # bearer tokens, and SQLite gives its -wal/-shm files the same permissions.
            with contextlib.suppress(FileExistsError):
                os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        # isolation_level=None: we issue BEGIN/COMMIT ourselves (BEGIN IMMEDIATE for writes, so
        # two processes never both read the chain head and then both append).
        self._conn = self._connect()
        if self.path != ":memory:":
            self._enable_wal()
        self._conn.execute("PRAGMA synchronous = NORMAL")
        # The trace writer's own connection (opened on its first batch, in the writer's thread):
        # WAL lets the main connection read sessions while a batch of traces is being written.
        self._trace_conn: sqlite3.Connection | None = None
        self._trace_lock = threading.Lock()
        self._local = threading.local()

    def _connect(self) -> sqlite3.Connection:
        busy_ms = _busy_timeout_ms()
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False,
                               timeout=busy_ms / 1000)
        conn.row_factory = sqlite3.Row
        conn.execute(f"PRAGMA busy_timeout = {busy_ms}")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        return conn

    @contextmanager
    def trace_tx(self) -> Iterator[Tx]:
        if self.path == ":memory:":  # one in-memory database per connection: share the main one
            with self.tx() as tx:
                yield tx
            return
        self._local.trace = True
        try:
            with self.tx() as tx:
                yield tx
        finally:
            self._local.trace = False

    def _enable_wal(self, wait: float = 30.0) -> None:
        """Switch to WAL. Switching needs the file to itself and SQLite does not apply the busy
        timeout to it, so processes opening a new file together retry here."""
        deadline = time.monotonic() + wait
        delay = 0.005
        while True:
            try:
                mode = self._conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
                if mode.lower() == "wal":
                    return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) and "busy" not in str(exc):
                    raise
            if time.monotonic() > deadline:
                raise sqlite3.OperationalError(f"{self.path}: could not switch to WAL (locked)")
            time.sleep(delay)
            delay = min(delay * 2, 0.2)

    def close(self) -> None:
        with self._trace_lock:
            if self._trace_conn is not None:
                self._trace_conn.close()
                self._trace_conn = None
        with self._lock:
            self._conn.close()

    def _fault(self, exc: BaseException) -> StoreFault | None:
        if not isinstance(exc, sqlite3.Error) or isinstance(exc, (sqlite3.IntegrityError, sqlite3.ProgrammingError,
                                                                  sqlite3.InterfaceError)):
            return None
        text = str(exc).lower()
        if "full" in text:  # SQLITE_FULL: "database or disk is full"
            return StoreFault("store_full", "the database has no space left for this write")
        if "locked" in text or "busy" in text:
            return StoreFault("store_busy", "the database is locked by other work; try again shortly")
        if isinstance(exc, (sqlite3.OperationalError, sqlite3.DatabaseError)):
            return StoreFault("store_unavailable", f"the database cannot be used ({type(exc).__name__})")
        return None

    @contextmanager
    def _transaction(self, write: bool) -> Iterator[Any]:
        # One connection, one transaction at a time: threads take turns (SQLite has one writer
        # per file anyway; WAL lets other processes read meanwhile). Trace batches (trace_tx) use
        # the writer's own connection, so they never hold this one's lock.
        lock: contextlib.AbstractContextManager[bool]  # the writer's Lock or the store's RLock
        if getattr(self._local, "trace", False):
            lock = self._trace_lock
            with lock:
                if self._trace_conn is None:
                    self._trace_conn = self._connect()
                conn = self._trace_conn
        else:
            lock, conn = self._lock, self._conn
        with lock:
            cur = conn.cursor()
            cur.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            try:
                yield cur
            except BaseException:
                cur.execute("ROLLBACK")
                raise
            else:
                cur.execute("COMMIT")
            finally:
                cur.close()

    def _execute(self, cursor: Any, sql: str, params: Sequence[Any]) -> list[dict[str, Any]]:
        cursor.execute(sql, tuple(params))
        if cursor.description is None:
            return []
        return [dict(r) for r in cursor.fetchall()]

    def _executemany(self, cursor: Any, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        cursor.executemany(sql, [tuple(r) for r in rows])

    def _advisory_lock(self, tx: Tx, key: int) -> None:
        pass  # BEGIN IMMEDIATE already holds the database's single write lock

    def _has_table(self, tx: Tx, name: str) -> bool:
        return bool(tx.q("SELECT 1 AS x FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)))

    def _ts_in(self, value: datetime) -> str:
        return iso(value)

    def _ts_out(self, value: Any) -> datetime:
        return parse_iso(value)

    def _json_in(self, value: Any) -> str:
        return json_dumps(value)

    def _json_out(self, value: Any) -> Any:
        return json.loads(value)
