"""Verifying the consent ledger without making the gate pay for its length (issue 19 item 2).

The chain's rules are unchanged (docs/ledger.md): every record links to the one before and carries
an HMAC under the ledger key, and the chain must end exactly where the signed head checkpoint
(outside the database) says. What changed is *when* each rule is checked:

* **Once per process, then only what is new.** A store remembers how far it has verified the
  chain (``ChainState``: last sequence number and hash, key order, the consent ids granted and
  revoked on the way). A gate decision re-reads only the rows from that point on — normally just
  the last verified one, whose hash must not have changed — walks them, and compares the chain's
  end with the signed head: O(new rows), not O(ledger).
* **The record the gate relies on is checked every time.** The active grant a decision opens the
  gate with is looked up once (one query per gated call, in the same read transaction) and its
  HMAC recomputed; a grant the verified chain saw revoked, or one whose HMAC fails, means the
  database was changed behind the chain: the ledger is broken, and every protected gate closes.
* **The full walk runs at start and on a schedule** (``UMMAYA_LEDGER_WALK_INTERVAL_S``, default
  900 s, off the gate path in a background thread), and ``ummaya consent verify`` walks it all. A
  row changed, inserted or deleted in the middle fails the walk, which fails the ledger closed.
* **Reads never take the write lock.** Verification reads in ordinary read transactions (SQLite
  WAL readers, PostgreSQL MVCC) in pages of ``PAGE`` rows, so writers — appends, traces, sessions
  — never wait behind a walk. Only when the head names a record not yet visible (an append between
  writing the head and committing) does a check take the chain lock, briefly, to see it settled.

Broken stays broken in this process until a full walk passes again (fail closed).
"""

from __future__ import annotations

import hmac
import logging
import os
import threading
import time
from dataclasses import dataclass, field
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Literal

from .ledger import Keyring, LedgerKeyError
from .migrations import CONSENT_CHAIN_LOCK_KEY
from .records import GENESIS_HASH, ChainReport, ConsentRecord, LedgerBroken, StoreFault

log = logging.getLogger("ummaya.store")

PAGE = 1000  # rows per read transaction of a walk: short enough that no writer waits behind it
WALK_INTERVAL_ENV = "UMMAYA_LEDGER_WALK_INTERVAL_S"
DEFAULT_WALK_INTERVAL_S = 900.0
_SETTLE_S = (0.002, 0.01, 0.05)  # waits for an append caught between its head write and commit

ConsentState = Literal["granted", "absent", "broken", "unavailable"]


def walk_interval_s() -> float:
    try:
        value = float(os.environ.get(WALK_INTERVAL_ENV) or DEFAULT_WALK_INTERVAL_S)
    except ValueError:
        return DEFAULT_WALK_INTERVAL_S
    return value if value > 0 else DEFAULT_WALK_INTERVAL_S


@dataclass
class ChainState:
    """How far one process has verified the chain, and what it learnt on the way."""

    seq: int = 0
    hash: str = GENESIS_HASH
    rank: int = -1
    records: int = 0
    granted: set[str] = field(default_factory=set)
    revoked: set[str] = field(default_factory=set)
    head_seq: int | None = None


