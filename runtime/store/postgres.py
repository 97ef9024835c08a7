"""PostgreSQL backend (psycopg 3): for several server replicas sharing one database.

Cross-process safety comes from transaction-scoped advisory locks: one key serializes migrations
(two replicas starting at once), another serializes appends to the consent hash chain (so the
chain never forks). Everything else relies on ordinary row-level concurrency.
"""

from __future__ import annotations

import os
import queue
import re
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any, TypeAlias

import psycopg
from psycopg.rows import DictRow, dict_row
from psycopg.types.json import Jsonb

from .sql import SQLStore, Tx
from .records import RetentionPolicy, StoreFault, as_utc, json_dumps

# Every connection reads rows as dicts (row_factory=dict_row), as the SQL layer expects.
_Conn: TypeAlias = psycopg.Connection[DictRow]

_PLACEHOLDER = re.compile(r"\?")


class PostgresStore(SQLStore):
    dialect = "postgresql"
    for_update = " FOR UPDATE"

    def __init__(self, url: str, policy: RetentionPolicy | None = None, *,
                 connect_timeout: float = 10.0, pool_size: int | None = None):
        super().__init__(url, policy)
        self._connect_timeout = int(connect_timeout)
        self._sql_cache: dict[str, str] = {}
        # A small pool: threads of one server process run their transactions side by side.
        self.pool_size = max(1, pool_size or int(os.environ.get("UMMAYA_DB_POOL_SIZE", "4")))
        self._slots = threading.BoundedSemaphore(self.pool_size)
        self._idle: queue.LifoQueue[_Conn] = queue.LifoQueue()
        self._all: list[_Conn] = []
        self._closed = False
        self._give_back(self._connect(), acquired=False)  # fail fast on a bad URL

    def _connect(self) -> _Conn:
        conn = psycopg.connect(self.url, autocommit=True, row_factory=dict_row,
                               connect_timeout=self._connect_timeout)
        conn.execute("SET TIME ZONE 'UTC'")
        with self._lock:
            self._all.append(conn)
        return conn

    def _take(self) -> _Conn:
        if self._closed:
            raise psycopg.OperationalError("store is closed")
        self._slots.acquire()
        try:
            try:
                conn = self._idle.get_nowait()
            except queue.Empty:
                return self._connect()
            if conn.broken or conn.closed:  # the server restarted or the network dropped
                self._discard(conn)
                return self._connect()
            return conn
        except BaseException:
            self._slots.release()
            raise

    def _give_back(self, conn: _Conn, *, acquired: bool = True) -> None:
        if self._closed or conn.broken or conn.closed:
            self._discard(conn)
        else:
            self._idle.put(conn)
        if acquired:
            self._slots.release()

    def _discard(self, conn: _Conn) -> None:
        with self._lock:
            if conn in self._all:
                self._all.remove(conn)
        try:
            conn.close()
        except Exception:
            pass

    def close(self) -> None:
        self._closed = True
        with self._lock:
            conns, self._all = list(self._all), []
        for conn in conns:
            try:
                conn.close()
            except Exception:
                pass

    @contextmanager
    def _transaction(self, write: bool) -> Iterator[Any]:
        conn = self._take()
        try:
            with conn.transaction(), conn.cursor() as cur:
                yield cur
        finally:
            self._give_back(conn)

    def _fault(self, exc: BaseException) -> StoreFault | None:
        if not isinstance(exc, psycopg.Error) or isinstance(exc, (psycopg.IntegrityError, psycopg.ProgrammingError,
                                                                  psycopg.DataError)):
            return None
        state = getattr(getattr(exc, "diag", None), "sqlstate", None) or getattr(exc, "sqlstate", None) or ""
        if state in ("53100", "53200"):  # disk_full, out_of_memory
            return StoreFault("store_full", "the database has no space left for this write")
        if state in ("53300", "55P03", "40P01", "40001", "57014"):  # too many connections, locks, timeouts
            return StoreFault("store_busy", "the database is busy; try again shortly")
        if isinstance(exc, psycopg.OperationalError) or state.startswith(("08", "57P")):
            return StoreFault("store_unavailable", f"the database cannot be reached ({type(exc).__name__})")
        return None

    def _execute(self, cursor: Any, sql: str, params: Sequence[Any]) -> list[dict[str, Any]]:
        if not params:  # DDL and constant queries go as they are ('%' in plpgsql is fine)
            cursor.execute(sql)
        else:
            cursor.execute(self._pg_sql(sql), tuple(params))
        if cursor.description is None:
            return []
        return list(cursor.fetchall())

    def _executemany(self, cursor: Any, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        cursor.executemany(self._pg_sql(sql), [tuple(r) for r in rows])  # pipelined by psycopg

    def _pg_sql(self, sql: str) -> str:
        pg = self._sql_cache.get(sql)
        if pg is None:
            # Shared SQL never holds a literal '?' or '%' outside placeholders.
            if "%" in sql:
                raise ValueError("'%' in shared SQL would be read as a placeholder")
            pg = self._sql_cache[sql] = _PLACEHOLDER.sub("%s", sql)
        return pg

    def _advisory_lock(self, tx: Tx, key: int) -> None:
        tx.q("SELECT pg_advisory_xact_lock(?)", (key,))

    def _has_table(self, tx: Tx, name: str) -> bool:
        return bool(tx.q("SELECT to_regclass(?) AS t", (name,))[0]["t"])

    def _ts_in(self, value: datetime) -> datetime:
        return as_utc(value)

    def _ts_out(self, value: Any) -> datetime:
        return as_utc(value)

    def _json_in(self, value: Any) -> Jsonb:
        return Jsonb(value, dumps=json_dumps)

    def _json_out(self, value: Any) -> Any:
        return value
