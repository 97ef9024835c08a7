"""Consent through MCP elicitation: the form a host shows and the answers it sends back.

The form carries the four items the law requires shown before collection (purpose, data items,
retention, the right to refuse — 개인정보 보호법 제15조·제22조) and one boolean, ``agree``. Only an
``accept`` with ``agree: true`` is a consent; decline, cancel or ``agree: false`` is a refusal.

Two protocol eras, one form:
* 2026-07-28 and later: the call returns ``InputRequiredResult``; the host asks the citizen and
  retries the same call with ``inputResponses``. The ``requestState`` we send names one question:
  the adapter, the consent session, a nonce and an expiry (``UMMAYA_CONSENT_REQUEST_TTL_S``,
  default 600 s), under an HMAC keyed from the consent ledger's key (shared by every worker). The
  nonce is kept in the store and consumed by the first answer; a revocation closes every question
  still open for that adapter and session. So an answer counts once, for a question this server
  asked, for that adapter, in that session, in time — a forged, replayed (after a revocation
  too), expired or second ``accept`` is ignored, and the form is shown again.
* earlier versions: the server sends ``elicitation/create`` mid-call and waits for the answer.

An accepted consent is written by the engine's own ``grant`` (the store's hash-chained ledger),
exactly as ``ummaya ask --consent`` or ``ummaya consent grant`` would.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from typing import Any

import mcp_types as types

from ummaya.model.manifest import Manifest

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


REQUEST_TTL_ENV = "UMMAYA_CONSENT_REQUEST_TTL_S"
DEFAULT_REQUEST_TTL_S = 600.0
STATE_PREFIX = "ummaya-consent2"
_LOCAL_REQUESTS: dict[str, tuple[str, str, float]] = {}  # nonce → (session, adapter, expiry): no store


def request_ttl_s() -> float:
    import os

    try:
        value = float(os.environ.get(REQUEST_TTL_ENV) or DEFAULT_REQUEST_TTL_S)
    except ValueError:
        return DEFAULT_REQUEST_TTL_S
    return value if value > 0 else DEFAULT_REQUEST_TTL_S


def _mac(fields: tuple[str, ...], secret: bytes) -> str:
    return hmac.new(secret, "\x00".join(fields).encode(), hashlib.sha256).hexdigest()[:32]


def _open(store: Any, session_id: str, adapter_id: str, expires: float) -> str:
    """A new question's nonce, kept where every worker can consume it once (the store)."""
    import datetime as dt

    opener = getattr(store, "open_consent_request", None)
    if opener is not None:
        return opener(session_id, adapter_id, dt.datetime.fromtimestamp(expires, dt.timezone.utc))
    nonce = secrets.token_urlsafe(16)
    now = time.time()
    for old in [n for n, (_, _, exp) in _LOCAL_REQUESTS.items() if exp <= now]:
        del _LOCAL_REQUESTS[old]
    _LOCAL_REQUESTS[nonce] = (session_id, adapter_id, expires)
    return nonce


def _use(store: Any, nonce: str, session_id: str, adapter_id: str) -> bool:
    user = getattr(store, "use_consent_request", None)
    if user is not None:
        return bool(user(nonce, session_id, adapter_id))
    held = _LOCAL_REQUESTS.pop(nonce, None)
    return held is not None and held[:2] == (session_id, adapter_id) and held[2] > time.time()


def _state(adapter_id: str, session_id: str, nonce: str, expires: int, secret: bytes,
           owner: str | None) -> str:
    fields = (STATE_PREFIX, adapter_id, session_id, nonce, str(expires))
    # The caller's API key fingerprint is under the MAC (not in the text): another key's client
    # cannot answer, or continue in the session of, a question asked of this one.
    return ":".join((*fields, _mac((*fields, owner or ""), secret)))


def _parse(state: str, secret: bytes, owner: str | None) -> tuple[str, str, str, int] | None:
    """(adapter, session, nonce, expiry) of a state this server signed for this caller and that
    has not expired."""
    parts = (state or "").split(":")
    if len(parts) != 6 or parts[0] != STATE_PREFIX:
        return None
    _, adapter_id, session_id, nonce, expires, mac_hex = parts
    if not expires.isdigit() or not hmac.compare_digest(mac_hex, _mac((*parts[:5], owner or ""), secret)):
        return None
    if int(expires) <= time.time():
        return None
    return adapter_id, session_id, nonce, int(expires)


def input_required(m: Manifest, session_id: str, secret: bytes, store: Any = None,
                   owner: str | None = None) -> types.InputRequiredResult:
    """Ask for consent (2026-07-28+): the ``requestState`` names this question alone — a nonce
    the store will honour once, an expiry, the adapter and session, under the server's MAC."""
    expires = int(time.time() + request_ttl_s())
    nonce = _open(store, session_id, m.id, expires)
    return types.InputRequiredResult(input_requests={KEY_PREFIX + m.id: request(m)},
                                     request_state=_state(m.id, session_id, nonce, expires, secret, owner))


def session_from_state(params: Any, secret: bytes, owner: str | None = None) -> str | None:
    """The session a consent question was asked in, from a retried call's ``requestState`` —
    stateless HTTP (2026-07-28) has no connection to remember it. None unless the MAC holds and
    the question has not expired (whether it is still open is decided when it is answered)."""
    parsed = _parse(getattr(params, "request_state", None) or "", secret, owner)
    return parsed[1] if parsed else None


def answers(params: Any, session_id: str, secret: bytes, store: Any = None,
            owner: str | None = None) -> dict[str, bool]:
    """adapter id → consented? from a retried call's ``inputResponses``. Only the answer to the
    question this state names counts — this adapter, this session, before it expired — and only
    once: the nonce is consumed here, and a revocation has already closed every open question
    (runtime/store/sql.py). A replayed, expired, forged or revoked-meanwhile answer is ignored
    (the form is shown again)."""
    responses = getattr(params, "input_responses", None) or {}
    parsed = _parse(getattr(params, "request_state", None) or "", secret, owner)
    if parsed is None:
        return {}
    adapter_id, asked_in, nonce, _ = parsed
    resp = responses.get(KEY_PREFIX + adapter_id)
    if asked_in != session_id or not isinstance(resp, types.ElicitResult):
        return {}
    if not _use(store, nonce, session_id, adapter_id):
        return {}
    return {adapter_id: agreed(resp)}


def agreed(result: Any) -> bool:
    return (getattr(result, "action", None) == "accept"
            and isinstance(getattr(result, "content", None), dict) and result.content.get("agree") is True)
