"""Optional API keys for the ``/v1`` routes (and ``/mcp``), and what the server remembers of them.

When ``UMMAYA_API_KEYS`` is set (comma-separated, each at least 16 printable ASCII characters),
every ``/v1`` and ``/mcp`` request needs ``Authorization: Bearer <key>``; anything else gets
``401 unauthorized`` before the body is read. The request then carries the key's *fingerprint*
(a SHA-256 of a constant and the key), which is all that is stored: as the owner of the sessions
it starts and of the traces it creates. A trace is readable only with the key that created it, a
session usable only with the key that started it. With no keys set, nothing is checked and the
fingerprint is None.
"""

from __future__ import annotations

import hmac
from typing import Any

from ..callers import SCOPE_KEY, caller, fingerprint, same_owner
from .api_errors import json_error

MIN_KEY_CHARS = 16


def parse_keys(value: str | None) -> tuple[str, ...]:
    """``UMMAYA_API_KEYS`` → keys; a key too short or not header-safe stops the server at start."""
    if not value or not value.strip():
        return ()
    keys = tuple(k.strip() for k in value.split(",") if k.strip())
    for i, k in enumerate(keys):
        if len(k) < MIN_KEY_CHARS or not all(33 <= ord(c) <= 126 for c in k):
            raise ValueError(f"UMMAYA_API_KEYS[{i}]: a key needs at least {MIN_KEY_CHARS} printable "
                             "ASCII characters, no spaces")
    return keys


class ApiKeyAuth:
    """Pure ASGI, outermost: refuses a ``/v1`` request without a valid bearer key (nothing is read,
    parsed or traced for it) and records the caller's fingerprint in the scope."""

    def __init__(self, app: Any, keys: tuple[str, ...]):
        self.app = app
        self.fingerprints = tuple(fingerprint(k) for k in keys)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or not self.fingerprints:
            return await self.app(scope, receive, send)
        if not (scope.get("path") or "").startswith(("/v1", "/mcp")):  # /mcp: the MCP tools (issue 14)
            return await self.app(scope, receive, send)
        header = ""
        for k, v in scope.get("headers", []):
            if k.lower() == b"authorization":
                header = v.decode("latin-1")
                break
        scheme, _, token = header.partition(" ")
        fp = fingerprint(token.strip()) if scheme.lower() == "bearer" and token.strip() else None
        if fp is None or not any(hmac.compare_digest(fp, known) for known in self.fingerprints):
            from ummaya.runtime.store.records import new_trace_id

            why = "missing bearer key" if fp is None else "unknown key"
            resp = json_error("unauthorized", f"this server needs an API key "
                              f"(Authorization: Bearer …): {why}", new_trace_id())
            resp.headers["WWW-Authenticate"] = 'Bearer realm="ummaya"'
            return await resp(scope, receive, send)
        scope = dict(scope)
        scope[SCOPE_KEY] = fp
        await self.app(scope, receive, send)


__all__ = ["ApiKeyAuth", "SCOPE_KEY", "caller", "fingerprint", "parse_keys", "same_owner"]
