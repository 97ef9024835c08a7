"""Consent through MCP elicitation: the form a host shows and the answers it sends back.

The form carries the four items the law requires shown before collection (purpose, data items,
retention, the right to refuse — 개인정보 보호법 제15조·제22조) and one boolean, ``agree``. Only an
``accept`` with ``agree: true`` is a consent; decline, cancel or ``agree: false`` is a refusal.

Two protocol eras, one form:
* 2026-07-28 and later: the call returns ``InputRequiredResult``; the host asks the citizen and
  retries the same call with ``inputResponses``. The ``requestState`` we send is an HMAC (keyed
  from the consent ledger's key, shared by every worker) over the adapter and the consent
  session, so an answer counts only for a question this server asked, for
  that adapter, in that session (a forged or replayed ``accept`` is ignored, and the form is shown).
* earlier versions: the server sends ``elicitation/create`` mid-call and waits for the answer.

An accepted consent is written by the engine's own ``grant`` (the store's hash-chained ledger),
exactly as ``ummaya ask --consent`` or ``ummaya consent grant`` would.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from typing import Any

import mcp_types as types

from ummaya.codegen.manifest import Manifest

KEY_PREFIX = "consent:"
_PROCESS_SECRET = secrets.token_bytes(32)  # only when the store has no ledger key (tests, memory)


def state_secret(store: Any) -> bytes:
    """The MAC key for ``requestState``: derived from the consent ledger's key, which every worker
    and replica on one store shares (env or a private file), so a question asked by one worker
    is answered at any other; a rotated ledger key simply asks again."""
    ledger_keys = getattr(store, "ledger_keys", None)
    if ledger_keys is None:
        return _PROCESS_SECRET
    try:
        base = ledger_keys().current
    except Exception:  # no usable key: the gate fails closed anyway; a question stays local
        return _PROCESS_SECRET
    return hmac.new(base, b"ummaya mcp consent requestState v1", hashlib.sha256).digest()


def supports_elicitation(session: Any) -> bool:
    caps = getattr(session, "client_capabilities", None)
    el = getattr(caps, "elicitation", None) if caps is not None else None
    # A bare `elicitation: {}` (before modes existed) means form support; url-only does not.
    return el is not None and (el.form is not None or el.url is None)


def message(m: Manifest) -> str:
    c = m.permission.consent
    assert c is not None
    return "\n".join([
        f"'{m.title.ko}' ({m.title.en}) — 개인정보 수집·이용 동의 / consent to collect and use personal data",
        f"· 목적 Purpose: {c.purpose.ko} / {c.purpose.en}",
        f"· 수집 항목 Data items: {', '.join(c.data_items)}",
        f"· 보유 기간 Retention: {c.retention.ko} / {c.retention.en}",
        f"· 거부할 권리 Right to refuse: {c.refusal.ko} / {c.refusal.en}",
        "동의하시겠습니까? / Do you consent?",
    ])


SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"agree": {"type": "boolean", "title": "동의합니다 / I consent",
                             "description": "위 내용에 동의하면 선택 / tick to consent to the notice above"}},
    "required": ["agree"],
}


def request(m: Manifest) -> types.ElicitRequest:
    return types.ElicitRequest(params=types.ElicitRequestFormParams(message=message(m), requested_schema=SCHEMA))


def _mac(adapter_id: str, session_id: str, secret: bytes) -> str:
    return hmac.new(secret, f"{adapter_id}\x00{session_id}".encode(), hashlib.sha256).hexdigest()[:32]


def _state(adapter_id: str, session_id: str, secret: bytes) -> str:
    return f"ummaya-consent:{adapter_id}:{session_id}:{_mac(adapter_id, session_id, secret)}"


def input_required(m: Manifest, session_id: str, secret: bytes) -> types.InputRequiredResult:
    return types.InputRequiredResult(input_requests={KEY_PREFIX + m.id: request(m)},
                                     request_state=_state(m.id, session_id, secret))


def session_from_state(params: Any, secret: bytes) -> str | None:
    """The session a consent question was asked in, from a retried call's ``requestState`` —
    stateless HTTP (2026-07-28) has no connection to remember it. None unless the MAC holds."""
    state = getattr(params, "request_state", None) or ""
    parts = state.split(":")
    if len(parts) != 4 or parts[0] != "ummaya-consent":
        return None
    _, adapter_id, session_id, _mac_hex = parts
    return session_id if hmac.compare_digest(state, _state(adapter_id, session_id, secret)) else None


def answers(params: Any, session_id: str, secret: bytes) -> dict[str, bool]:
    """adapter id → consented? from a retried call's ``inputResponses``; only answers to the
    question this server asked, in this session (the state's MAC matches), count."""
    responses = getattr(params, "input_responses", None) or {}
    state = getattr(params, "request_state", None) or ""
    out: dict[str, bool] = {}
    for key, resp in responses.items():
        if not key.startswith(KEY_PREFIX) or not isinstance(resp, types.ElicitResult):
            continue
        adapter_id = key[len(KEY_PREFIX):]
        if not hmac.compare_digest(state, _state(adapter_id, session_id, secret)):
            continue
        out[adapter_id] = agreed(resp)
    return out


def agreed(result: Any) -> bool:
    return (getattr(result, "action", None) == "accept"
            and isinstance(getattr(result, "content", None), dict) and result.content.get("agree") is True)
