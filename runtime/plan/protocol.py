"""What every planner (the embedded offline planner, the OpenAI-compatible provider) speaks.

A planner sees only the narrowed candidates and the conversation so far, and proposes exactly one
bounded action: call adapters (one step; several independent calls may run together), ask the user
for something, or answer from the evidence.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from ummaya.model.manifest import Manifest


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
    # What the planner measured of its prompt (system, tools, messages, the limit, what it trimmed)
    # — the ``budget`` event; empty for a planner that sends no prompt.
    prompt: dict[str, Any] = field(default_factory=dict)
    # The planner that actually decided (a fallback planner names the one it fell back to) and,
    # when it fell back, why: {"from", "code", "message"}.
    planner: str | None = None
    fallback: dict[str, Any] | None = None


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
    # Mock only: the day of the recording whose timestamps were moved to today (runtime/dispatch/
    # calendar.py); the answer's Mock label says so once.
    moved_from: str | None = None


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
    # The turn's identity and fixed facts, the same at every step of it: a model's prompt prefix
    # stays byte-identical across steps only if nothing in it moves (the clock is the turn's, set
    # once; ``carried`` are the session's slots as the turn began, not what this turn added).
    trace_id: str = ""
    clock: dt.datetime | None = None
    carried: dict[str, Any] | None = None
    max_steps: int | None = None  # the step budget: step == max_steps - 1 is the last one
    # The whole prompt's budget in tokens (system + tools + messages + the reply), when the caller
    # set one (CLI --context-tokens, HTTP generation.context_tokens, MCP ask); None: the planner's.
    context_tokens: int | None = None


# The engine's instructions to a model (a planner's system prompt and repair prompts): never part
# of an answer. Planners register them; the claim check removes a sentence that repeats one
# (runtime/turn/claims.py, PrivateText).
PRIVATE_PROMPTS: list[str] = []


def private_prompts(*texts: str) -> None:
    PRIVATE_PROMPTS.extend(t for t in texts if t not in PRIVATE_PROMPTS)


class ProviderError(Exception):
    """A model provider failure with a stable public code.

    Codes: provider_timeout, provider_unavailable, provider_rate_limited, provider_stream_cut,
    provider_capability (no tool calling / unknown model), provider_bad_response,
    provider_auth (401/403: the key is missing, wrong or not allowed; an operator must act, retrying
    will not help), provider_config (a required setting is missing; the message names the
    environment variable).
    """

    def __init__(self, code: str, message: str, *, retry_after: float | None = None,
                 transient: bool = False):
        # The message reaches clients (JSON, SSE, MCP, the CLI) and names the provider's URL: a
        # password or token in UMMAYA_LLM_BASE_URL, or a key quoted back, is removed here, once.
        from ummaya.wire.credentials import strip_credentials

        message = strip_credentials(message)
        super().__init__(message)
        self.code = code
        self.message = message
        self.retry_after = retry_after
        # Worth one more try: a 502/503, a refused connection, a stream cut before anything of it
        # arrived. A failure after part of a reply is not (its text was never checked).
        self.transient = transient


class Planner(Protocol):
    name: str

    async def plan(
        self, ctx: PlanContext, on_delta: Callable[[str], None] | None = None
    ) -> Action: ...
