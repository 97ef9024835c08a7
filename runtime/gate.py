"""Gate a validated call by the adapter's permission.

Public lookups (read-only) pass. Protected gates need a consent recorded for this session and
adapter — purpose, data items, retention and the right to refuse were shown when it was given.
Blocked stays blocked. Handoff-only adapters pass the gate and stop at dispatch, where the
official channel material is returned.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

from ummaya.codegen.manifest import Manifest

Decision = Literal["allow", "consent_required", "deny"]


class ConsentBook(Protocol):
    def has_consent(self, session_id: str, adapter_id: str) -> bool: ...

    def grant_consent(self, session_id: str, manifest: Manifest) -> str: ...


@dataclass
class GateResult:
    decision: Decision
    gate: str
    consent_id: str | None = None


def decide(m: Manifest, session_id: str, book: ConsentBook | None) -> GateResult:
    gate = m.permission.gate
    if gate == "blocked":
        return GateResult("deny", gate)
    if gate == "read-only" or m.tier == "handoff":
        return GateResult("allow", gate)
    if book is not None and book.has_consent(session_id, m.id):
        return GateResult("allow", gate)
    # A consent ledger that fails verification (runtime/store/ledger.py) opens no protected gate
    # and takes no new consent: asking the citizen again would only loop.
    ledger_ok = getattr(book, "ledger_ok", None)
    if ledger_ok is not None and not ledger_ok():
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
