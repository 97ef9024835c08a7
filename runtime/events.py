"""One event type flows through the whole turn.

The CLI prints events, the SSE stream sends them, the trace store keeps them. A stage that has
something to say emits an event; nobody reaches into another stage's internals.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

EventType = Literal[
    "turn_started",  # data: request (redacted), language, session_id, mode, release_id
    "candidates",  # data: {"candidates": [{adapter_id, primitive, tier, score}]}
    "plan",  # data: {"planner", "action": "call"|"answer"|"ask", "calls": [...], "step"}
    "validation",  # data: {"adapter_id", "ok", "errors": [...], "repair": bool}
    "dialogue",  # data: {"loaded": state, "frame": how the message was read} or {"saved": state}
    "redaction",  # data: {"adapter_id", "field", "kinds", "action"}: personal data kept from an upstream (never the value)
    "check",  # data: {"check", "adapter_id", "field", "reason", "message", "missing"}: an argument check refused a call
    "permission",  # data: {"adapter_id", "gate", "decision": "allow"|"consent_required"|"deny", "consent_id"}
    "call_started",  # data: {"call_id", "adapter_id", "primitive", "tier", "arguments"}
    "call_finished",  # data: {"call_id", "adapter_id", "tier", "status", "latency_ms", "upstream_url", "error"}
    "evidence",  # data: {"evidence_id", "adapter_id", "tier", "summary", "citation", "freshness"}
    "compaction",  # data: {"before_tokens", "after_tokens", "compacted": [call ids], "limit_tokens"}
    "budget",  # data: {"step", "system_tokens", "tools_tokens", "messages_tokens", "prompt_tokens", "limit_tokens", "fits", "trimmed", …}: a model's whole prompt
    "loop",  # data: {"repeated": [{adapter_id, arguments, answered_by}], "dispatched"}: calls already answered this turn
    "answer_from_evidence",  # data: {"why", "code", "message", "evidence"}: the engine answered from evidence held
    "delta",  # data: {"text"}
    "answer",  # data: {"text", "language"}
    "stop",  # data: {"stop_reason", "layer", "detail"}
    "error",  # data: {"code", "message"}
]

# Stop reasons, exact strings (ARCHITECTURE.md contract).
STOP_REASONS = (
    "completed",
    "needs_input",
    "no_adapter",
    "invalid_arguments",
    "consent_required",
    "permission_denied",
    "credential_missing",
    "channel_unavailable",
    "adapter_error",
    "budget_exhausted",
    "handoff_required",
    "ungrounded",
)

# The layer that stopped a turn, named in the stop event (the stage that decided it).
STOP_LAYER = {
    "completed": "answer",
    "needs_input": "plan",
    "no_adapter": "retrieve",
    "invalid_arguments": "validate",
    "consent_required": "gate",
    "permission_denied": "gate",
    "credential_missing": "dispatch",
    "channel_unavailable": "dispatch",
    "adapter_error": "dispatch",
    "budget_exhausted": "context",
    "handoff_required": "dispatch",
    "ungrounded": "answer",
}

# Stop reasons that are failures of an upstream: the turn ends "failed", and the serving API and
# MCP report them as errors, not answers (one list for every surface).
UPSTREAM_STOPS = ("adapter_error", "channel_unavailable", "credential_missing")


class Event(BaseModel):
    seq: int = Field(ge=0, description="Sequence number within the turn (also the SSE id)")
    type: EventType
    stage: str
    t_ms: float = Field(description="Milliseconds since the turn started")
    data: dict[str, Any] = Field(default_factory=dict)
