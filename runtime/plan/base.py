"""What every planner (the embedded offline planner, the OpenAI-compatible provider) speaks.

A planner sees only the narrowed candidates and the conversation so far, and proposes exactly one
bounded action: call adapters (one step; several independent calls may run together), ask the user
for something, or answer from the evidence.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from ummaya.codegen.manifest import Manifest


@dataclass
class ToolCall:
    id: str
    adapter_id: str
    arguments: dict[str, Any] | None  # None when the model sent arguments that are not JSON
    raw_arguments: str = ""  # what the model actually sent, for the repair message and the trace


@dataclass
class Action:
    kind: Literal["call", "answer", "ask"]
    calls: list[ToolCall] = field(default_factory=list)
    text: str = ""  # answer text, or the question when asking
    missing: list[str] = field(default_factory=list)  # slot names, when asking
    usage: dict[str, int] = field(default_factory=dict)  # prompt_tokens, completion_tokens


@dataclass
class Evidence:
    """A compact projection of one adapter result: what goes back into the conversation."""

    evidence_id: str
    call_id: str
    adapter_id: str
    tier: str  # the tier actually used: live | mock | handoff
    status: str  # ok | no_data | error | handoff
    summary: dict[str, Any]  # compact JSON (records trimmed), never instructions
    citation: dict[str, Any]
    freshness: str | None = None
    # The adapter's full output: what the citizen's view is rendered from. Never sent to a model
    # (its tool message carries ``summary``, trimmed to the context budget).
    output: dict[str, Any] | None = field(default=None, repr=False, compare=False)


@dataclass
class PlanContext:
    request: str
    language: Literal["ko", "en"]
    candidates: list[Manifest]
    # OpenAI chat-completions messages so far (system, user, assistant tool_calls, tool results).
    messages: list[dict[str, Any]]
    evidence: list[Evidence]
    slots: dict[str, Any]  # carried session slots (e.g. resolved coordinates)
    step: int
    repair: str | None = None  # what the planner gets once to repair (see repair_kind)
    # "validation": ``repair`` is the validator's error for the rejected call; "ungrounded": the
    # planner answered with no evidence and ``repair`` is its rejected text.
    repair_kind: str = "validation"
    # What the dialogue adds (runtime/dialogue/resolve.py ``Hints``): the place the message gives
    # without an anchor, arguments carried from the last intent, reusable references. None on a
    # turn without a session.
    dialogue: Any = None


class ProviderError(Exception):
    """A model provider failure with a stable public code.

    Codes: provider_timeout, provider_unavailable, provider_rate_limited, provider_stream_cut,
    provider_capability (no tool calling / unknown model), provider_bad_response,
    provider_auth (401/403: the key is missing, wrong or not allowed; an operator must act, retrying
    will not help), provider_config (a required setting is missing; the message names the
    environment variable).
    """

    def __init__(self, code: str, message: str, *, retry_after: float | None = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.retry_after = retry_after


class Planner(Protocol):
    name: str

    async def plan(
        self, ctx: PlanContext, on_delta: Callable[[str], None] | None = None
    ) -> Action: ...
