"""Gate a validated call by the adapter's permission.

Public lookups (read-only) pass. Protected gates need a consent recorded for this session and
adapter — purpose, data items, retention and the right to refuse were shown when it was given.
Blocked stays blocked. Handoff-only adapters pass the gate and stop at dispatch, where the
official channel material is returned.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

from ummaya.model.manifest import Manifest

Decision = Literal["allow", "consent_required", "deny"]


class ConsentBook(Protocol):
    def has_consent(self, session_id: str, adapter_id: str) -> bool: ...

    def grant_consent(self, session_id: str, manifest: Manifest) -> str: ...


@dataclass
class GateResult:
    decision: Decision
    gate: str
    consent_id: str | None = None
    consented: bool = False  # allowed on a recorded consent (the claim check reads this)


def needs_consent(m: Manifest) -> bool:
    return m.permission.gate not in ("blocked", "read-only") and m.tier != "handoff"


def consent_state(book: ConsentBook | None, session_id: str, adapter_id: str) -> str:
    """``granted`` | ``absent`` | ``broken`` — one lookup. A store answers it itself
    (runtime/store/chain.py: the ledger verified, the grant's own HMAC checked); any other book
    through ``has_consent`` and, when it keeps a ledger, ``ledger_ok``."""
    if book is None:
        return "absent"
    own = getattr(book, "consent_state", None)
    if own is not None:
        return own(session_id, adapter_id)
    if book.has_consent(session_id, adapter_id):
        return "granted"
    ledger_ok = getattr(book, "ledger_ok", None)
    return "broken" if ledger_ok is not None and not ledger_ok() else "absent"


def decide(m: Manifest, session_id: str, book: ConsentBook | None, *, state: str | None = None) -> GateResult:
    """The gate's decision; ``state`` is the consent state when the caller already looked it up
    (consent_state), so a gated call costs one lookup."""
    gate = m.permission.gate
    if gate == "blocked":
        return GateResult("deny", gate)
    if not needs_consent(m):
        return GateResult("allow", gate)
    state = state or consent_state(book, session_id, m.id)
    if state == "granted":
        return GateResult("allow", gate, consented=True)
    # A consent ledger that fails verification (runtime/store/chain.py) opens no protected gate
    # and takes no new consent: asking the citizen again would only loop.
    if state in ("broken", "unavailable"):  # unavailable: the store cannot answer now (StoreFault)
        return GateResult("deny", gate)
    return GateResult("consent_required", gate)


class MemoryConsentBook:
    """Consents for one process only: used when no store is configured (tests, benchmarks)."""

    def __init__(self) -> None:
        self._granted: dict[tuple[str, str], str] = {}

    def has_consent(self, session_id: str, adapter_id: str) -> bool:
        return (session_id, adapter_id) in self._granted

    def grant_consent(self, session_id: str, manifest: Manifest) -> str:
        cid = f"mem-{len(self._granted) + 1}"
        self._granted[(session_id, manifest.id)] = cid
        return cid
