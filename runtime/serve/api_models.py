"""Request and response models of the serving API (they are the OpenAPI document)."""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeVar, Union

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StringConstraints, WithJsonSchema

from .releases import DEFAULT_ALIAS

_ID = r"^[A-Za-z0-9_.:\-]{1,128}$"
# At least one letter or digit of a script we read (Latin, Greek, Cyrillic, Hebrew, Arabic, Thai,
# Hangul, kana, CJK): a query without one is empty after normalisation (code empty_query).
QUERY_PATTERN = ("[0-9A-Za-z\u00c0-\u024f\u0370-\u03ff\u0400-\u04ff\u05d0-\u05ea\u0620-\u064a"
                 "\u0e01-\u0e30\u1100-\u11ff\u3041-\u30ff\u3131-\u318e\u4e00-\u9fff\uac00-\ud7a3]")
MAX_QUERY_CHARS = 2000
def _integral(v: Any) -> Any:
    """JSON Schema counts 46.0 as an integer; strict pydantic would not."""
    return int(v) if isinstance(v, float) and v.is_integer() else v


# Integer ranges as JSON Schema says them (46.0 is an integer there). Written out, not built by a
# function: a type checker reads an annotation, it does not run one.
MaxTokens = Annotated[int, BeforeValidator(_integral), Field(ge=1, le=32768),
                      WithJsonSchema({"type": "integer", "minimum": 1, "maximum": 32768})]
ContextTokens = Annotated[int, BeforeValidator(_integral), Field(ge=256, le=10_000_000),
                          WithJsonSchema({"type": "integer", "minimum": 256, "maximum": 10_000_000})]
TopK = Annotated[int, BeforeValidator(_integral), Field(ge=1, le=50),
                 WithJsonSchema({"type": "integer", "minimum": 1, "maximum": 50})]
AdapterId = Annotated[str, StringConstraints(pattern=r"^[a-zA-Z0-9_-]{1,64}$")]
FilterText = Annotated[str, StringConstraints(min_length=1, max_length=100, pattern=r"\S")]
Primitive = Literal["locate", "find", "check", "send"]
Tier = Literal["live", "mock", "handoff"]


_T = TypeVar("_T")
# One value or a list of 1–16 of them (a generic alias, so each filter key says its own type).
OneOrMany = Union[_T, Annotated[list[_T], Field(min_length=1, max_length=16)], None]


class Filters(BaseModel):
    """Each value is one value or a list of 1–16 (any of them matches). A key the release's policy
    does not allow → 422 ``unknown_filter``; a value that cannot match → 422 ``invalid_filter``."""

    model_config = ConfigDict(extra="allow", strict=True, json_schema_extra={"additionalProperties": False})

    primitive: OneOrMany[Primitive] = None
    tier: OneOrMany[Tier] = None
    domain: OneOrMany[FilterText] = None
    agency: OneOrMany[FilterText] = Field(None, description="agency code, Korean or English name")


