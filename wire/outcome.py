"""``CallOutcome``: what one adapter call produced, whatever the tier (docs/DESIGN.md).

A cache hit (Live, ``cache_ttl_s``) reports ``attempts=0``: no request was sent for it.
"""

from __future__ import annotations

import time
from typing import Literal

from pydantic import BaseModel

from ummaya.model.manifest import Manifest

from .errors import UpstreamError

TierName = Literal["live", "mock", "handoff"]
CallStatus = Literal["ok", "no_data", "error", "handoff"]


class CallOutcome(BaseModel):
    adapter_id: str
    tier: Literal["live", "mock", "handoff"]
    status: CallStatus
    output: dict | None = None
    error_class: str | None = None
    error_code: str | None = None
    error_message: str | None = None
    upstream_url: str | None = None
    latency_ms: float = 0.0
    fixture: str | None = None
    attempts: int = 0
    # Mock: the recording's day when its x-datetime fields were moved to today (calendar.py).
    moved_from: str | None = None


def ms(t0: float) -> float:
    return round((time.perf_counter() - t0) * 1000, 3)


def error_outcome(
    adapter_id: str, tier: TierName, exc: UpstreamError, t0: float, *, fixture: str | None = None
) -> CallOutcome:
    return CallOutcome(
        adapter_id=adapter_id,
        tier=tier,
        status="error",
        output=None,
        error_class=exc.error_class,
        error_code=exc.code,
        error_message=exc.message,
        latency_ms=ms(t0),
        fixture=fixture,
    )


def handoff_outcome(manifest: Manifest, t0: float | None = None) -> CallOutcome:
    material = (
        manifest.handoff.model_dump(mode="json", exclude_none=True) if manifest.handoff else {}
    )
    return CallOutcome(
        adapter_id=manifest.id,
        tier="handoff",
        status="handoff",
        output=material,
        latency_ms=ms(t0) if t0 is not None else 0.0,
    )
