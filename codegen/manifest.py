"""The adapter manifest: a pydantic model that *is* the schema.

Its JSON Schema (draft 2020-12) is published as ``generated/manifest.schema.json``. Unknown keys are
errors everywhere (``extra="forbid"``) so a typo never silently disables a field.

An upstream *profile* (``registry/_profiles/<name>.yaml``) carries what many adapters share — the
data.go.kr key parameter, envelope and result codes; Kakao's header auth; SGIS's token exchange —
and a manifest's ``upstream.profile`` names it, adding only what is its own.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

ADAPTER_ID = r"^[a-z][a-z0-9_]{0,63}$"  # snake_case; also a valid OpenAI tool name
SEMVER = r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z.-]+)?$"

Primitive = Literal["locate", "find", "check", "send"]
Tier = Literal["live", "mock", "handoff"]
Gate = Literal["read-only", "login", "action", "sign", "send", "blocked"]

# Slot types an input field may declare with ``x-slot``. The offline planner has one extractor per
# slot type, shared by every adapter; a new adapter needs no planner code.
SLOT_TYPES = (
    "place",
    "coordinates",
    "latitude",
    "longitude",
    "date",
    "time",
    "region_name",
    "region_code",
    "sido_name",
    "sigungu_name",
    "drug_name",
    "stop_name",
    "city_code",
    "node_id",
    "keyword",
    "free_text",
    "person_name",
    "birth_date",
    "phone",
    "vehicle_number",
    "amount",
    "reference_number",
    "specialty",
    "life_stage",
    "target_group",
    "year",
    "count",  # how many results a citizen asks for ("가까운 3곳"); optional, schema default otherwise
)


def slot_types() -> tuple[str, ...]:
    """``SLOT_TYPES`` (the planner's built-in slots) plus every slot type with a registered
    extractor (runtime/plan/extractors.py): a new slot type needs no edit here."""
    from ummaya.runtime.plan.extractors import SLOT_EXTRACTORS

    return tuple(dict.fromkeys((*SLOT_TYPES, *SLOT_EXTRACTORS)))


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=False)


class Bilingual(Strict):
    ko: str = Field(min_length=1)
    en: str = Field(min_length=1)


class BilingualList(Strict):
    ko: list[str] = Field(default_factory=list)
    en: list[str] = Field(default_factory=list)


class Agency(Strict):
    code: str = Field(min_length=1, description="Short code, e.g. NMC, KMA, MOIS")
    name_ko: str = Field(min_length=1)
    name_en: str = Field(min_length=1)


class NegativeExample(Strict):
    text: str = Field(min_length=1, description="A request that looks similar but belongs elsewhere")
    belongs_to: str | None = Field(
        default=None, description="The adapter id that serves it, or null when nothing does"
    )


class ConsentNotice(Strict):
    """What 개인정보 보호법 제15조/제22조 require a consent request to show."""

    purpose: Bilingual
    data_items: list[str] = Field(min_length=1, description="Personal data items collected")
    retention: Bilingual
    refusal: Bilingual = Field(description="The right to refuse and the consequence of refusing")


class Permission(Strict):
    gate: Gate
    consent: ConsentNotice | None = None

    @model_validator(mode="after")
    def _consent_for_protected(self) -> Permission:
        if self.gate not in ("read-only", "blocked") and self.consent is None:
            raise ValueError(f"gate '{self.gate}' needs a consent notice (permission.consent)")
        return self


class Citation(Strict):
    title: str = Field(min_length=1)
    url: str = Field(pattern=r"^https?://")
    verified: dt.date = Field(description="Date the citation was last checked")
    basis: str | None = Field(
        default=None, description="Legal or policy basis (required for check/send primitives)"
    )


AuthStyle = Literal["none", "query", "header", "token_exchange"]
EnvelopeKind = Literal[
    "data_go_kr",  # response.header.resultCode + response.body.items.item (XML or JSON)
    "flat_result",  # top-level resultCode/resultMsg (e.g. KOROAD)
    "header_body",  # top-level header/body without a response wrapper (e.g. MFDS e약은요)
    "juso",  # results.common.errorCode + results.juso
    "kakao",  # meta + documents; errors are HTTP 4xx {errorType, message}
    "sgis",  # errCd/errMsg + result
    "wanted_list",  # MOHW welfare: wantedList{resultCode,...,servList}
    "json",  # plain JSON object; records at record_path
]


class Auth(Strict):
    style: AuthStyle = "none"
    param: str | None = Field(default=None, description="Query parameter or header name")
    prefix: str = Field(default="", description="Value prefix, e.g. 'KakaoAK ' for Kakao")
    credential: str | None = Field(default=None, description="Environment variable holding the key")
    # token_exchange (SGIS): GET token_path with the listed credentials, read token_field from the
    # response, send it as `param`; cached for token_ttl_s and refreshed when expired_codes appear.
    token_path: str | None = None
    token_params: dict[str, str] = Field(
        default_factory=dict, description="Upstream parameter -> environment variable"
    )
    token_field: str | None = None
    token_ttl_s: int = 3600
    expired_codes: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _complete(self) -> Auth:
        if self.style in ("query", "header") and not (self.param and self.credential):
            raise ValueError(f"auth style '{self.style}' needs 'param' and 'credential'")
        if self.style == "token_exchange" and not (
            self.param and self.token_path and self.token_params and self.token_field
        ):
            raise ValueError(
                "auth style 'token_exchange' needs 'param', 'token_path', 'token_params' and "
                "'token_field'"
            )
        return self


ErrorMeaning = Literal["credential_missing", "quota", "channel_unavailable", "adapter_error", "no_data"]


class ErrorRule(Strict):
    """One line of a profile's error taxonomy: result codes and/or a message pattern → a class.

    Rules are tried in order before the plain code lists; a rule with both ``codes`` and
    ``message`` needs both to match (data.go.kr sends key errors as code 99 told apart only by the
    message). ``retry`` overrides the class default (quota and channel_unavailable retry)."""

    codes: list[str] = Field(default_factory=list)
    message: str | None = Field(default=None, description="Case-insensitive regular expression")
    means: ErrorMeaning
    retry: bool | None = None
    note: str | None = None

    @model_validator(mode="after")
    def _something(self) -> ErrorRule:
        if not self.codes and not self.message:
            raise ValueError("an error rule needs 'codes', 'message' or both")
        if self.message:
            try:
                re.compile(self.message)
            except re.error as exc:
                raise ValueError(f"message: not a regular expression: {exc}") from exc
        return self


class GuideRef(Strict):
    name: str = Field(min_length=1, description="The guide's title as the agency publishes it")
    version: str = Field(min_length=1, description="Its version or publication date")


class ResponseFields(Strict):
    """What the operation's guide documents as its response (the link stage holds mappings and
    fixtures to it). ``record`` are one record's fields; ``envelope`` the fields around the
    records (header/body/paging), usually declared once in the profile."""

    guide: GuideRef
    record: list[str] = Field(default_factory=list)
    envelope: list[str] = Field(default_factory=list)
    values: list[str] = Field(
        default_factory=list,
        description="Documented category codes a post-processor turns into fields (KMA pivots)",
    )
    masked: list[str] = Field(
        default_factory=list,
        description="Record fields the live service masks (e.g. 김**, 010********): fixtures too",
    )


class Envelope(Strict):
    kind: EnvelopeKind
    code_path: str | None = Field(default=None, description="Dotted path to the result code")
    message_path: str | None = None
    total_path: str | None = None
    success_codes: list[str] = Field(default_factory=list)
    no_data_codes: list[str] = Field(default_factory=list)
    # Codes (upstream result codes) mapped to the engine's error classes.
    transient_codes: list[str] = Field(default_factory=list)
    credential_codes: list[str] = Field(default_factory=list)
    quota_codes: list[str] = Field(default_factory=list)
    gateway_xml_errors: bool = Field(
        default=False,
        description="The gateway answers errors as <OpenAPI_ServiceResponse> XML even for JSON",
    )
    errors: list[ErrorRule] = Field(
        default_factory=list, description="Error taxonomy: codes and message patterns → classes"
    )


class Profile(Strict):
    """Shared upstream facts, one file under registry/_profiles/."""

    id: str = Field(pattern=ADAPTER_ID)
    title: str
    base_url: str | None = Field(default=None, pattern=r"^https://")
    auth: Auth = Field(default_factory=Auth)
    envelope: Envelope | None = None
    format_param: dict[str, str] = Field(default_factory=dict)
    static_params: dict[str, Any] = Field(default_factory=dict)
    timeout_s: float = 10.0
    rate_limit_per_s: float | None = None
    docs_url: str | None = None
    response_fields: ResponseFields | None = None


class FieldMap(Strict):
    """How one output field is taken from an upstream record."""

    source: str = Field(description="Dotted path inside the upstream record")
    transform: str | None = Field(
        default=None,
        description="Named shared transform (strip_html, int, float, none_if_dash, yyyymmddhhmmss)",
    )


class Lookup(Strict):
    """A preliminary request that fills an input the main request needs but a citizen never knows
    (e.g. TAGO: stop name -> nodeId). Declared, not coded: the engine runs it when
    ``when_missing`` is absent from the arguments and takes ``pick`` from the first record."""

    when_missing: str = Field(description="Input field whose absence triggers the lookup")
    path: str = Field(pattern=r"^/")
    params: dict[str, str] = Field(default_factory=dict, description="Upstream param -> input field")
    static_params: dict[str, Any] = Field(default_factory=dict)
    record_path: str
    pick: dict[str, str] = Field(description="Input field to fill -> upstream record field")


class Upstream(Strict):
    profile: str | None = Field(default=None, description="Name of a registry/_profiles/ file")
    base_url: str | None = Field(default=None, pattern=r"^https://")
    path: str = Field(pattern=r"^/")
    method: Literal["GET", "POST"] = "GET"
    auth: Auth | None = None
    format: Literal["json", "xml"] = "json"
    format_param: dict[str, str] | None = None
    params: dict[str, str] = Field(
        default_factory=dict, description="Upstream parameter name -> input field name"
    )
    derived_params: dict[str, str] = Field(
        default_factory=dict,
        description="Upstream parameter -> shared resolver expression (e.g. 'kma_grid.nx')",
    )
    static_params: dict[str, Any] = Field(default_factory=dict)
    envelope: Envelope | None = None
    record_path: str | None = Field(default=None, description="Dotted path to the record list")
    fields: dict[str, str | FieldMap] = Field(
        default_factory=dict, description="Output item field -> upstream record field"
    )
    postprocess: str | None = Field(
        default=None, description="Named shared post-processor over the record list"
    )
    lookup: Lookup | None = None
    callable: bool = Field(
        default=True,
        description="False for mock-tier adapters whose real channel this project cannot call",
    )
    timeout_s: float | None = Field(
        default=None, gt=0, le=120, description="Total deadline of one call (connect+read+body, retries included)"
    )
    response_fields: ResponseFields | None = None
    rate_limit_per_s: float | None = None
    cache_ttl_s: int | None = Field(default=None, ge=0)
    notes: str | None = Field(default=None, description="Tolerances and (verify) caveats")


class HandoffChannel(Strict):
    channel: Bilingual
    url: str = Field(pattern=r"^https?://")
    steps: BilingualList
    documents: BilingualList = Field(default_factory=BilingualList)
    deadline: Bilingual | None = None
    offline: Bilingual | None = Field(default=None, description="Walk-in alternative")
    phone: str | None = None


class Fixture(Strict):
    name: str = Field(pattern=r"^[a-z0-9_]+$")
    description: str | None = None
    request: dict[str, Any] = Field(description="Adapter arguments (validated by input_schema)")
    response: str | None = Field(
        default=None, description="Upstream body file, relative to fixtures/<adapter_id>/"
    )
    status: int = Field(default=200, ge=100, le=599)
    content_type: str | None = None
    expected: dict[str, Any] | None = Field(
        default=None, description="Expected projected output; validated against output_schema"
    )
    expected_error: str | None = Field(
        default=None,
        description="Expected error class for error fixtures (adapter_error, channel_unavailable, "
        "credential_missing)",
    )
    # Provenance (issue 12): where the body came from. The link stage requires it.
    source: Literal["recorded", "documented", "synthetic"] | None = None
    guide: GuideRef | None = Field(default=None, description="The guide a documented body follows")
    recorded_on: dt.date | None = Field(default=None, description="Date a recorded body was taken")

    @model_validator(mode="after")
    def _provenance(self) -> Fixture:
        if self.source == "documented" and self.guide is None:
            raise ValueError("a documented fixture names its guide (guide: {name, version})")
        if self.source == "recorded" and self.recorded_on is None:
            raise ValueError("a recorded fixture carries its recording date (recorded_on)")
        return self

    @model_validator(mode="after")
    def _one_outcome(self) -> Fixture:
        if (self.expected is None) == (self.expected_error is None):
            raise ValueError("a fixture needs exactly one of 'expected' or 'expected_error'")
        return self


class Manifest(Strict):
    id: str = Field(pattern=ADAPTER_ID)
    version: str = Field(pattern=SEMVER)
    title: Bilingual
    summary: Bilingual
    agency: Agency
    domain: str = Field(pattern=r"^[a-z][a-z_]*$")
    primitive: Primitive
    tier: Tier
    search_hints: BilingualList
    examples: BilingualList
    negative_examples: list[NegativeExample] = Field(default_factory=list)
    permission: Permission
    citation: Citation
    credentials: list[str] = Field(default_factory=list)
    upstream: Upstream | None = None
    input_schema: dict[str, Any]
    output_schema: dict[str, Any]
    requires: list[str] = Field(
        default_factory=list, description="Slot types an earlier primitive must fill"
    )
    provides: list[str] = Field(
        default_factory=list, description="Slot types this adapter's output fills (locate)"
    )
    render: Bilingual | None = Field(
        default=None, description="jinja2 templates phrasing the evidence per language"
    )
    handoff: HandoffChannel | None = None
    fixtures: list[Fixture] = Field(default_factory=list)

    @field_validator("credentials")
    @classmethod
    def _env_names(cls, v: list[str]) -> list[str]:
        for name in v:
            if not re.fullmatch(r"[A-Z][A-Z0-9_]*", name):
                raise ValueError(f"credential '{name}' is not an environment variable name")
        return v

    @field_validator("input_schema", "output_schema")
    @classmethod
    def _object_schema(cls, v: dict[str, Any]) -> dict[str, Any]:
        if v.get("type") != "object":
            raise ValueError("must be a JSON Schema with type: object")
        return v

    @field_validator("requires", "provides")
    @classmethod
    def _known_slots(cls, v: list[str]) -> list[str]:
        known = slot_types()
        for slot in v:
            if slot not in known:
                raise ValueError(f"unknown slot type '{slot}' (known: {', '.join(known)})")
        return v

    @model_validator(mode="after")
    def _tier_consistency(self) -> Manifest:
        if self.tier == "handoff" and self.handoff is None:
            raise ValueError("a handoff adapter needs a 'handoff' block")
        if self.tier in ("live", "mock") and self.upstream is None:
            raise ValueError(f"a {self.tier} adapter needs an 'upstream' block")
        if self.primitive in ("check", "send") and not self.citation.basis:
            raise ValueError(f"a {self.primitive} adapter needs citation.basis (legal/policy basis)")
        return self


def manifest_json_schema() -> dict[str, Any]:
    from .extensions import document_x_keys

    schema = document_x_keys(Manifest.model_json_schema())
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = "urn:ummaya:schema:manifest"  # no URL: the project owns no domain
    return schema
