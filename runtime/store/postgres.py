"""PostgreSQL backend (psycopg 3): for several server replicas sharing one database.

Cross-process safety comes from transaction-scoped advisory locks: one key serializes migrations
(two replicas starting at once), another serializes appends to the consent hash chain (so the
chain never forks). Everything else relies on ordinary row-level concurrency.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any

import psycopg
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from .base import SQLStore, Tx
from .models import RetentionPolicy, as_utc, json_dumps

_PLACEHOLDER = re.compile(r"\?")


class PostgresStore(SQLStore):
    dialect = "postgresql"
    for_update = " FOR UPDATE"

    def __init__(self, url: str, policy: RetentionPolicy | None = None, *,
                 connect_timeout: float = 10.0):
        super().__init__(url, policy)
        self._connect_timeout = int(connect_timeout)
        self._sql_cache: dict[str, str] = {}
        self._conn = self._connect()

    def _connect(self) -> psycopg.Connection:
        conn = psycopg.connect(self.url, autocommit=True, row_factory=dict_row,
                               connect_timeout=self._connect_timeout)
        conn.execute("SET TIME ZONE 'UTC'")
        return conn

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    @contextmanager
    def _transaction(self, write: bool) -> Iterator[Any]:
        if self._conn.broken:  # the server restarted or the network dropped: start over
            self._conn.close()
            self._conn = self._connect()
        with self._conn.transaction(), self._conn.cursor() as cur:
            yield cur

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
