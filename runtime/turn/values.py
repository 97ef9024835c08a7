"""The typed values the turn's stages hand each other.

Each stage is a function in a module named after it (context, retrieve, plan, validate, checks,
gate, dispatch, project, answer); what one stage produces is one of these dataclasses, and the
next stage takes it as an argument. ``TurnState`` is the one mutable record of the turn so far
(the conversation, the evidence, the call rows) that every stage after retrieval reads and adds to.
"""

from __future__ import annotations

import datetime as dt
import dataclasses
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from ummaya.model.manifest import Manifest

from ..dialogue.state import Policy
from ..request_context import Session
from ..events import Event
from ..plan.protocol import Action, Evidence, ToolCall

Mode = Literal["auto", "live", "mock"]
# Which surface a turn came through; it is kept in the turn's trace (runtime/turn/turn_trace.py).
Surface = Literal["cli_ask", "cli_chat", "http_json", "http_sse", "http_retrieve", "mcp_ask", "mcp_tool",
                  "library"]


@dataclass(frozen=True)
class TraceOrigin:
    """What the surface knows of a request before its turn, for the one trace schema: the surface,
    the release alias it was resolved through, the caller's API key fingerprint (never the key).
    The request's id is ``TurnRequest.trace_id``."""

    surface: Surface = "library"
    release_alias: str | None = None
    owner: str | None = None


# What an adapter call an MCP host proposed (``TurnEngine.call_adapter``) comes from by default.
MCP_TOOL = TraceOrigin("mcp_tool")


@dataclass
class TurnRequest:
    query: str
    session_id: str | None = None
    mode: Mode = "auto"
    consents: tuple[str, ...] = ()
    top_k: int = 5
    filters: dict[str, Any] | None = None
    max_steps: int = 4
    # The whole prompt's budget (system + tools + messages + the reply) in tokens; None: the
    # planner's own (UMMAYA_LLM_CONTEXT_TOKENS, else its provider profile), 6000 for compaction.
    context_budget_tokens: int | None = None
    # How many times one call (one adapter) may be refused and sent back to the planner to repair
    # (validation, chained-argument provenance) before the turn stops ``invalid_arguments``.
    repair_budget: int = 1
    # A caller that must name the trace before the turn starts (the server's first SSE event)
    # passes its id here; None = a fresh ULID.
    trace_id: str | None = None
    # The whole turn's deadline in seconds (model steps and upstream calls together); None = the
    # engine's default (UMMAYA_TURN_DEADLINE_S, else 120 s).
    deadline_s: float | None = None
    # The session's policy mode (default | lookup_only); None keeps the session's current one.
    policy: Policy | None = None
    # Where the request came from (the trace's surface, release alias, owner).
    origin: TraceOrigin = TraceOrigin()


@dataclass
class TurnResult:
    trace_id: str
    stop_reason: str
    layer: str
    answer: str
    language: str
    release_id: str
    session_id: str
    calls: list[dict[str, Any]] = field(default_factory=list)
    evidence: list[dict[str, Any]] = field(default_factory=list)
    candidates: list[dict[str, Any]] = field(default_factory=list)
    usage: dict[str, int] = field(default_factory=dict)
    events: list[Event] = field(default_factory=list)
    error: dict[str, str] | None = None
    # The claim check's verdict on the answer (runtime/turn/claims.py): True when every claim in
    # it is traceable to this turn's evidence or the citizen's own words.
    grounded: bool = True
    removed_claims: list[dict[str, Any]] = field(default_factory=list)
    trace_stored: bool = True  # False when the store could not keep the trace (store_full …)
    # The turn's trace (turn_trace.PendingTrace), built by the engine as the turn ends; stored by
    # then unless the engine was told not to (``write_traces=False``: the server completes it).
    trace: Any = field(default=None, repr=False, compare=False)

    def to_json(self) -> dict[str, Any]:
        return {
            "trace_id": self.trace_id,
            "stop_reason": self.stop_reason,
            "layer": self.layer,
            "answer": self.answer,
            "grounded": self.grounded,
            "removed_claims": self.removed_claims,
            "language": self.language,
            "release_id": self.release_id,
            "session_id": self.session_id,
            "calls": self.calls,
            "evidence": self.evidence,
            "candidates": self.candidates,
            "usage": self.usage,
            **({"error": self.error} if self.error else {}),
            **({"trace_stored": False} if not self.trace_stored else {}),
        }


@dataclass
class TurnContext:
    """What the context stage knows before anything runs: who is asking, in which language, when,
    and what their session carries. The dialogue state hooks in here."""

    trace_id: str
    request: str  # the cleaned request text
    language: Literal["ko", "en"]
    session: Session
    slots: dict[str, Any]  # the working copy: carried slots, then what locate results add
    clock: dt.datetime  # the turn's "now" (KST)
    mode: Mode
    consents: tuple[str, ...]
    # The citizen's own words in this session, newest last (this turn's request at least). The
    # argument-provenance check accepts a personal value only if it appears here.
    citizen_texts: list[str] = field(default_factory=list)
    # The key of this session's digests of earlier personal values (runtime/dialogue/given.py);
    # None without a session. The digests themselves are ``dialogue.given``.
    given_key: bytes | None = None
    deadline: float | None = None  # loop.time() by which the whole turn must end
    # The dialogue state loaded with the session (runtime/dialogue/state.py), how this message was
    # read against it (set by the retrieve stage), and the session's policy mode.
    dialogue: Any = None
    frame: Any = None
    policy: Policy = "default"
    # The engine's catalog (its guidance: emergencies, channels, service words); None for a
    # context built outside an engine.
    catalog: Any = None
    # The emergencies the request describes (model.guidance.Emergency), said first (emergency.py).
    emergencies: list[Any] = field(default_factory=list)


