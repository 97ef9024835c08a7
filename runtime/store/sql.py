"""The one storage interface (``Store``) and the SQL both backends share (``SQLStore``).

SQL is written once with ``?`` placeholders; the PostgreSQL backend rewrites them to ``%s``.
The backends differ only in how they connect, open a transaction, take a cross-process lock,
and convert timestamps / JSON / blobs to and from their column types.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import logging
import secrets
import threading
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any

from .migrations import CONSENT_CHAIN_LOCK_KEY, MIGRATION_LOCK_KEY, MIGRATIONS
from .records import (
    GENESIS_HASH,
    TERMINAL_STATES,
    TRACE_STATES,
    ChainReport,
    ConsentRecord,
    InvalidTransition,
    LedgerBroken,
    AliasMove,
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
    as_utc,
    canonical_json,
    iso,
    new_id,
    parse_iso,
    utcnow,
)
from .chain import ChainState, LedgerChecks
from .ledger import HeadFile, Keyring, check_head
from ummaya.wire.credentials import env_secrets, strip_credentials, strip_credentials_value
from ummaya.wire.redact import redact, redact_value
from .retention import Masker, PersonalValue

log = logging.getLogger("ummaya.store")

# Keys whose string values are the citizen's or the answer's raw text: dropped entirely (not just
# redacted) inside events and meta when the policy keeps no raw text.
RAW_TEXT_KEYS = frozenset({"request", "query", "text", "answer", "request_text", "answer_text"})


def _drop_raw_text(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: (None if k in RAW_TEXT_KEYS and isinstance(v, str) else _drop_raw_text(v))
                for k, v in value.items()}
    if isinstance(value, list):
        return [_drop_raw_text(v) for v in value]
    return value


def _redact_urls(value: Any) -> Any:
    """Redact (URL-decoded, see redact.find_personal) every string under a key naming a URL."""
    if isinstance(value, dict):
        return {k: (redact(v) if isinstance(v, str) and (k == "url" or k.endswith("_url")) else _redact_urls(v))
                for k, v in value.items()}
    if isinstance(value, list):
        return [_redact_urls(v) for v in value]
    return value


_SURROGATE = re.compile("[\ud800-\udfff]")


def escape_surrogates(value: Any) -> Any:
    """Lone surrogates (``"\\ud800"`` in a JSON request: valid JSON, not encodable text) written
    out as their escape, so every trace can be stored whatever its text; keys too."""
    if isinstance(value, str):
        return _SURROGATE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", value) if _SURROGATE.search(value) else value
    if isinstance(value, dict):
        return {escape_surrogates(k): escape_surrogates(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [escape_surrogates(v) for v in value]
    return value


class _Keeper:
    """What a stored trace keeps of one value: ``escape_surrogates(strip_credentials_value(
    redact_value(v, keys=True)))`` when ``redact`` (else without the redact_value), in one walk.
    A trace repeats most of its strings (field names, adapter ids, the evidence in both its events
    and its calls), so each distinct string is cleaned once per trace (``_memo``; the memo lives as
    long as the trace being staged). A dict whose cleaned keys collide (two keys redacted to one
    placeholder) is cleaned the three-pass way, so the result is that of the three passes always."""

    def __init__(self, secrets: list[str]):
        self.secrets = secrets
        self._memo: tuple[dict[str, str], dict[str, str]] = ({}, {})  # [redact] -> str -> kept
        self._keys: tuple[dict[str, str], dict[str, str]] = ({}, {})  # keys: redacted, never stripped

    def key(self, k: Any, redact_it: bool) -> Any:
        if not isinstance(k, str):
            return k
        memo = self._keys[redact_it]
        kept = memo.get(k)
        if kept is None:
            kept = escape_surrogates(redact(k) if redact_it else k)
            memo[k] = kept
        return kept

    def string(self, s: str, redact_it: bool) -> str:
        memo = self._memo[redact_it]
        kept = memo.get(s)
        if kept is None:
            kept = escape_surrogates(strip_credentials(redact(s) if redact_it else s, self.secrets))
            memo[s] = kept
        return kept

    def text(self, s: str | None, redact_it: bool) -> str | None:
        if s is None:
            return None
        t = redact(s) if redact_it else s
        return escape_surrogates(strip_credentials(t, self.secrets) if t else t)

    def value(self, v: Any, redact_it: bool) -> Any:
        if isinstance(v, str):
            return self.string(v, redact_it)
        if isinstance(v, dict):
            out = {self.key(k, redact_it): self.value(x, redact_it) for k, x in v.items()}
            if len(out) != len(v):  # cleaned keys collided: the three passes' own order of wins
                return escape_surrogates(strip_credentials_value(
                    redact_value(v, keys=True) if redact_it else v, self.secrets))
            return out
        if isinstance(v, (list, tuple)):
            return [self.value(x, redact_it) for x in v]
        if redact_it and isinstance(v, int) and not isinstance(v, bool):
            r = redact_value(v)  # a 주민등록번호 or card number sent as a JSON number
            return self.string(r, False) if isinstance(r, str) else r
        return v

    def event(self, e: dict[str, Any], redact_it: bool) -> dict[str, Any]:
        """One stored event: its data cleaned as ``value`` (redacted when ``redact_it``), its other
        fields (type, stage …) only stripped of credentials and escaped, as the passes did."""
        e = {**e, "data": e.get("data", {})}
        out = {self.key(k, False): self.value(x, redact_it and k == "data") for k, x in e.items()}
        if len(out) != len(e):
            return escape_surrogates({k: strip_credentials_value(
                redact_value(x, keys=True) if k == "data" and redact_it else x, self.secrets) for k, x in e.items()})
        return out


def apply_retention(trace: Trace, policy: RetentionPolicy, personal: Sequence[PersonalValue] = ()) -> Trace:
    """A copy of ``trace`` as the policy allows it to be kept. Identity fields (trace_id, release,
    session, stop_reason, state, timings, timestamps) are never touched.

    ``personal``: the turn's personal values (retention.py). Whatever the policy, each is masked
    wherever it occurs — the consent notice promised it — and under ``none`` its keyed fields lose
    their value; a value whose field says ``x-trace: none`` leaves no raw text in the trace at all."""
    masker = Masker(personal)
    mode = policy.raw_text
    if masker.none:
        mode = "none"  # text built from such a value cannot be masked by it: none is kept
    events = [_event_dict(e) for e in trace.events]
    if personal:
        drop = mode == "none"
        trace = Trace(**{**trace.__dict__, "request_text": masker.text(trace.request_text),
                         "answer_text": masker.text(trace.answer_text), "calls": masker.value(trace.calls, drop=drop),
                         "meta": masker.value(trace.meta, drop=drop)})
        events = [{**e, "data": masker.value(e.get("data", {}), drop=drop)} for e in events]
    # Whatever the policy, no credential is stored (an error message may quote a request), and
    # lone surrogates are escaped: one walk (_Keeper) does what redact_value, then
    # strip_credentials_value, then escape_surrogates did in three, once per distinct string.
    keep = _Keeper(env_secrets())
    if mode == "full":
        # "full" keeps the citizen's words for debugging; upstream URLs are not their words and
        # are redacted whatever the policy (they carry the same data, percent-encoded).
        req, ans = keep.text(trace.request_text, False), keep.text(trace.answer_text, False)
        events = [keep.event({**e, "data": _redact_urls(e.get("data", {}))}, False) for e in events]
        calls, meta = keep.value(_redact_urls(trace.calls), False), keep.value(_redact_urls(trace.meta), False)
    elif mode == "redacted":
        req, ans = keep.text(trace.request_text, True), keep.text(trace.answer_text, True)
        events = [keep.event(e, True) for e in events]
        calls, meta = keep.value(trace.calls, True), keep.value(trace.meta, True)
    else:  # none
        req = ans = None
        events = [keep.event({**e, "data": _drop_raw_text(e.get("data", {}))}, True) for e in events]
        calls, meta = keep.value(_drop_raw_text(trace.calls), True), keep.value(_drop_raw_text(trace.meta), True)
    return Trace(
        trace_id=trace.trace_id, created_at=trace.created_at, expires_at=trace.expires_at,
        release_id=trace.release_id, release_alias=trace.release_alias,
        session_id=escape_surrogates(trace.session_id), stop_reason=trace.stop_reason, state=trace.state,
        states=list(trace.states), timings=dict(trace.timings), request_text=req, answer_text=ans,
        text_policy=mode, events=events, calls=list(calls), meta=dict(meta),
        updated_at=trace.updated_at, owner=trace.owner,
    )


def _event_dict(event: Any) -> dict[str, Any]:
    """Every stored event is an ``ummaya.runtime.events.Event`` (validated), kept as its JSON."""
    from ummaya.runtime.events import Event

    if not isinstance(event, Event):
        event = Event.model_validate(event)
    return event.model_dump(mode="json")


def _norm_at(value: Any) -> Any:
    """Timeline stamps in one fixed-width UTC form, whatever the caller wrote."""
    try:
        if isinstance(value, datetime):
            return iso(value)
        if isinstance(value, str):
            return iso(parse_iso(value))
    except ValueError:
        pass
    return value


def _check_timeline(states: Sequence[dict[str, Any]]) -> None:
    rank = -1
    for i, entry in enumerate(states):
        name = entry.get("state")
        if name not in TRACE_STATES:
            raise InvalidTransition(f"unknown trace state {name!r}")
        r = TRACE_STATES.index(name)
        if i > 0 and states[i - 1]["state"] in TERMINAL_STATES:
            raise InvalidTransition(f"{name!r} after terminal state {states[i - 1]['state']!r}")
        if name == "failed":
            r = len(TRACE_STATES)  # failed may follow any non-terminal state
        elif r <= rank:
            raise InvalidTransition(f"{name!r} cannot follow {states[i - 1]['state']!r}")
        rank = r


class Store(ABC):
    """Sessions, consents (append-only, hash-chained), traces (redacted, expiring) and releases."""

    url: str
    dialect: str  # "sqlite" | "postgresql"
    policy: RetentionPolicy

    # -- lifecycle
    @abstractmethod
    def migrate(self) -> list[str]:
        """Apply pending migrations; return the names applied by this call."""

    @abstractmethod
    def applied_migrations(self) -> list[str]: ...

    @abstractmethod
    def close(self) -> None: ...

    @abstractmethod
    def ping(self) -> bool:
        """True when the database answers and the schema is current (for /readyz)."""

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- sessions
    @abstractmethod
    def get_session(self, session_id: str) -> Session | None: ...

    @abstractmethod
    def put_session(self, session: Session) -> Session: ...

    # -- consents
    @abstractmethod
    def grant_consent(self, session_id: str, adapter_id: str, *, purpose: str,
                      data_items: Sequence[str], retention: str, refusal: str,
                      now: datetime | None = None) -> ConsentRecord: ...

    @abstractmethod
    def revoke_consent(self, consent_id: str | None = None, *, session_id: str | None = None,
                       adapter_id: str | None = None,
                       now: datetime | None = None) -> list[ConsentRecord]: ...

    @abstractmethod
    def active_consent(self, session_id: str, adapter_id: str) -> ConsentRecord | None: ...

    def has_consent(self, session_id: str, adapter_id: str) -> bool:
        return self.active_consent(session_id, adapter_id) is not None

    @abstractmethod
    def list_consents(self, session_id: str | None = None) -> list[ConsentRecord]: ...

    @abstractmethod
    def verify(self) -> ChainReport: ...

    # -- traces
    @abstractmethod
    def put_trace(self, trace: Trace, policy: RetentionPolicy | None = None, *,
                  personal: Sequence[Any] = ()) -> Trace | None: ...

    @abstractmethod
    def advance_state(self, trace_id: str, state: str, at: datetime | None = None) -> Trace: ...

    @abstractmethod
    def add_events(self, trace_id: str, events: Iterable[Any]) -> int: ...

    @abstractmethod
    def get_trace(self, trace_id: str, *, include_expired: bool = False) -> Trace | None: ...

    @abstractmethod
    def list_traces(self, *, limit: int = 20, session_id: str | None = None,
                    include_expired: bool = False) -> list[Trace]: ...

    @abstractmethod
    def purge_expired(self, now: datetime | None = None) -> int: ...

    # -- releases
    @abstractmethod
    def publish_release(self, release_id: str, *, retrieval_policy: dict[str, Any],
                        catalog_path: str | None = None, catalog_blob: bytes | None = None,
                        meta: dict[str, Any] | None = None,
                        now: datetime | None = None) -> Release: ...

    @abstractmethod
    def list_releases(self) -> list[Release]: ...

    @abstractmethod
    def release_catalog(self, release_id: str) -> bytes | None: ...

    @abstractmethod
    def promote(self, alias: str, release_id: str, now: datetime | None = None, *,
                actor: str = "system", forced: bool = False, reason: str | None = None,
                report: dict[str, Any] | None = None) -> AliasMove: ...

    @abstractmethod
    def add_release_evaluation(self, release_id: str, suite: str, *, status: str,
                               figures: dict[str, Any], cases: dict[str, Any],
                               meta: dict[str, Any] | None = None,
                               now: datetime | None = None) -> ReleaseEvaluation: ...

    @abstractmethod
    def release_evaluations(self, release_id: str) -> dict[str, ReleaseEvaluation]: ...

    @abstractmethod
    def alias_history(self, alias: str | None = None) -> list[AliasMove]: ...

    @abstractmethod
    def aliases(self) -> dict[str, str]: ...

    @abstractmethod
    def resolve(self, alias_or_id: str) -> Release | None: ...


class Tx:
    """One open transaction: ``q(sql, params) -> list[dict]`` with ``?`` placeholders."""

    def __init__(self, store: "SQLStore", cursor: Any):
        self.store = store
        self.cursor = cursor

    def q(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        return self.store._execute(self.cursor, sql, params)

    def many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        if rows:
            self.store._executemany(self.cursor, sql, rows)


class SQLStore(LedgerChecks, Store):
    """Everything both backends share; subclasses supply the connection and type conversions.
    Ledger verification and the gate's consent decision: chain.py (``LedgerChecks``)."""

    for_update = ""  # " FOR UPDATE" where row locks exist

    def __init__(self, url: str, policy: RetentionPolicy | None = None):
        self.url = url
        self.policy = policy or RetentionPolicy.from_env()
        self._lock = threading.RLock()
        self._keys: Keyring | None = None
        self._heads: HeadFile | None = None
        self._init_chain()

    # ---- backend hooks
    @abstractmethod
    def _transaction(self, write: bool) -> Any:
        """Context manager: open a transaction, yield a cursor, commit or roll back."""

    @abstractmethod
    def _execute(self, cursor: Any, sql: str, params: Sequence[Any]) -> list[dict[str, Any]]: ...

    @abstractmethod
    def _executemany(self, cursor: Any, sql: str, rows: Sequence[Sequence[Any]]) -> None: ...

    @abstractmethod
    def _advisory_lock(self, tx: Tx, key: int) -> None:
        """Serialize with other processes until the transaction ends."""

    @abstractmethod
    def _ts_in(self, value: datetime) -> Any: ...

    @abstractmethod
    def _ts_out(self, value: Any) -> datetime: ...

    @abstractmethod
    def _json_in(self, value: Any) -> Any: ...

    @abstractmethod
    def _json_out(self, value: Any) -> Any: ...

    @abstractmethod
    def _has_table(self, tx: Tx, name: str) -> bool: ...

    @abstractmethod
    def _fault(self, exc: BaseException) -> StoreFault | None:
        """The stable fault a backend exception stands for, or None when it is not one."""

    @contextmanager
    def tx(self, write: bool = True) -> Iterator[Tx]:
        """One transaction. A database failure (full, locked, unreachable) leaves as a
        ``StoreFault`` with its stable code; anything else (a constraint, our own errors) as is."""
        try:
            with self._transaction(write) as cursor:  # backends serialize threads as they need
                yield Tx(self, cursor)
        except StoreError:
            raise
        except Exception as exc:
            fault = self._fault(exc)
            if fault is None:
                raise
            raise fault from exc

    # ---- migrations
    def migrate(self) -> list[str]:
        applied_now: list[str] = []
        with self.tx() as tx:
            self._advisory_lock(tx, MIGRATION_LOCK_KEY)
            tx.q("CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
            done = {r["name"] for r in tx.q("SELECT name FROM _migrations")}
            for migration in MIGRATIONS:
                if migration.name in done:
                    continue
                for statement in migration.statements(self.dialect):
                    tx.q(statement)
                tx.q("INSERT INTO _migrations (name, applied_at) VALUES (?, ?)",
                     (migration.name, iso(utcnow())))
                applied_now.append(migration.name)
        return applied_now

    def applied_migrations(self) -> list[str]:
        with self.tx(write=False) as tx:
            if not self._has_table(tx, "_migrations"):
                return []
            rows = tx.q("SELECT name FROM _migrations ORDER BY name")
        return [r["name"] for r in rows]

    def ping(self) -> bool:
        try:
            return self.applied_migrations() == sorted(m.name for m in MIGRATIONS)
        except Exception:
            return False

    # ---- sessions
    def _session(self, row: dict[str, Any]) -> Session:
        dialogue = row.get("dialogue")
        expires = row.get("dialogue_expires_at")
        return Session(session_id=row["session_id"], slots=self._json_out(row["slots"]),
                       turns=row["turns"], created_at=self._ts_out(row["created_at"]),
                       updated_at=self._ts_out(row["updated_at"]),
                       dialogue=self._json_out(dialogue) if dialogue is not None else None,
                       dialogue_expires_at=self._ts_out(expires) if expires is not None else None)

    def get_session(self, session_id: str) -> Session | None:
        with self.tx(write=False) as tx:
            rows = tx.q("SELECT * FROM sessions WHERE session_id = ?", (session_id,))
        return self._session(rows[0]) if rows else None

    def put_session(self, session: Session) -> Session:
        now = utcnow()
        created = session.created_at or now
        dialogue = self._json_in(session.dialogue) if session.dialogue is not None else None
        expires = self._ts_in(as_utc(session.dialogue_expires_at)) if session.dialogue_expires_at else None
        with self.tx() as tx:
            rows = tx.q(
                "INSERT INTO sessions (session_id, created_at, updated_at, slots, turns, dialogue, "
                "dialogue_expires_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (session_id) DO UPDATE SET "
                "updated_at = excluded.updated_at, slots = excluded.slots, turns = excluded.turns, "
                "dialogue = excluded.dialogue, dialogue_expires_at = excluded.dialogue_expires_at "
                "RETURNING *",
                (session.session_id, self._ts_in(created), self._ts_in(now),
                 self._json_in(session.slots), int(session.turns), dialogue, expires),
            )
        return self._session(rows[0])

    # ---- sessions the server issued (HTTP): 192 random bits, bound to the API key that asked
    def issue_session(self, owner: str | None, now: datetime | None = None) -> str:
        session_id = secrets.token_urlsafe(24)
        with self.tx() as tx:
            tx.q("INSERT INTO server_sessions (session_id, issued_at, owner) VALUES (?, ?, ?)",
                 (session_id, self._ts_in(as_utc(now or utcnow())), owner))
        return session_id

    def issued_session(self, session_id: str, owner: str | None, *, idle: timedelta | None = None,
                       now: datetime | None = None) -> bool:
        """True only for an id this server issued, asked for with the same API key (or, with keys
        off, one issued while keys were off), and — given ``idle`` — used (issued, or a turn
        saved) within that long."""
        with self.tx(write=False) as tx:
            rows = tx.q("SELECT i.owner, i.issued_at, s.updated_at FROM server_sessions i "
                        "LEFT JOIN sessions s ON s.session_id = i.session_id "
                        "WHERE i.session_id = ?", (session_id,))
        if not rows or not hmac.compare_digest(rows[0]["owner"] or "", owner or ""):
            return False
        if idle is not None:
            last = self._ts_out(rows[0]["issued_at"])
            if rows[0]["updated_at"] is not None:
                last = max(last, self._ts_out(rows[0]["updated_at"]))
            if as_utc(now or utcnow()) - last > idle:
                return False
        return True

    def purge_issued_sessions(self, idle: timedelta, now: datetime | None = None) -> int:
        """Forget issued session ids unused for longer than ``idle`` (their turns' data stays)."""
        cutoff = self._ts_in(as_utc(now or utcnow()) - idle)
        with self.tx() as tx:
            rows = tx.q("DELETE FROM server_sessions WHERE issued_at < ? AND NOT EXISTS ("
                        "SELECT 1 FROM sessions s WHERE s.session_id = server_sessions.session_id "
                        "AND s.updated_at >= ?) RETURNING session_id", (cutoff, cutoff))
        return len(rows)

    # ---- consent questions (MCP requestState): single use, expiring, closed by a revocation
    def open_consent_request(self, session_id: str, adapter_id: str, expires_at: datetime,
                             now: datetime | None = None) -> str:
        """A new question's nonce (128 random bits), answerable once until ``expires_at``."""
        nonce = secrets.token_urlsafe(16)
        with self.tx() as tx:
            tx.q("INSERT INTO consent_requests (nonce, session_id, adapter_id, issued_at, expires_at) "
                 "VALUES (?, ?, ?, ?, ?)", (nonce, session_id, adapter_id,
                                           self._ts_in(as_utc(now or utcnow())), self._ts_in(as_utc(expires_at))))
            # Expired questions are of no use to anyone: forget them as new ones are asked.
            tx.q("DELETE FROM consent_requests WHERE expires_at <= ?", (self._ts_in(as_utc(now or utcnow())),))
        return nonce

    def use_consent_request(self, nonce: str, session_id: str, adapter_id: str,
                            now: datetime | None = None) -> bool:
        """Consume a question's nonce: True once, for the session and adapter it was asked for,
        before it expired and before any revocation closed it; False ever after."""
        at = self._ts_in(as_utc(now or utcnow()))
        with self.tx() as tx:
            rows = tx.q("UPDATE consent_requests SET used_at = ? WHERE nonce = ? AND session_id = ? "
                        "AND adapter_id = ? AND used_at IS NULL AND expires_at > ? RETURNING nonce",
                        (at, nonce, session_id, adapter_id, at))
        return bool(rows)

    def _close_consent_requests(self, tx: Tx, session_id: str, adapter_id: str, at: datetime) -> None:
        if session_id == "*":
            tx.q("UPDATE consent_requests SET used_at = ? WHERE used_at IS NULL AND adapter_id = ?",
                 (self._ts_in(at), adapter_id))
        else:
            tx.q("UPDATE consent_requests SET used_at = ? WHERE used_at IS NULL AND adapter_id = ? "
                 "AND session_id = ?", (self._ts_in(at), adapter_id, session_id))

    # ---- consents
    def _consent(self, row: dict[str, Any]) -> ConsentRecord:
        return ConsentRecord(
            consent_id=row["consent_id"], session_id=row["session_id"],
            adapter_id=row["adapter_id"], purpose=row["purpose"],
            data_items=list(self._json_out(row["data_items"])), retention=row["retention"],
            refusal=row["refusal"], granted_at=self._ts_out(row["granted_at"]),
            action=row["action"], prev_hash=row["prev_hash"], hash=row["hash"], seq=row["seq"],
            key_id=row.get("key_id"),
        )

    # ---- the keyed ledger (ledger.py): key and head checkpoint live outside the database
    def ledger_keys(self) -> Keyring:
        """Read once per store: a rotated key takes effect when processes restart."""
        if self._keys is None:
            self._keys = Keyring.from_env()
        return self._keys

    def ledger_heads(self) -> HeadFile:
        if self._heads is None:
            self._heads = HeadFile()
        return self._heads

    def _ledger_id(self, tx: Tx, *, create: bool) -> str | None:
        rows = tx.q("SELECT ledger_id FROM ledger_meta ORDER BY created_at, ledger_id")
        if len(rows) > 1:
            raise LedgerBroken("the ledger has more than one ledger id (ledger_meta was edited)")
        if rows:
            return rows[0]["ledger_id"]
        if not create:
            return None
        lid = secrets.token_hex(16)
        tx.q("INSERT INTO ledger_meta (ledger_id, created_at) VALUES (?, ?)",
             (lid, self._ts_in(utcnow())))
        return lid

    def _head_problem(self, keys: Keyring, lid: str | None, last: dict[str, Any] | None
                      ) -> tuple[str | None, int | None]:
        """Why the chain's end disagrees with the signed head checkpoint (None if it agrees), and
        the checkpoint's sequence number."""
        if lid is None:
            if last is None:
                return None, None
            return ("the ledger has records but no ledger id, so no signed head "
                    "(an unkeyed legacy ledger or a tampered one: check it, then run "
                    "`ummaya consent anchor`)"), None
        try:
            cp = self.ledger_heads().read(lid)
        except ValueError as exc:
            return str(exc), None
        if isinstance(cp, dict):
            return cp["error"], None
        if cp is None:
            if last is None:
                return None, None
            return ("no signed head checkpoint for this ledger (records were written elsewhere, "
                    "or the head file was lost: check, then `ummaya consent anchor`)"), None
        why = check_head(cp, keys, lid)
        if why:
            return why, cp.seq
        if last is None:
            if cp.seq == 0 and cp.hash == GENESIS_HASH:
                return None, 0
            return (f"the ledger is empty but its signed head names record seq={cp.seq}: "
                    "records were deleted"), cp.seq
        if cp.seq > last["seq"]:
            return (f"the chain ends at seq={last['seq']} but the signed head names seq={cp.seq}: "
                    "the newest records were deleted (or the last append never committed)"), cp.seq
        if cp.seq < last["seq"]:
            return (f"records after the signed head (seq={cp.seq}) up to seq={last['seq']} were "
                    "appended without moving it (forged appends?)"), cp.seq
        if not hmac.compare_digest(cp.hash, last["hash"]):
            return (f"the last record (seq={cp.seq}) is not the one the signed head names: "
                    "it was replaced"), cp.seq
        return None, cp.seq

    def _append_consent(self, tx: Tx, record: ConsentRecord) -> ConsentRecord:
        """Link ``record`` to the chain's end, sign it, insert it, move the signed head.
        Caller holds the chain lock. Refuses (LedgerBroken) when the chain's end is not the one
        the signed head names: appending would otherwise bury a deleted tail."""
        keys = self.ledger_keys()
        last_rows = tx.q("SELECT seq, hash FROM consents ORDER BY seq DESC LIMIT 1")
        last = last_rows[0] if last_rows else None
        lid = self._ledger_id(tx, create=last is None)
        problem, _ = self._head_problem(keys, lid, last)
        if problem or lid is None:
            raise LedgerBroken(f"the consent ledger failed verification, nothing recorded: {problem}")
        record.prev_hash = last["hash"] if last else GENESIS_HASH
        record.key_id = keys.current_id
        record.hash = record.compute_hash(keys.current)
        rows = tx.q(
            "INSERT INTO consents (consent_id, session_id, adapter_id, purpose, data_items, "
            "retention, refusal, granted_at, action, prev_hash, hash, key_id) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq",
            (record.consent_id, record.session_id, record.adapter_id, record.purpose,
             self._json_in(list(record.data_items)), record.retention, record.refusal,
             self._ts_in(record.granted_at), record.action, record.prev_hash, record.hash,
             record.key_id),
        )
        record.seq = rows[0]["seq"]
        # Written while the chain lock is held, just before the commit: a crash in between leaves
        # the head one record ahead, which verify reports (fail closed) — see docs/ledger.md.
        self.ledger_heads().write(keys, lid, record.seq, record.hash)
        return record

    def grant_consent(self, session_id: str, adapter_id: str, *, purpose: str,
                      data_items: Sequence[str], retention: str, refusal: str,
                      now: datetime | None = None) -> ConsentRecord:
        if not session_id or not adapter_id:
            raise ValueError("session_id and adapter_id are required ('*' = every session)")
        for name, value in (("purpose", purpose), ("retention", retention), ("refusal", refusal)):
            if not value or not str(value).strip():
                raise ValueError(f"consent notice item {name!r} is empty")
        if not data_items:
            raise ValueError("consent notice item 'data_items' is empty")
        record = ConsentRecord(
            consent_id=new_id(), session_id=session_id, adapter_id=adapter_id, purpose=purpose,
            data_items=[str(d) for d in data_items], retention=retention, refusal=refusal,
            granted_at=as_utc(now or utcnow()), action="grant", prev_hash="",
        )
        with self.tx() as tx:
            self._advisory_lock(tx, CONSENT_CHAIN_LOCK_KEY)
            return self._append_consent(tx, record)

    _ACTIVE_GRANTS = (
        "SELECT * FROM consents g WHERE g.action = 'grant' AND NOT EXISTS ("
        "SELECT 1 FROM consents r WHERE r.action = 'revoke' AND r.consent_id = g.consent_id)"
    )

    def revoke_consent(self, consent_id: str | None = None, *, session_id: str | None = None,
                       adapter_id: str | None = None,
                       now: datetime | None = None) -> list[ConsentRecord]:
        if consent_id is None and (session_id is None or adapter_id is None):
            raise ValueError("revoke needs a consent id, or both session_id and adapter_id")
        at = as_utc(now or utcnow())
        with self.tx() as tx:
            self._advisory_lock(tx, CONSENT_CHAIN_LOCK_KEY)
            if consent_id is not None:
                rows = tx.q("SELECT * FROM consents WHERE consent_id = ? ORDER BY seq", (consent_id,))
                if not rows:
                    raise UnknownConsent(f"no consent {consent_id!r}")
                if any(r["action"] == "revoke" for r in rows):
                    return []  # already revoked: nothing to append
                grants = rows
            else:
                grants = tx.q(self._ACTIVE_GRANTS + " AND g.session_id = ? AND g.adapter_id = ? "
                              "ORDER BY g.seq", (session_id, adapter_id))
            out = []
            if consent_id is None and session_id is not None and adapter_id is not None:
                self._close_consent_requests(tx, session_id, adapter_id, at)
            for row in grants:
                g = self._consent(row)
                # Every question still open for it is void: an old "accept" cannot grant it again.
                self._close_consent_requests(tx, g.session_id, g.adapter_id, at)
                out.append(self._append_consent(tx, ConsentRecord(
                    consent_id=g.consent_id, session_id=g.session_id, adapter_id=g.adapter_id,
                    purpose=g.purpose, data_items=g.data_items, retention=g.retention,
                    refusal=g.refusal, granted_at=at, action="revoke", prev_hash="",
                )))
            return out

    def active_consent(self, session_id: str, adapter_id: str) -> ConsentRecord | None:
        """The newest unrevoked grant for this session and adapter, or a standing ('*') one."""
        with self.tx(write=False) as tx:
            rows = tx.q(self._ACTIVE_GRANTS + " AND g.adapter_id = ? AND g.session_id IN (?, '*') "
                        "ORDER BY g.seq DESC LIMIT 1", (adapter_id, session_id))
        return self._consent(rows[0]) if rows else None

    def list_consents(self, session_id: str | None = None) -> list[ConsentRecord]:
        with self.tx(write=False) as tx:
            if session_id is None:
                rows = tx.q("SELECT * FROM consents ORDER BY seq")
            else:
                rows = tx.q("SELECT * FROM consents WHERE session_id = ? ORDER BY seq", (session_id,))
        return [self._consent(r) for r in rows]

    def anchor(self) -> ChainReport:
        """Operator repair (needs the key): check every record's link and HMAC, then sign the
        head checkpoint at the chain's current end — for a legacy (unkeyed) ledger, after a crash
        between writing the head and committing, or after a key rotation. Never anchors a chain
        whose records do not verify."""
        keys = self.ledger_keys()
        st = ChainState()
        with self.tx() as tx:
            self._advisory_lock(tx, CONSENT_CHAIN_LOCK_KEY)
            rows = tx.q("SELECT * FROM consents ORDER BY seq")
            broken = self._walk_rows(rows, keys, st)
            if broken is not None:
                return broken
            lid = self._ledger_id(tx, create=True)
            assert lid is not None
            self.ledger_heads().write(keys, lid, st.seq, st.hash)
        with self._chain_mutex:  # the next check walks again, against the new head
            self._chain, self._broken = None, None
        return ChainReport(True, len(rows), head=st.hash, head_seq=st.seq)

    # ---- traces
    def _trace(self, row: dict[str, Any], events: list[dict[str, Any]] | None) -> Trace:
        return Trace(
            trace_id=row["trace_id"], created_at=self._ts_out(row["created_at"]),
            expires_at=self._ts_out(row["expires_at"]), release_id=row["release_id"],
            release_alias=row["release_alias"], session_id=row["session_id"],
            stop_reason=row["stop_reason"], state=row["state"],
            states=self._json_out(row["states"]), timings=self._json_out(row["timings"]),
            request_text=row["request_text"], answer_text=row["answer_text"],
            text_policy=row["text_policy"], events=events or [],
            calls=self._json_out(row["calls"]), meta=self._json_out(row["meta"]),
            updated_at=self._ts_out(row["updated_at"]), owner=row.get("owner"),
        )

    def _insert_events(self, tx: Tx, trace_id: str, events: list[dict[str, Any]]) -> None:
        tx.many("INSERT INTO trace_events (trace_id, seq, type, stage, t_ms, data) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                [(trace_id, int(e["seq"]), e["type"], e.get("stage", ""),
                  float(e.get("t_ms", 0.0)), self._json_in(e.get("data", {}))) for e in events])

    def _stage_trace(self, trace: Trace, policy: RetentionPolicy | None,
                     personal: Sequence[PersonalValue]) -> Trace | None:
        """The row a trace becomes (redacted, timeline checked) — work done outside any
        transaction, so no reader or writer waits behind the redaction."""
        policy = policy or self.policy
        if not policy.traces_enabled:
            return None
        stored = apply_retention(trace, policy, personal)
        stored.created_at = as_utc(stored.created_at)
        if stored.expires_at is None:
            stored.expires_at = stored.created_at + timedelta(days=policy.ttl_days)
        if not stored.states:
            stored.states = [{"state": stored.state, "at": iso(stored.created_at)}]
        stored.states = [{**s, "at": _norm_at(s.get("at"))} for s in stored.states]
        _check_timeline(stored.states)
        stored.state = stored.states[-1]["state"]
        stored.updated_at = utcnow()
        return stored

    def _write_trace_row(self, tx: Tx, stored: Trace) -> None:
        if stored.updated_at is None or stored.expires_at is None:  # _stage_trace stamps both
            raise ValueError(f"trace {stored.trace_id} was written without being staged")
        tx.q(
            "INSERT INTO traces (trace_id, created_at, updated_at, expires_at, release_id, "
            "release_alias, session_id, stop_reason, state, states, timings, request_text, "
            "answer_text, text_policy, calls, meta, owner) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (trace_id) DO UPDATE SET updated_at = excluded.updated_at, "
            "expires_at = excluded.expires_at, release_id = excluded.release_id, "
            "release_alias = excluded.release_alias, session_id = excluded.session_id, "
            "stop_reason = excluded.stop_reason, state = excluded.state, "
            "states = excluded.states, timings = excluded.timings, "
            "request_text = excluded.request_text, answer_text = excluded.answer_text, "
            "text_policy = excluded.text_policy, calls = excluded.calls, meta = excluded.meta, "
            "owner = excluded.owner",
            (stored.trace_id, self._ts_in(stored.created_at), self._ts_in(stored.updated_at),
             self._ts_in(stored.expires_at), stored.release_id, stored.release_alias,
             stored.session_id, stored.stop_reason, stored.state,
             self._json_in(stored.states), self._json_in(stored.timings),
             stored.request_text, stored.answer_text, stored.text_policy,
             self._json_in(stored.calls), self._json_in(stored.meta), stored.owner),
        )
        tx.q("DELETE FROM trace_events WHERE trace_id = ?", (stored.trace_id,))
        self._insert_events(tx, stored.trace_id, stored.events)

    def put_trace(self, trace: Trace, policy: RetentionPolicy | None = None, *,
                  personal: Sequence[PersonalValue] = ()) -> Trace | None:
        """Insert or replace a whole trace (events included) as the policy allows, the turn's
        ``personal`` values masked wherever they occur (apply_retention).

        Returns what was stored, or None when the policy turns traces off. ``expires_at`` is
        always set: the trace's own, else created_at + ttl_days.
        """
        stored = self._stage_trace(trace, policy, personal)
        if stored is None:
            return None
        with self.tx() as tx:
            self._write_trace_row(tx, stored)
        return stored

    def trace_tx(self) -> Any:
        """The transaction trace batches are written in (SQLite: a connection of the trace
        writer's own, so session reads and writes never queue behind a batch)."""
        return self.tx()

    def put_staged_traces(self, staged: Sequence[Trace]) -> None:
        """Write already staged traces (``_stage_trace``) in one transaction: all or none."""
        if not staged:
            return
        with self.trace_tx() as tx:
            for stored in staged:
                self._write_trace_row(tx, stored)

    def advance_state(self, trace_id: str, state: str, at: datetime | None = None) -> Trace:
        """Append one state to a stored trace's timeline (received → … → completed | failed)."""
        with self.tx() as tx:
            rows = tx.q("SELECT * FROM traces WHERE trace_id = ?" + self.for_update, (trace_id,))
            if not rows:
                raise UnknownTrace(trace_id)
            trace = self._trace(rows[0], None)
            states = [*trace.states, {"state": state, "at": iso(at or utcnow())}]
            _check_timeline(states)
            tx.q("UPDATE traces SET state = ?, states = ?, updated_at = ? WHERE trace_id = ?",
                 (state, self._json_in(states), self._ts_in(utcnow()), trace_id))
        trace.states, trace.state = states, state
        return trace

    def add_events(self, trace_id: str, events: Iterable[Any]) -> int:
        """Append events to a stored trace, redacted per the policy the trace was stored under."""
        with self.tx() as tx:
            rows = tx.q("SELECT text_policy FROM traces WHERE trace_id = ?" + self.for_update,
                        (trace_id,))
            if not rows:
                raise UnknownTrace(trace_id)
            mode = rows[0]["text_policy"]
            policy = RetentionPolicy(raw_text=mode)
            shell = apply_retention(Trace(trace_id=trace_id, events=list(events)), policy)
            self._insert_events(tx, trace_id, shell.events)
        return len(shell.events)

    def get_trace(self, trace_id: str, *, include_expired: bool = False) -> Trace | None:
        """None when there is no such trace — or it has expired, even before the purge."""
        with self.tx(write=False) as tx:
            if include_expired:
                rows = tx.q("SELECT * FROM traces WHERE trace_id = ?", (trace_id,))
            else:
                rows = tx.q("SELECT * FROM traces WHERE trace_id = ? AND expires_at > ?",
                            (trace_id, self._ts_in(utcnow())))
            if not rows:
                return None
            ev = tx.q("SELECT seq, type, stage, t_ms, data FROM trace_events WHERE trace_id = ? "
                      "ORDER BY seq", (trace_id,))
        events = [{"seq": e["seq"], "type": e["type"], "stage": e["stage"], "t_ms": e["t_ms"],
                   "data": self._json_out(e["data"])} for e in ev]
        return self._trace(rows[0], events)

    def list_traces(self, *, limit: int = 20, session_id: str | None = None,
                    include_expired: bool = False) -> list[Trace]:
        """Newest first, without events; expired ones only when asked for (before the purge)."""
        where, params = [], []
        if session_id is not None:
            where.append("session_id = ?")
            params.append(session_id)
        if not include_expired:
            where.append("expires_at > ?")
            params.append(self._ts_in(utcnow()))
        sql = ("SELECT * FROM traces " + ("WHERE " + " AND ".join(where) + " " if where else "")
               + "ORDER BY created_at DESC, trace_id DESC LIMIT ?")
        with self.tx(write=False) as tx:
            rows = tx.q(sql, (*params, int(limit)))
        return [self._trace(r, None) for r in rows]

    def purge_expired(self, now: datetime | None = None) -> int:
        """Delete traces whose expires_at is at or before ``now``, with their events."""
        cutoff = self._ts_in(as_utc(now or utcnow()))
        with self.tx() as tx:
            tx.q("DELETE FROM trace_events WHERE trace_id IN "
                 "(SELECT trace_id FROM traces WHERE expires_at <= ?)", (cutoff,))
            rows = tx.q("DELETE FROM traces WHERE expires_at <= ? RETURNING trace_id", (cutoff,))
            # A conversation is forgotten with its session's idle expiry (not counted: no trace).
            tx.q("UPDATE sessions SET dialogue = NULL, dialogue_expires_at = NULL "
                 "WHERE dialogue_expires_at <= ?", (cutoff,))
        return len(rows)

    # ---- releases
    def _release(self, row: dict[str, Any], alias: str | None = None) -> Release:
        return Release(release_id=row["release_id"], created_at=self._ts_out(row["created_at"]),
                       catalog_sha256=row["catalog_sha256"], catalog_path=row["catalog_path"],
                       retrieval_policy=self._json_out(row["retrieval_policy"]),
                       meta=self._json_out(row["meta"]), alias=alias)

    _RELEASE_COLS = "release_id, created_at, catalog_path, catalog_sha256, retrieval_policy, meta"

    def publish_release(self, release_id: str, *, retrieval_policy: dict[str, Any],
                        catalog_path: str | None = None, catalog_blob: bytes | None = None,
                        meta: dict[str, Any] | None = None,
                        now: datetime | None = None) -> Release:
        """Record an immutable release. Publishing the same id with the same content again is a
        no-op returning the existing release; with different content it raises ReleaseConflict."""
        if not release_id:
            raise ValueError("release_id is required")
        sha = hashlib.sha256(catalog_blob).hexdigest() if catalog_blob is not None else None
        meta = meta or {}
        with self.tx() as tx:
            tx.q("INSERT INTO releases (release_id, created_at, catalog_path, catalog_blob, "
                 "catalog_sha256, retrieval_policy, meta) VALUES (?, ?, ?, ?, ?, ?, ?) "
                 "ON CONFLICT (release_id) DO NOTHING",
                 (release_id, self._ts_in(as_utc(now or utcnow())), catalog_path, catalog_blob,
                  sha, self._json_in(retrieval_policy), self._json_in(meta)))
            rows = tx.q(f"SELECT {self._RELEASE_COLS} FROM releases WHERE release_id = ?",
                        (release_id,))
        existing = self._release(rows[0])
        same = (existing.catalog_sha256 == sha and existing.catalog_path == catalog_path
                and canonical_json(existing.retrieval_policy) == canonical_json(retrieval_policy)
                and canonical_json(existing.meta) == canonical_json(meta))
        if not same:
            raise ReleaseConflict(f"release {release_id} exists with different content; "
                                  "releases are immutable")
        return existing

    def list_releases(self) -> list[Release]:
        with self.tx(write=False) as tx:
            rows = tx.q(f"SELECT {self._RELEASE_COLS} FROM releases ORDER BY created_at, release_id")
        return [self._release(r) for r in rows]

    def release_catalog(self, release_id: str) -> bytes | None:
        with self.tx(write=False) as tx:
            rows = tx.q("SELECT catalog_blob FROM releases WHERE release_id = ?", (release_id,))
        return bytes(rows[0]["catalog_blob"]) if rows and rows[0]["catalog_blob"] is not None else None

    def promote(self, alias: str, release_id: str, now: datetime | None = None, *,
                actor: str = "system", forced: bool = False, reason: str | None = None,
                report: dict[str, Any] | None = None) -> AliasMove:
        """Point ``alias`` at ``release_id`` and record the move in the release history (who, over
        the gate or not, why, the gate's report), in one transaction. The gate itself is the
        caller's (runtime/suites/promotion.py): the store records, it does not judge."""
        if not alias:
            raise ValueError("alias is required")
        if forced and not (reason or "").strip():
            raise ValueError("a forced promotion needs a reason")
        at = as_utc(now or utcnow())
        with self.tx() as tx:
            if not tx.q("SELECT 1 AS x FROM releases WHERE release_id = ?", (release_id,)):
                raise UnknownRelease(f"no release {release_id!r}")
            prev = tx.q("SELECT release_id FROM aliases WHERE alias = ?", (alias,))
            previous = prev[0]["release_id"] if prev else None
            tx.q("INSERT INTO aliases (alias, release_id, updated_at) VALUES (?, ?, ?) "
                 "ON CONFLICT (alias) DO UPDATE SET release_id = excluded.release_id, "
                 "updated_at = excluded.updated_at",
                 (alias, release_id, self._ts_in(at)))
            tx.q("INSERT INTO release_history (alias, release_id, previous_release_id, moved_at, "
                 "actor, forced, reason, report) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                 (alias, release_id, previous, self._ts_in(at), actor, int(bool(forced)), reason,
                  self._json_in(report or {})))
            seq = tx.q("SELECT MAX(seq) AS seq FROM release_history WHERE alias = ?", (alias,))[0]["seq"]
        return AliasMove(int(seq or 0), alias, release_id, previous, at, actor, bool(forced), reason,
                         dict(report or {}))

    def add_release_evaluation(self, release_id: str, suite: str, *, status: str,
                               figures: dict[str, Any], cases: dict[str, Any],
                               meta: dict[str, Any] | None = None,
                               now: datetime | None = None) -> ReleaseEvaluation:
        at = as_utc(now or utcnow())
        with self.tx() as tx:
            if not tx.q("SELECT 1 AS x FROM releases WHERE release_id = ?", (release_id,)):
                raise UnknownRelease(f"no release {release_id!r}")
            tx.q("INSERT INTO release_evaluations (release_id, suite, evaluated_at, status, figures, "
                 "cases, meta) VALUES (?, ?, ?, ?, ?, ?, ?)",
                 (release_id, suite, self._ts_in(at), status, self._json_in(figures),
                  self._json_in(cases), self._json_in(meta or {})))
        return ReleaseEvaluation(release_id, suite, at, status, dict(figures), dict(cases), dict(meta or {}))

    def release_evaluations(self, release_id: str) -> dict[str, ReleaseEvaluation]:
        """The newest evaluation per suite."""
        with self.tx(write=False) as tx:
            rows = tx.q("SELECT release_id, suite, evaluated_at, status, figures, cases, meta "
                        "FROM release_evaluations WHERE release_id = ? ORDER BY seq", (release_id,))
        out: dict[str, ReleaseEvaluation] = {}
        for r in rows:
            out[r["suite"]] = ReleaseEvaluation(r["release_id"], r["suite"], self._ts_out(r["evaluated_at"]),
                                                r["status"], self._json_out(r["figures"]),
                                                self._json_out(r["cases"]), self._json_out(r["meta"]))
        return out

    def alias_history(self, alias: str | None = None) -> list[AliasMove]:
        """Every alias move, oldest first (one alias's when ``alias`` is given)."""
        sql = ("SELECT seq, alias, release_id, previous_release_id, moved_at, actor, forced, reason, "
               "report FROM release_history")
        with self.tx(write=False) as tx:
            rows = (tx.q(sql + " WHERE alias = ? ORDER BY seq", (alias,)) if alias is not None
                    else tx.q(sql + " ORDER BY seq"))
        return [AliasMove(int(r["seq"]), r["alias"], r["release_id"], r["previous_release_id"],
                          self._ts_out(r["moved_at"]), r["actor"], bool(r["forced"]), r["reason"],
                          self._json_out(r["report"])) for r in rows]

    def aliases(self) -> dict[str, str]:
        with self.tx(write=False) as tx:
            rows = tx.q("SELECT alias, release_id FROM aliases ORDER BY alias")
        return {r["alias"]: r["release_id"] for r in rows}

    def resolve(self, alias_or_id: str) -> Release | None:
        """An alias first, then a release id; None when neither exists (never a fallback)."""
        with self.tx(write=False) as tx:
            rows = tx.q(f"SELECT {', '.join('r.' + c.strip() for c in self._RELEASE_COLS.split(','))} "
                        "FROM aliases a JOIN releases r ON r.release_id = a.release_id "
                        "WHERE a.alias = ?", (alias_or_id,))
            if rows:
                return self._release(rows[0], alias=alias_or_id)
            rows = tx.q(f"SELECT {self._RELEASE_COLS} FROM releases WHERE release_id = ?",
                        (alias_or_id,))
        return self._release(rows[0]) if rows else None