class LedgerChecks:
    """Mixed into ``SQLStore``: verification, the gate's consent decision, the scheduled walk."""

    _chain: ChainState | None
    _broken: ChainReport | None

    if TYPE_CHECKING:  # what the mixin needs from the store it is mixed into (SQLStore has them all)
        _ACTIVE_GRANTS: str

        def tx(self, write: bool = True) -> AbstractContextManager[Any]: ...
        def ledger_keys(self) -> Keyring: ...
        def _consent(self, row: dict[str, Any]) -> ConsentRecord: ...
        def _advisory_lock(self, tx: Any, key: int) -> None: ...
        def _ledger_id(self, tx: Any, *, create: bool) -> str | None: ...
        def _head_problem(self, keys: Keyring, lid: str | None, last: dict[str, Any] | None
                          ) -> tuple[str | None, int | None]: ...

    def _init_chain(self) -> None:
        self._chain = None  # nothing verified yet: the first check walks the whole chain
        self._broken = None
        self._chain_mutex = threading.Lock()  # guards the two fields above
        self._advance_lock = threading.RLock()  # one incremental check at a time
        self._walked_at = 0.0
        self._walk_thread: threading.Thread | None = None

    # ---- one walk step (shared by the full walk and the incremental check)
    def _walk_rows(self, rows: list[dict[str, Any]], keys: Keyring, st: ChainState) -> ChainReport | None:
        """Advance ``st`` over ``rows`` (in sequence order, right after ``st.seq``): the first
        broken record's report, or None with ``st`` moved to the last row."""
        order = keys.order()
        for row in rows:
            try:
                rec = self._consent(row)
            except Exception as exc:  # a row edited into something unreadable
                return ChainReport(False, st.records + 1, row.get("seq"), row.get("consent_id"),
                                   f"unreadable record: {exc}")
            reason = None
            key = keys.by_id(rec.key_id) if rec.key_id is not None else None
            if rec.prev_hash != st.hash:
                reason = "prev_hash does not link to the previous record (a record was removed, " \
                         "inserted or reordered)"
            elif rec.key_id is None and st.rank >= 0:
                reason = "an unkeyed record after keyed ones (forged without the ledger key)"
            elif rec.key_id is not None and key is None:
                reason = (f"signed with an unknown key {rec.key_id} (forged, or a retired key is "
                          "missing from UMMAYA_LEDGER_RETIRED_KEYS / ledger.retired)")
            elif rec.key_id is not None and order.index(rec.key_id) < st.rank:
                reason = "signed with a key retired before the previous record's key"
            elif not hmac.compare_digest(rec.compute_hash(key), rec.hash):
                reason = ("content does not match its hash (the record was edited, or written "
                          "without the ledger key)")
            elif rec.action == "revoke" and rec.consent_id not in st.granted:
                reason = "revoke of a consent that was never granted earlier in the chain"
            if reason:
                return ChainReport(False, st.records + 1, rec.seq, rec.consent_id, reason)
            if rec.key_id is not None:
                st.rank = order.index(rec.key_id)
            if rec.action == "grant":
                st.granted.add(rec.consent_id)
            else:
                st.revoked.add(rec.consent_id)
            st.seq, st.hash, st.records = int(rec.seq or 0), rec.hash, st.records + 1
        return None

    def _mac_holds(self, row: dict[str, Any], keys: Keyring) -> bool:
        try:
            rec = self._consent(row)
            key = keys.by_id(rec.key_id) if rec.key_id is not None else None
            if rec.key_id is not None and key is None:
                return False
            return hmac.compare_digest(rec.compute_hash(key), rec.hash)
        except Exception:  # noqa: BLE001 - unreadable is not holding
            return False

    def _rows_after(self, tx: Any, seq: int, limit: int | None = PAGE) -> list[dict[str, Any]]:
        sql = "SELECT * FROM consents WHERE seq > ? ORDER BY seq"
        return tx.q(sql + (" LIMIT ?" if limit else ""), (seq, limit) if limit else (seq,))

    # ---- the full walk
    def verify(self) -> ChainReport:
        """Walk the whole chain (links, HMACs, key order) page by page in read transactions, then
        compare its end with the signed head; report the first thing that is wrong. A pass
        becomes this process's verified state; a failure fails the ledger closed."""
        try:
            keys = self.ledger_keys()
        except LedgerKeyError as exc:
            return ChainReport(False, 0, reason=f"ledger key: {exc}")
        st = ChainState()
        report = self._advance(keys, st, full=True)
        with self._chain_mutex:
            self._walked_at = time.monotonic()
            if report.ok:
                self._chain, self._broken = st, None
            else:
                self._broken = report
        return report

    def _advance(self, keys: Keyring, st: ChainState, *, full: bool) -> ChainReport:
        """Walk from ``st`` to the chain's end and check the end against the signed head."""
        try:
            report = self._advance_unsafe(keys, st, full=full)
        except LedgerBroken as exc:  # e.g. ledger_meta holds two ledger ids
            report = ChainReport(False, st.records, reason=str(exc))
        if not report.ok:  # a report counts the ledger's rows, as `consent verify` shows them
            with self.tx(write=False) as tx:
                report.records = int(tx.q("SELECT COUNT(*) AS n FROM consents")[0]["n"])
        return report

    def _advance_unsafe(self, keys: Keyring, st: ChainState, *, full: bool) -> ChainReport:
        if full:  # page by page, each page its own short read transaction
            while True:
                with self.tx(write=False) as tx:
                    rows = self._rows_after(tx, st.seq, PAGE)
                broken = self._walk_rows(rows, keys, st)
                if broken is not None:
                    return broken
                if len(rows) < PAGE:
                    break
        for attempt in range(len(_SETTLE_S) + 1):
            locked = attempt == len(_SETTLE_S)
            with self.tx(write=locked) as tx:
                if locked:  # an append is in flight: see it settled, under the chain lock
                    self._advisory_lock(tx, CONSENT_CHAIN_LOCK_KEY)
                lid = self._ledger_id(tx, create=False)
                # Bounded, so every planner reads it through the primary key (an open range with
                # an unknown bound looks like a quarter of the table to PostgreSQL: a seq scan).
                rows = tx.q("SELECT * FROM consents WHERE seq >= ? ORDER BY seq LIMIT ?", (st.seq, PAGE + 1))
                if st.seq:
                    # The last verified record must still be there, unchanged (hash and content).
                    what = None
                    if not rows or rows[0]["seq"] != st.seq:
                        what = "was deleted"
                    elif not hmac.compare_digest(rows[0]["hash"], st.hash) or not self._mac_holds(rows[0], keys):
                        what = "was changed"
                    if what:
                        return ChainReport(False, st.records, st.seq, None,
                                           f"the verified record seq={st.seq} {what} (rows removed "
                                           "or rewritten behind the chain)")
                    rows = rows[1:]
                while True:
                    broken = self._walk_rows(rows, keys, st)
                    if broken is not None:
                        return broken
                    if len(rows) < PAGE:
                        break
                    rows = self._rows_after(tx, st.seq, PAGE)  # many new rows: on, page by page
                last: dict[str, Any] | None = {"seq": st.seq, "hash": st.hash} if st.seq else None
                problem, head_seq = self._head_problem(keys, lid, last)
            if problem is None:
                st.head_seq = head_seq
                return ChainReport(True, st.records, head=st.hash, head_seq=head_seq)
            # The head is written just before an append commits: a head one step ahead of what a
            # read transaction sees may be an append in flight. Anything else is damage.
            transient = head_seq is not None and head_seq > (last["seq"] if last else 0)
            if not transient or locked:
                where = head_seq if head_seq is not None else (last["seq"] if last else None)
                return ChainReport(False, st.records, where, None, problem, head_seq=head_seq)
            time.sleep(_SETTLE_S[attempt])
        raise AssertionError("unreachable")  # pragma: no cover

    # ---- the gate
    def ledger_ok(self) -> bool:
        """For the gate: False while the ledger fails verification (no consent-gated call runs)."""
        return self._checked() is not None

    def _checked(self) -> ChainState | None:
        """The verified state brought up to the chain's end, or None when the ledger is broken."""
        self._maybe_walk()
        try:
            keys = self.ledger_keys()
        except LedgerKeyError as exc:
            self._fail(ChainReport(False, 0, reason=f"ledger key: {exc}"))
            return None
        with self._chain_mutex:
            broken, st = self._broken, self._chain
        if broken is not None:
            return None
        if st is None:  # first use in this process: the walk at start
            with self._advance_lock:
                if self._chain is None and self._broken is None:  # nobody else walked meanwhile
                    self.verify()
            with self._chain_mutex:
                return self._chain if self._broken is None else None
        # Advanced in place (no copy of what it learnt: O(new rows), not O(ledger)); one thread
        # at a time. A walk that fails leaves the state half-moved, and broken, which is final.
        with self._advance_lock:
            try:
                report = self._advance(keys, st, full=False)
            except StoreFault:
                return None  # the store cannot answer now: no gate opens, nothing is marked broken
            except Exception as exc:  # noqa: BLE001 - fail closed, but say why in the log
                log.exception("consent ledger verification could not run")
                self._fail(ChainReport(False, st.records, reason=f"verification failed: {exc}"),
                           quiet=True)
                return None
        if not report.ok:
            self._fail(report)
            return None
        with self._chain_mutex:
            if self._broken is not None:
                return None
        return st

    def _fail(self, report: ChainReport, *, quiet: bool = False) -> None:
        with self._chain_mutex:
            self._broken = report
        if not quiet:
            log.error("consent ledger failed verification at seq=%s: %s", report.broken_seq,
                      report.reason)

    def consent_state(self, session_id: str, adapter_id: str) -> ConsentState:
        """The gate's one question, answered with one lookup: ``granted`` (an active grant whose
        HMAC holds, in a chain that verifies), ``absent`` or ``broken``."""
        try:
            st = self._checked()
            if st is None:
                return "broken" if self._broken is not None else "unavailable"
            with self.tx(write=False) as tx:
                rows = tx.q(self._ACTIVE_GRANTS + " AND g.adapter_id = ? AND g.session_id IN (?, '*') "
                            "ORDER BY g.seq DESC LIMIT 1", (adapter_id, session_id))
        except StoreFault:
            return "unavailable"
        if not rows:
            return "absent"
        rec = self._consent(rows[0])
        problem = None
        if not self._mac_holds(rows[0], self.ledger_keys()):
            problem = "the grant the gate relies on does not match its HMAC (edited or forged)"
        elif rec.consent_id in st.revoked:
            problem = ("the grant the gate relies on was revoked in the verified chain, but its "
                       "revocation is gone from the database (deleted)")
        elif rec.seq is not None and rec.seq > st.seq:
            problem = "the grant the gate relies on is beyond the verified chain"
        if problem:
            self._fail(ChainReport(False, st.records, rec.seq, rec.consent_id, problem))
            return "broken"
        return "granted"

    def has_consent(self, session_id: str, adapter_id: str) -> bool:
        """An active grant counts only while the ledger verifies: a forged grant, or a grant
        whose revocation was deleted, must not open the gate."""
        return self.consent_state(session_id, adapter_id) == "granted"

    # ---- the schedule
    def _maybe_walk(self) -> None:
        """Start the scheduled full walk in the background when it is due (never on the gate's
        path: the decision goes on with the incremental check)."""
        if self._chain is None and self._broken is None:
            return  # the first check walks in the foreground anyway
        with self._chain_mutex:
            due = time.monotonic() - self._walked_at >= walk_interval_s()
            running = self._walk_thread is not None and self._walk_thread.is_alive()
            if not due or running:
                return
            self._walked_at = time.monotonic()  # one walk per interval, even if it fails
            t = threading.Thread(target=self._scheduled_walk, name="ummaya-ledger-walk", daemon=True)
            self._walk_thread = t
        t.start()

    def _scheduled_walk(self) -> None:
        try:
            report = self.verify()
        except Exception:  # noqa: BLE001 - a walk that cannot run fails closed
            log.exception("scheduled consent ledger walk could not run")
            self._fail(ChainReport(False, 0, reason="the scheduled walk could not run"), quiet=True)
            return
        if not report.ok:
            log.error("consent ledger failed its scheduled walk at seq=%s: %s", report.broken_seq,
                      report.reason)

    def walk_ledger(self) -> ChainReport:
        """The full walk now (server start-up, the schedule, tests)."""
        return self.verify()


__all__ = ["ChainState", "ConsentState", "LedgerChecks", "PAGE", "WALK_INTERVAL_ENV", "walk_interval_s"]
