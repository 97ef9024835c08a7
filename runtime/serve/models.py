"""Request and response models of the serving API (they are the OpenAPI document)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .releases import DEFAULT_ALIAS

_ID = r"^[A-Za-z0-9_.:\-]{1,128}$"
FilterValue = str | list[str]


class Filters(BaseModel):
    """Each value is one string or a list of strings (any of them matches)."""

    model_config = ConfigDict(extra="allow", json_schema_extra={"additionalProperties": False})

    primitive: FilterValue | None = Field(None, description="locate | find | check | send")
    tier: FilterValue | None = Field(None, description="live | mock | handoff")
    domain: FilterValue | None = None
    agency: FilterValue | None = Field(None, description="agency code, Korean or English name")


class Generation(BaseModel):
    model_config = ConfigDict(extra="forbid")

    planner: Literal["offline", "openai"] = Field(
        "offline", description="offline: the embedded deterministic planner; openai: the "
        "OpenAI-compatible provider configured on the server (UMMAYA_LLM_*)")
    model: str | None = Field(None, min_length=1, max_length=200, pattern=r"^[\x21-\x7e]+$",
                              description="model name (openai planner); default UMMAYA_LLM_MODEL")
    temperature: float | None = Field(None, ge=0, le=2)
    max_tokens: int | None = Field(None, ge=1, le=32768)
    timeout_s: float | None = Field(None, gt=0, le=120, description="per provider request")


class RetrieveRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    project_id: str = Field("default", pattern=_ID)
    knowledge_base_id: str = Field("registry", pattern=_ID, description="the adapter registry")
    release_alias: str = Field(DEFAULT_ALIAS, pattern=_ID, description="an alias or a release id")
    query: str = Field(..., max_length=20000)
    top_k: int | None = Field(None, ge=1, le=50, description="default: the release's policy")
    filters: Filters | None = None
    stream: bool = False
    session_id: str | None = Field(None, pattern=_ID)


class AnswerRequest(RetrieveRequest):
    generation: Generation = Field(default_factory=Generation)
    consents: list[str] = Field(default_factory=list, max_length=32,
                                description="adapter ids the citizen consents to for this session")
    mode: Literal["auto", "live", "mock"] = Field(
        "auto", description="auto: live where the server has credentials, else mock (labelled)")


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


class AnswerResponse(BaseModel):
    trace_id: str
    release: ReleaseRef
    evidence: list[Evidence]
    calls: list[Call]
    answer: str
    stop_reason: str
    usage: dict[str, int]
    session_id: str
    language: str


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