@dataclass
class Candidates:
    """The retrieve stage's output: the ranked candidates and the adapters the planner may call."""

    ranked: list[dict[str, Any]]  # the retriever's rows as JSON (for the event and the trace)
    manifests: list[Manifest]  # ranked, then widened with locate providers
    widened: list[str] = field(default_factory=list)
    # The coverage at which the retriever reads a request as naming a candidate's service in other
    # words (its ``named_service``): the scope decision reads it (scope.py).
    named_coverage: float = 0.4

    @property
    def by_id(self) -> dict[str, Manifest]:
        return {m.id: m for m in self.manifests}


@dataclass
class Planned:
    """One planner step: the action, and what the planner said while deciding it."""

    action: Action
    narration: str = ""  # text the planner wrote before a tool call: kept in the trace only


@dataclass
class Checked:
    """The validate stage's verdict on one proposed step."""

    calls: list[ToolCall]
    errors: list[list[str]]  # per call, in order: its problems (empty: valid)

    @property
    def problems(self) -> list[str]:
        return [p for errs in self.errors for p in errs]


@dataclass
class Refusal:
    """An argument check's refusal of one call (before the gate): a stop reason, and for
    ``needs_input`` the slots to ask the citizen for."""

    check: str
    adapter_id: str
    field: str
    reason: str  # a stop reason: needs_input | permission_denied | invalid_arguments
    message: str
    missing: list[str] = dataclasses.field(default_factory=list)  # `field` is the class's own name
    # The planner may be told and try again (within the turn's repair budget): a guessed coordinate
    # can be replaced by a locate step's; a personal value the citizen never gave cannot.
    repairable: bool = False
    citizen_text: str | None = None  # the stop's text for the citizen, when the message is the planner's


@dataclass
class CheckInput:
    context: TurnContext
    calls: list[ToolCall]
    candidates: dict[str, Manifest]
    consents: Any  # the ConsentBook (has_consent(session_id, adapter_id))
    # This turn's evidence so far (manifest, evidence): what a chained argument may come from.
    evidence: list[tuple[Manifest, Evidence]] = field(default_factory=list)


class ArgumentCheck(Protocol):
    """A check on validated arguments that runs between validate and gate (runtime/turn/checks.py).
    Argument provenance and the personal-data guard are two; each returns its refusals."""

    name: str

    def __call__(self, given: CheckInput) -> list[Refusal]: ...


@dataclass
class Dispatched:
    call: ToolCall
    manifest: Manifest
    outcome: Any  # dispatch.outcome.Outcome


@dataclass
class TurnState:
    """The turn so far, shared by the stages after retrieval."""

    messages: list[dict[str, Any]]
    evidence: list[tuple[Manifest, Evidence]] = field(default_factory=list)
    calls: list[dict[str, Any]] = field(default_factory=list)
    usage: dict[str, int] = field(default_factory=dict)
    deltas: list[str] = field(default_factory=list)
    repair: str | None = None
    repair_kind: str = "validation"
    repaired: bool = False  # the one validation repair is used
    grounding_repaired: bool = False  # the one "answer from evidence" repair is used
    consented: set[str] = field(default_factory=set)  # adapters that passed the gate on a recorded consent
    grounded: bool = True
    removed: list[dict[str, Any]] = field(default_factory=list)  # claims the claim check removed
    asked: dict[str, Any] | None = None  # the question a needs_input stop asks (adapter, missing, arguments)
    notes: list[str] = field(default_factory=list)  # one-line notes for the answer (Mock for another place)
    # The session's slots as the turn began (after the dialogue read the message): what a model's
    # prompt shows as session data, fixed for the turn so the prompt prefix does not move.
    carried: dict[str, Any] | None = None
    repairs: dict[str, int] = field(default_factory=dict)  # adapter id -> repairs used this turn
    dispatched: dict[str, str] = field(default_factory=dict)  # call signature -> evidence id
    prompt: dict[str, Any] = field(default_factory=dict)  # the planner's last budget report
    # The best candidate is a locate adapter: finding the place is the request, so a locate
    # result answers it (otherwise a locate result is only the means to another call).
    end_is_locate: bool = False
    emergencies: list[Any] = field(default_factory=list)  # model.guidance.Emergency the request describes
    moved: dict[str, str] = field(default_factory=dict)  # call id -> the day Mock moved its recording from


@dataclass
class CallEnd:
    """How one adapter call proposed by someone other than a planner (an MCP host) ended after the
    turn's stages: the stop (None when it completed), the adapter's full schema-valid output, and
    the turn's call rows and evidence. ``TurnEngine.call_adapter`` returns it with the trace's
    ``TurnResult``."""

    trace_id: str
    session_id: str
    reason: str
    layer: str
    stop: Stop | None
    output: dict[str, Any] | None
    calls: list[dict[str, Any]]
    evidence: list[tuple[str, Any]]  # (call id, Evidence), as the turn's state holds them


class Stop(Exception):
    """A stage ends the turn: the stop reason, the engine's text for it, a detail for the event."""

    def __init__(self, reason: str, text: str, detail: str = "", layer: str | None = None,
                 parts: list[Any] | None = None):
        """``parts`` (answer.Part): the text laid out in pieces for surfaces that show them apart
        (the page); when given, ``text`` is what they join to."""
        super().__init__(reason)
        self.reason, self.text, self.detail, self.layer = reason, text, detail, layer
        self.parts = parts