class Generation(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    planner: Literal["offline", "openai"] = Field(
        "offline", description="offline: the embedded deterministic planner; openai: the "
        "OpenAI-compatible provider configured on the server (UMMAYA_LLM_*)")
    model: str | None = Field(None, min_length=1, max_length=200, pattern=r"^[\x21-\x7e]+$",
                              description="model name (openai planner); default UMMAYA_LLM_MODEL")
    temperature: float | None = Field(None, ge=0, le=2)
    max_tokens: MaxTokens | None = None
    timeout_s: float | None = Field(None, gt=0, le=120, description="per provider request")
    context_tokens: ContextTokens | None = Field(
        None, description="the model's context in tokens: the whole prompt (system, tools, messages) plus "
        "the reply must fit; the planner trims tools, then earlier results, and reports it (default: "
        "UMMAYA_LLM_CONTEXT_TOKENS, else the provider profile's)")


class RetrieveRequest(BaseModel):
    # strict: JSON types as the schema says (no "5" for 5, no 0 for false)
    model_config = ConfigDict(extra="forbid", strict=True)

    project_id: str = Field("default", pattern=_ID)
    knowledge_base_id: str = Field("registry", pattern=_ID, description="the adapter registry")
    release_alias: str = Field(DEFAULT_ALIAS, pattern=_ID, description="an alias or a release id")
    query: str = Field(..., min_length=1, max_length=MAX_QUERY_CHARS, pattern=QUERY_PATTERN,
                       description="the citizen's request (Korean or English); empty → empty_query, "
                       "over 2000 characters → query_too_long (refused, never truncated)")
    top_k: TopK | None = Field(None, description="default: the release's policy "
                                  "(above the release's max_top_k: clamped)")
    filters: Filters | None = None
    stream: bool = False
    session_id: str | None = Field(None, pattern=_ID, description=(
        "omit on the first turn: the server issues one (answer: `session_id` in the JSON response "
        "and in the SSE `metadata` event); send it back to continue. An id the server did not issue "
        "(or issued to another API key) → 404 session_not_found"))


class AnswerRequest(RetrieveRequest):
    generation: Generation = Field(default_factory=Generation)
    consents: list[AdapterId] = Field(default_factory=list, max_length=32,
                                      description="adapter ids the citizen consents to for this "
                                      "session (unknown to the release → 404 unknown_adapter)")
    mode: Literal["auto", "live", "mock"] = Field(
        "auto", description="auto: live where the server has credentials, else mock (labelled)")
    policy: Literal["default", "lookup_only"] | None = Field(
        None, description="the session's policy mode: lookup_only never goes on into a protected "
        "check, sign-in or submission (says so); omitted: the session's current mode (default)")


class ErrorDetail(BaseModel):
    code: str
    message: str
    trace_id: str | None


class ErrorResponse(BaseModel):
    error: ErrorDetail


class ReleaseRef(BaseModel):
    id: str
    alias: str | None


class Evidence(BaseModel):
    rank: int
    score: float | None = Field(description="the reranked score of the adapter that produced it")
    content: dict[str, Any] = Field(description="the projected upstream data (compact, data only)")
    citation: dict[str, Any]
    metadata: dict[str, Any] = Field(description="evidence_id, call_id, adapter_id, primitive, tier, status, freshness")


class Call(BaseModel):
    model_config = ConfigDict(extra="allow")

    adapter_id: str
    primitive: str | None
    tier: str
    status: str
    upstream_url: str | None = Field(None, description="the upstream request URL, secrets removed")
    arguments: dict[str, Any] | None = Field(
        None, description="the arguments sent (after the personal-data guard): what left the machine")


class AnswerResponse(BaseModel):
    trace_id: str | None = Field(description="The stored trace; null when the store could not keep it "
                                 "(then trace_stored is false)")
    release: ReleaseRef
    evidence: list[Evidence]
    calls: list[Call]
    answer: str
    stop_reason: str
    grounded: bool = Field(description="True when every claim in the answer is backed by this turn's "
                           "evidence or the citizen's own words; false when the claim check removed "
                           "something or the turn stopped as ungrounded")
    removed_claims: list[dict[str, Any]] = Field(
        default_factory=list, description="What the claim check removed: {kind, claim, sentence}")
    usage: dict[str, int]
    session_id: str | None = Field(description="The session to continue; null when the store could not "
                                   "issue one")
    language: str
    trace_stored: bool = Field(default=True, description="False when the store could not keep this "
                               "turn's trace (store_full, store_busy, store_unavailable): the answer stands")


class Candidate(BaseModel):
    rank: int
    score: float
    content: dict[str, Any] = Field(description="title and summary in the request's language")
    citation: dict[str, Any]
    metadata: dict[str, Any]


class RetrieveResponse(BaseModel):
    trace_id: str
    release: ReleaseRef
    candidates: list[Candidate]
    dropped: list[dict[str, Any]]
    policy: dict[str, Any]


class ReleaseInfo(BaseModel):
    model_config = ConfigDict(extra="allow")

    release_id: str
    created_at: str
    catalog_sha256: str | None
    retrieval_policy: dict[str, Any]
    meta: dict[str, Any]
    aliases: list[str]
    evaluations: dict[str, Any] = Field(default_factory=dict, description=(
        "per suite (retrieval, turns, conversations, …): status ok | missing | error, the figures "
        "(higher is better), when and on which evaluation set; what the promotion gate compares"))
    history: list[dict[str, Any]] = Field(default_factory=list, description=(
        "every alias move to this release: alias, previous release, when, by whom, forced and why"))


class ReleasesResponse(BaseModel):
    releases: list[ReleaseInfo]
    aliases: dict[str, str]
    default_alias: str


class TraceResponse(BaseModel):
    model_config = ConfigDict(extra="allow")

    trace_id: str
    created_at: str
    expires_at: str
    release_id: str | None
    release_alias: str | None
    stop_reason: str | None
    state: str
    states: list[dict[str, Any]]
    timings: dict[str, Any]


class Health(BaseModel):
    status: str
    release: ReleaseRef | None = None
    traces: dict[str, int] | None = Field(
        None, description="The trace writer's queue (/healthz): queued, capacity, submitted, stored, "
                          "failed, rejected (refused: queue full), batches, max_queued.")
