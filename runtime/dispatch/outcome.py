"""``CallOutcome``: what one adapter call produced, whatever the tier (docs/DESIGN.md).

A cache hit (Live, ``cache_ttl_s``) reports ``attempts=0``: no request was sent for it.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel


class CallOutcome(BaseModel):
    adapter_id: str
    tier: Literal["live", "mock", "handoff"]
    status: Literal["ok", "no_data", "error", "handoff"]
    output: dict | None = None
    error_class: str | None = None
    error_code: str | None = None
    error_message: str | None = None
    upstream_url: str | None = None
    latency_ms: float = 0.0
    fixture: str | None = None
    attempts: int = 0
