"""Who is asking: the fingerprint of a caller's API key, as the HTTP surfaces carry it.

The API-key middleware (runtime/serve/auth.py) records the fingerprint of a valid bearer key in
the ASGI scope; the HTTP API and the MCP tools mounted beside it (runtime/mcp/) read it here to
own sessions and traces per caller. It sits below both surfaces, so the MCP server never imports
the HTTP app that mounts it. The key itself is never kept: only ``fingerprint(key)``.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping
from typing import Any

SCOPE_KEY = "ummaya.api_key_fp"  # where the ASGI scope carries the caller's key fingerprint


def fingerprint(key: str) -> str:
    return hashlib.sha256(b"ummaya api key\0" + key.encode("utf-8")).hexdigest()[:32]


def caller(scope: Mapping[str, Any]) -> str | None:
    return scope.get(SCOPE_KEY)


def same_owner(owner: str | None, fp: str | None) -> bool:
    return hmac.compare_digest(owner or "", fp or "")


__all__ = ["SCOPE_KEY", "caller", "fingerprint", "same_owner"]
