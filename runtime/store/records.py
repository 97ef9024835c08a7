"""What the store keeps: plain records, the retention policy, ids and time helpers."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import time
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from typing import Any, Literal

UTC = timezone.utc

# The request state machine (issue 4): received → resolved → retrieving → reranking → generating
# → completed | failed. A turn may skip states it has no use for (the CLI `ask` does not rerank),
# but never goes back, and nothing follows a terminal state.
TRACE_STATES = ("received", "resolved", "retrieving", "reranking", "generating", "completed", "failed")
TERMINAL_STATES = frozenset({"completed", "failed"})

GENESIS_HASH = "0" * 64

RawText = Literal["none", "redacted", "full"]


def utcnow() -> datetime:
    return datetime.now(UTC)


def as_utc(value: datetime) -> datetime:
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def iso(value: datetime) -> str:
    """Fixed-width UTC ISO 8601 with microseconds: sorts as text, hashes the same everywhere."""
    return as_utc(value).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_iso(value: str) -> datetime:
    return as_utc(datetime.fromisoformat(value.replace("Z", "+00:00")))


_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def new_trace_id(now: datetime | None = None) -> str:
    """A ULID: 48-bit millisecond time + 80 random bits, Crockford base32, sorts by creation."""
    ms = int(as_utc(now).timestamp() * 1000) if now else time.time_ns() // 1_000_000
    value = (ms << 80) | secrets.randbits(80)
    chars = []
    for _ in range(26):
        chars.append(_CROCKFORD[value & 31])
        value >>= 5
    return "".join(reversed(chars))


def new_id() -> str:
    return secrets.token_hex(16)


def json_dumps(obj: Any) -> str:
    """JSON for a column: UTF-8 kept readable; anything not JSON (a datetime, a Path) as str."""
    return json.dumps(obj, ensure_ascii=False, sort_keys=True, default=str)


def canonical_json(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


@dataclass(frozen=True)
class RetentionPolicy:
    """The deployment's trace policy (issue 4, S06)."""

    traces_enabled: bool = True
    raw_text: RawText = "redacted"
    ttl_days: float = 30

    def __post_init__(self) -> None:
        if self.raw_text not in ("none", "redacted", "full"):
            raise ValueError(f"raw_text must be none, redacted or full, not {self.raw_text!r}")
        if self.ttl_days < 0:
            raise ValueError("ttl_days must be >= 0")

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> "RetentionPolicy":
        """UMMAYA_TRACES=on|off, UMMAYA_TRACE_RAW_TEXT=none|redacted|full, UMMAYA_TRACE_TTL_DAYS."""
        env = dict(os.environ if env is None else env)
        enabled = env.get("UMMAYA_TRACES", "on").strip().lower() not in ("0", "off", "false", "no")
        raw = env.get("UMMAYA_TRACE_RAW_TEXT", "redacted").strip().lower()
        try:
            ttl = float(env.get("UMMAYA_TRACE_TTL_DAYS", "30"))
            return cls(traces_enabled=enabled, raw_text=raw, ttl_days=ttl)  # type: ignore[arg-type]
        except ValueError as exc:
            raise ValueError(f"UMMAYA_TRACE_TTL_DAYS / UMMAYA_TRACE_RAW_TEXT: {exc}") from None


@dataclass
class Session:
    session_id: str
    slots: dict[str, Any] = field(default_factory=dict)
    turns: int = 0
    created_at: datetime | None = None
    updated_at: datetime | None = None
    # The dialogue state (runtime/dialogue/state.py) as JSON, or None; forgotten at
    # dialogue_expires_at (purge_expired clears it, loading ignores an expired one).
    dialogue: dict[str, Any] | None = None
    dialogue_expires_at: datetime | None = None

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["created_at"] = iso(self.created_at) if self.created_at else None
        d["updated_at"] = iso(self.updated_at) if self.updated_at else None
        d["dialogue_expires_at"] = iso(self.dialogue_expires_at) if self.dialogue_expires_at else None
        return d


# The fields a consent record's hash covers, in the record's canonical JSON (plus prev_hash).
CONSENT_HASHED_FIELDS = (
    "consent_id", "session_id", "adapter_id", "purpose", "data_items", "retention", "refusal",
    "granted_at", "action", "prev_hash",
)


@dataclass
class ConsentRecord:
    """One append-only row. A revoke is a new row with the same consent_id and action='revoke';
    ``granted_at`` is when *this* row was recorded."""

    consent_id: str
    session_id: str  # '*' = standing consent for every session
    adapter_id: str
    purpose: str
    data_items: list[str]
    retention: str
    refusal: str
    granted_at: datetime
    action: Literal["grant", "revoke"]
    prev_hash: str
    hash: str = ""
    seq: int | None = None
    # The id of the ledger key whose HMAC is ``hash`` (runtime/store/ledger.py). None only on
    # records written before the ledger was keyed: their hash is a plain SHA-256.
    key_id: str | None = None

    def hashed_payload(self) -> dict[str, Any]:
        d = {k: getattr(self, k) for k in CONSENT_HASHED_FIELDS}
        d["granted_at"] = iso(self.granted_at)
        d["data_items"] = list(self.data_items)
        if self.key_id is not None:
            d["key_id"] = self.key_id
        return d

    def compute_hash(self, key: bytes | None = None) -> str:
        """HMAC-SHA256 with the ledger key for keyed records; plain SHA-256 for legacy ones."""
        if self.key_id is None:
            return hashlib.sha256(canonical_json(self.hashed_payload()).encode("utf-8")).hexdigest()
        if key is None:
            raise ValueError(f"record {self.consent_id} is keyed ({self.key_id}): pass the key")
        return hmac.new(key, canonical_json(self.hashed_payload()).encode("utf-8"),
                        hashlib.sha256).hexdigest()

    def to_dict(self) -> dict[str, Any]:
        d = self.hashed_payload()
        d["key_id"] = self.key_id
        d["hash"] = self.hash
        d["seq"] = self.seq
        return d


@dataclass
class ChainReport:
    ok: bool
    records: int
    broken_seq: int | None = None
    broken_consent_id: str | None = None
    reason: str | None = None
    # The last record's hash when intact. A hash chain cannot show that its newest records were
    # cut off; comparing this with a head noted earlier (or kept elsewhere) can.
    head: str | None = None
    # The signed head checkpoint kept outside the database (sequence number of the last record).
    head_seq: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Trace:
    trace_id: str = field(default_factory=new_trace_id)
    created_at: datetime = field(default_factory=utcnow)
    expires_at: datetime | None = None  # set on save from the policy's TTL when not given
    release_id: str | None = None
    release_alias: str | None = None
    session_id: str | None = None
    stop_reason: str | None = None
    state: str = "received"
    states: list[dict[str, Any]] = field(default_factory=list)  # [{"state", "at"}]
    timings: dict[str, float] = field(default_factory=dict)
    request_text: str | None = None
    answer_text: str | None = None
    text_policy: str | None = None  # the raw_text policy applied when stored
    events: list[dict[str, Any]] = field(default_factory=list)  # Event JSON
    calls: list[dict[str, Any]] = field(default_factory=list)  # calls summary
    meta: dict[str, Any] = field(default_factory=dict)  # anything else (candidates, usage, …)
    updated_at: datetime | None = None
    owner: str | None = None  # fingerprint of the API key that created it (never the key)

    def to_dict(self, *, events: bool = True) -> dict[str, Any]:
        d = asdict(self)
        for key in ("created_at", "expires_at", "updated_at"):
            d[key] = iso(d[key]) if d[key] else None
        if not events:
            d.pop("events")
        return d


@dataclass
class Release:
    release_id: str
    created_at: datetime
    catalog_sha256: str | None
    catalog_path: str | None
    retrieval_policy: dict[str, Any]
    meta: dict[str, Any] = field(default_factory=dict)
    immutable: bool = True
    alias: str | None = None  # the alias it was resolved through, if any

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["created_at"] = iso(self.created_at)
        return d


@dataclass
class ReleaseEvaluation:
    """One suite's figures for one release (the newest row per suite counts)."""

    release_id: str
    suite: str
    evaluated_at: datetime
    status: str  # ok | missing | error
    figures: dict[str, Any] = field(default_factory=dict)
    cases: dict[str, Any] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)

    def to_dict(self, *, cases: bool = True) -> dict[str, Any]:
        d = asdict(self)
        d["evaluated_at"] = iso(self.evaluated_at)
        if not cases:
            d.pop("cases")
        return d


@dataclass
class AliasMove:
    """An alias pointed at a release: by whom, over the gate or not, and the gate's report."""

    seq: int
    alias: str
    release_id: str
    previous_release_id: str | None
    moved_at: datetime
    actor: str
    forced: bool = False
    reason: str | None = None
    report: dict[str, Any] = field(default_factory=dict)

    def to_dict(self, *, report: bool = True) -> dict[str, Any]:
        d = asdict(self)
        d["moved_at"] = iso(self.moved_at)
        if not report:
            d.pop("report")
        return d


class StoreError(Exception):
    pass


class StoreFault(StoreError):
    """The database itself failed — not a caller's mistake — with a stable public code:
    ``store_full`` (no space left), ``store_busy`` (locked or overloaded past the wait), or
    ``store_unavailable`` (cannot be reached, opened or read)."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


class ReleaseConflict(StoreError):
    """Publishing a release id that already exists with different content."""


class UnknownRelease(StoreError):
    pass


class UnknownConsent(StoreError):
    pass


class UnknownTrace(StoreError):
    pass


class InvalidTransition(StoreError):
    pass


class LedgerBroken(StoreError):
    """The consent ledger failed verification: nothing is appended and no consent counts."""
