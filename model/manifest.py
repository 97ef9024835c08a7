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
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

ADAPTER_ID = r"^[a-z][a-z0-9_]{0,63}$"  # snake_case; also a valid OpenAI tool name
SEMVER = r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z.-]+)?$"

Primitive = Literal["locate", "find", "check", "send"]
Tier = Literal["live", "mock", "handoff"]
Gate = Literal["read-only", "login", "action", "sign", "send", "blocked"]
# The twelve domains citizens' requests fall into (the README counts adapters per domain; retrieval
# filters by them). A closed list, so a typo or a private taxonomy never splits a domain in two.
Domain = Literal[
    "health", "weather", "transport", "welfare", "administration", "environment", "safety",
    "culture", "education", "housing", "labour", "consumer",
]

# How an output field marked ``x-datetime`` writes its moment: a point in time of the data itself
# (an observation, an issue time, the day a forecast row is for), which Mock moves to today's
# calendar (wire/calendar.py). A calendar fact — a holiday's date — is not marked.
DATETIME_FORMATS = ("yyyymmdd", "yyyy-mm-dd", "yyyymmddhhmm", "yyyymmddhhmmss", "yyyy-mm-dd hh:mm", "iso8601")


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
    "odcloud",  # api.odcloud.kr: {page, perPage, totalCount, currentCount, matchCount, data[]}
    "head_row",  # {Svc: [{head: [{list_total_count}, {RESULT}]}, {row: [...]}]} (NEIS, MOIS, Seoul, REB)
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


class Quota(Strict):
    """A service's published call limits, noted where they come from. ``per_second`` is honoured
    as the request spacing when no ``rate_limit_per_s`` is set; ``per_day`` is counted per host
    in the running process and refused as ``channel_unavailable`` QUOTA_LOCAL once reached, so a
    busy server stops before the upstream's own cap locks the key for the rest of the day."""

    per_day: int | None = Field(default=None, ge=1, description="Calls per day the key allows")
    per_second: float | None = Field(default=None, gt=0, description="Requests per second allowed")
    source: str | None = Field(default=None, description="Where the figure is published")


def _plain_http_credential(base_url: str | None, auth: Auth | None, where: str) -> None:
    if base_url and base_url.startswith("http://") and auth is not None and auth.style != "none":
        raise ValueError(
            f"{where}: a credential is never sent over plain http ({base_url}); such an upstream "
            "is skipped, not called (docs/CONTRIBUTING.md, 'Adding a catalog row')"
        )


class Profile(Strict):
    """Shared upstream facts, one file under registry/_profiles/."""

    id: str = Field(pattern=ADAPTER_ID)
    title: str
    # https, or http only for an upstream that takes no credential (the validator refuses both).
    base_url: str | None = Field(default=None, pattern=r"^https?://")
    auth: Auth = Field(default_factory=Auth)
    envelope: Envelope | None = None
    format_param: dict[str, str] = Field(default_factory=dict)
    static_params: dict[str, Any] = Field(default_factory=dict)
    timeout_s: float = 10.0
    rate_limit_per_s: float | None = None
    quota: Quota | None = None
    docs_url: str | None = None
    response_fields: ResponseFields | None = None
    hosts: list[str] = Field(
        default_factory=list,
        description="Hosts (names, no scheme) this profile's credentials may be sent to, always over "
        "https; default: the host of base_url. A credential goes nowhere else (runtime/dispatch/binding.py)",
    )

    def credentials(self) -> list[str]:
        """The environment variables holding this profile's secrets."""
        names = [self.auth.credential] if self.auth.credential else []
        return names + [v for v in self.auth.token_params.values() if v not in names]

    def bound_hosts(self) -> list[str]:
        if self.hosts:
            return [h.strip().lower().rstrip(".") for h in self.hosts]
        from urllib.parse import urlsplit

        host = urlsplit(self.base_url).hostname if self.base_url else None
        return [host] if host else []

    @model_validator(mode="after")
    def _no_credential_over_http(self) -> Profile:
        _plain_http_credential(self.base_url, self.auth, "base_url")
        return self


class FieldMap(Strict):
    """How one output field is taken from an upstream record."""

    source: str = Field(
        description="Dotted path inside the upstream record, or a value the engine computed: "
        "$latitude, $longitude (the record's position in WGS84, from upstream.coordinates), "
        "$distance_km (from the citizen's coordinates, after.nearest), $input.<field> (the call's own "
        "argument, e.g. a name a step resolved, for operations that answer about a code only)"
    )
    transform: str | None = Field(
        default=None,
        description="Named shared transform (strip_html, int, float, none_if_dash, yyyymmddhhmmss)",
    )


CondOp = Literal["EQ", "NEQ", "LT", "LTE", "GT", "GTE", "LIKE"]


class Filter(Strict):
    """One ``cond[FIELD::OP]=value`` filter (odcloud and the data.go.kr standard-data v2 sets,
    e.g. ``cond[ROAD_NM_ADDR::LIKE]``): the value is an input field's, or a fixed one."""

    field: str = Field(pattern=r"^[^\[\]:]+$", description="The upstream column, as the guide spells it")
    op: CondOp
    input: str | list[str] | None = Field(
        default=None, description="Input field whose value is sent (a list: the first one given)"
    )
    value: str | int | None = Field(default=None, description="A fixed value (e.g. 영업 중 = 01)")

    @model_validator(mode="after")
    def _one_source(self) -> Filter:
        if (self.input is None) == (self.value is None):
            raise ValueError("a filter takes its value from 'input' or a fixed 'value', one of the two")
        return self

    @property
    def param(self) -> str:
        return f"cond[{self.field}::{self.op}]"

    @property
    def inputs(self) -> list[str]:
        return [] if self.input is None else [self.input] if isinstance(self.input, str) else list(self.input)


class Pick(Strict):
    """A value taken from a step's record: a field, optionally a slice of it (a 10-digit 법정동
    code's 5-digit 시군구 part) and zero-padded (번지 0012)."""

    source: str
    slice: tuple[int, int] | None = Field(default=None, description="[start, end) of the text")
    zfill: int | None = Field(default=None, ge=1, le=20, description="Left-pad with zeros to this width")


class MatchRule(Strict):
    """Keep (or choose) records whose ``fields`` contain an input's words — for upstreams with
    no such filter. ``words: all`` needs every word of the input in one of the fields, ``any``
    one of them; spacing and case are ignored, so 「동아대 병원」 matches 동아대학교병원 only
    word by word. ``exact`` needs the field to be the input, whole (spacing and case ignored):
    for an upstream whose own filter is a partial match (TAGO's ``routeNo`` 5 also returns 50,
    105 and 5-1). ``prefer: closest`` only orders a step's choice (station and terminal names
    that contain one another); the after-call filter keeps every match."""

    input: str = Field(description="Input field holding the citizen's words")
    fields: list[str] = Field(min_length=1, description="Record fields searched (the first that contains the words wins)")
    words: Literal["all", "any", "exact"] = "all"
    prefer: Literal["first", "closest"] = Field(
        default="first",
        description=(
            "A step's choice among the records that match: 'first' listed, or 'closest' — the record "
            "whose field is the input whole, then one that starts with it, then the first listed "
            "(「대전」 picks 대전 over 서대전, 「서울」 서울경부 over 동서울, whatever the upstream's order)"
        ),
    )


class Step(Strict):
    """One request before the main one, filling inputs a citizen never knows (a stop's nodeId,
    a hospital's ykiho, a school code, a 법정동 code + 번지 from JUSO). Steps run in order; each
    sees the arguments the earlier ones filled. A step may name another ``profile`` (host, key,
    envelope): its requests then go only to that profile's host, with that profile's key."""

    id: str = Field(pattern=r"^[a-z][a-z0-9_]{0,31}$", description="Names the step in errors and Mock side files (<fixture stem>.<id>.<suffix>)")
    when_missing: str | list[str] | None = Field(
        default=None, description="Input field(s) whose absence triggers the step; absent: always run"
    )
    profile: str | None = Field(default=None, description="Another registry/_profiles/ file for this step")
    path: str = Field(pattern=r"^/")
    method: Literal["GET", "POST"] = "GET"
    format: Literal["json", "xml"] | None = Field(default=None, description="Default: the main request's")
    format_param: dict[str, str] | None = None
    params: dict[str, str] = Field(default_factory=dict, description="Upstream param -> input field")
    static_params: dict[str, Any] = Field(default_factory=dict)
    derived_params: dict[str, str] = Field(
        default_factory=dict,
        description="Upstream parameter -> shared resolver expression, as upstream.derived_params "
        "(a step that needs a year or date of its own: KCUE's svyYr)",
    )
    filters: list[Filter] = Field(default_factory=list)
    envelope: Envelope | None = None
    record_path: str | None = None
    match: MatchRule | None = Field(default=None, description="Take the first record that matches, not just the first")
    pick: dict[str, str | Pick] = Field(description="Input field to fill -> record field (or a Pick)")
    optional: bool = Field(default=False, description="No record: go on without the picks (else no_data)")
    # Filled by codegen.resolve from ``profile``: the runtime never reads profiles.
    base_url: str | None = Field(default=None, pattern=r"^https?://")
    auth: Auth | None = None

    @field_validator("when_missing")
    @classmethod
    def _as_list(cls, v: str | list[str] | None) -> list[str] | None:
        return [v] if isinstance(v, str) else v


class Lookup(Strict):
    """The one-step form of ``upstream.steps`` (kept for the manifests that use it): a preliminary
    request that fills an input the main request needs but a citizen never knows (e.g. TAGO: stop
    name -> nodeId). The engine runs it when ``when_missing`` is absent and takes ``pick`` from the
    first record; Mock answers it from ``<fixture stem>.lookup<suffix>``."""

    when_missing: str = Field(description="Input field whose absence triggers the lookup")
    path: str = Field(pattern=r"^/")
    params: dict[str, str] = Field(default_factory=dict, description="Upstream param -> input field")
    static_params: dict[str, Any] = Field(default_factory=dict)
    record_path: str
    pick: dict[str, str] = Field(description="Input field to fill -> upstream record field")

    def as_step(self) -> Step:
        return Step(
            id="lookup", when_missing=self.when_missing, path=self.path, params=dict(self.params),
            static_params=dict(self.static_params), record_path=self.record_path, pick=dict(self.pick),
        )


class Paging(Strict):
    """Fetch up to ``max_pages`` pages of ``size`` records when the engine filters or sorts after
    the call (the upstream cannot): stops early at the last page. The first page's request is the
    plain request; the others differ only in ``page_param``."""

    page_param: str = "pageNo"
    size_param: str = "numOfRows"
    size: int = Field(ge=1, le=1000, description="Records per page (standard-data v2: at most 100)")
    max_pages: int = Field(default=1, ge=1, le=10)


WindowFormat = Literal["yyyymmdd", "yyyy-mm-dd", "yyyymmddhhmm", "yyyymmddhhmmss"]


class DateWindow(Strict):
    """A date window sent with every request, in KST, for services that answer oldest-first or
    with their whole history (MPM job notices start in 2008; ocean water quality in 2020):
    ``[today - days_back, today + days_ahead]``, each bound overridable by an input."""

    start_param: str | None = None
    end_param: str | None = None
    days_back: int = Field(default=0, ge=0, le=3660)
    days_ahead: int = Field(default=0, ge=0, le=3660)
    format: WindowFormat = "yyyymmdd"
    start_input: str | None = Field(default=None, description="Input field that replaces the start")
    end_input: str | None = Field(default=None, description="Input field that replaces the end")

    @model_validator(mode="after")
    def _a_bound(self) -> DateWindow:
        if not (self.start_param or self.end_param):
            raise ValueError("a date window sends 'start_param', 'end_param' or both")
        return self


IssueFormat = Literal["yyyymmdd", "hhmm", "hh", "yyyymmddhh", "yyyymmddhhmm"]


class IssueTime(Strict):
    """The latest *published* issue of a product, from the engine's clock in KST (no DST).

    A product is issued at ``hours`` × ``minute`` and becomes callable ``ready_after_min`` later;
    the engine sends the newest issue already callable, in each parameter's format. KMA examples:
    초단기예보 base HH30 callable from HH45 (``minute: 30, ready_after_min: 15``, every hour); 중기예보
    tmFc 0600/1800 (``hours: [6, 18]``, ``yyyymmddhhmm``); 생활·보건기상지수 time = the 06/18 issue as
    ``yyyymmddhh``. Declared, so a new product is data, never a resolver of its own."""

    hours: list[int] = Field(
        default_factory=lambda: list(range(24)), min_length=1,
        description="Issue hours of the day, KST (default every hour)",
    )
    minute: int = Field(default=0, ge=0, le=59, description="Minute of the issue (HH30 → 30)")
    ready_after_min: int = Field(
        default=0, ge=0, le=720, description="Minutes after the issue time until the service answers it"
    )
    params: dict[str, IssueFormat] = Field(
        min_length=1, description="Upstream parameter → how it writes the issue (yyyymmdd, hhmm, hh, yyyymmddhh, yyyymmddhhmm)"
    )

    @field_validator("hours")
    @classmethod
    def _hours(cls, v: list[int]) -> list[int]:
        if any(not 0 <= h <= 23 for h in v) or len(set(v)) != len(v):
            raise ValueError("issue_time.hours are distinct hours 0-23")
        return sorted(v)


class RowBase(Strict):
    """Where the moment the numbers count from is read: a sent request parameter (``param``, e.g.
    the issue time tmFc the engine resolved) or a record field (``field``, e.g. ``date``)."""

    param: str | None = None
    field: str | None = None
    format: IssueFormat = "yyyymmddhhmm"
    unit: Literal["day", "hour"] = Field(description="What one step of the number is")
    date_field: str = Field(default="date", description="Row key for the row's date (yyyymmdd)")
    time_field: str | None = Field(default=None, description="Row key for the row's hour (hhmm); unit hour only")

    @model_validator(mode="after")
    def _one_source(self) -> RowBase:
        if (self.param is None) == (self.field is None):
            raise ValueError("columns_to_rows.base reads exactly one of 'param' or 'field'")
        return self


class ColumnsToRows(Strict):
    """One upstream record whose numbered columns (rnSt4Am…wf10, taMin4…taMax10, h0…h75,
    today/tomorrow, jd01…jd50) become one row per number: row key → column template with ``{n}``
    (a Python format field, ``{n:02d}`` zero-pads) or an explicit list, one column per number.
    A number whose columns are all absent or blank gives no row. With ``base``, each row also
    carries its own date (and hour), so day-scoped answers (``x-day``) keep the day asked."""

    numbers: list[int] = Field(min_length=1, description="The numbers, in row order (4…10; 0, 3, … 75)")
    columns: dict[str, str | list[str]] = Field(min_length=1, description="Row key → column template or list")
    number_field: str = Field(default="n", description="Row key carrying the number")
    keep: list[str] = Field(default_factory=list, description="Record fields copied to every row")
    base: RowBase | None = None

    @model_validator(mode="after")
    def _shapes(self) -> ColumnsToRows:
        for key, spec in self.columns.items():
            if isinstance(spec, list) and len(spec) != len(self.numbers):
                raise ValueError(f"columns_to_rows.columns.{key}: one column per number ({len(self.numbers)})")
            if isinstance(spec, str) and "{n" not in spec:
                raise ValueError(f"columns_to_rows.columns.{key}: a template names {{n}}")
        return self


class Coordinates(Strict):
    """Where each record's position is and in which coordinate system (``crs``: an EPSG code
    pyproj knows — EPSG:4326 WGS84 lon/lat, EPSG:5174 the Bessel 중부원점 TM of the MOIS licensing
    sets, EPSG:2097 …). The engine converts it to WGS84 for ``$latitude``/``$longitude`` and the
    nearest-first sort."""

    x: str = Field(description="Record field with the easting or the longitude")
    y: str = Field(description="Record field with the northing or the latitude")
    crs: str = Field(default="EPSG:4326", pattern=r"^EPSG:\d{4,5}$")


class ProjectedParams(Strict):
    """The citizen's WGS84 latitude/longitude inputs sent in another coordinate system
    (AirKorea's nearest-station operation takes TM x/y)."""

    crs: str = Field(pattern=r"^EPSG:\d{4,5}$")
    x: str = Field(description="Upstream parameter for the easting")
    y: str = Field(description="Upstream parameter for the northing")
    latitude: str = "latitude"
    longitude: str = "longitude"
    decimals: int = Field(default=3, ge=0, le=8)


class Nearest(Strict):
    """Sort records nearest-first from the citizen's coordinates (haversine over the records'
    WGS84 positions, ``upstream.coordinates``), dropping those past ``max_km`` and those without
    a position."""

    latitude: str = Field(default="latitude", description="Input field")
    longitude: str = Field(default="longitude", description="Input field")
    max_km: float | None = Field(default=None, gt=0)


class SortKey(Strict):
    field: str = Field(description="Record field")
    descending: bool = False


class After(Strict):
    """What the engine does with the records after the call, where the upstream has no such
    filter or order: ``match`` (keep those naming the citizen's words), ``nearest`` (nearest
    first), ``sort`` (by record fields), then ``limit`` (an input field or a number: top N).
    ``total_count`` then counts what is kept."""

    match: list[MatchRule] = Field(default_factory=list)
    nearest: Nearest | None = None
    sort: list[SortKey] = Field(default_factory=list)
    limit: str | int | None = Field(default=None, description="Input field holding N, or N")

    @model_validator(mode="after")
    def _one_order(self) -> After:
        if self.nearest is not None and self.sort:
            raise ValueError("nearest-first and sort are two orders: declare one")
        return self


class OperationChoice(Strict):
    """One of the operations an adapter can call: its path, and the output fields it spells
    otherwise (merged over ``upstream.fields``)."""

    path: str = Field(pattern=r"^/")
    fields: dict[str, str | FieldMap] = Field(
        default_factory=dict,
        description="Output item field -> upstream record field, where this operation names it "
        "differently (e.g. NEC's early-voting evPsName vs the election-day psName)",
    )


class Operations(Strict):
    """One question answered by one of several operations of the same service, chosen by an
    input's value (election day or early voting, heat or cold): the engine calls
    ``choices[args[input]]``; with the input absent, ``upstream.path`` (which must be one of the
    choices). The input's ``enum`` in input_schema lists exactly the choices (the link stage
    checks it), so the planner can only pick an operation the manifest declares."""

    input: str = Field(description="Input field whose value names the operation")
    choices: dict[str, OperationChoice] = Field(min_length=2, description="Input value -> operation")

    def paths(self) -> list[str]:
        return [c.path for c in self.choices.values()]


class Upstream(Strict):
    profile: str | None = Field(default=None, description="Name of a registry/_profiles/ file")
    # https, or http only for an upstream that takes no credential (the validator refuses both).
    base_url: str | None = Field(default=None, pattern=r"^https?://")
    path: str = Field(pattern=r"^/")
    method: Literal["GET", "POST"] = "GET"
    auth: Auth | None = None
    headers: dict[str, str] = Field(
        default_factory=dict,
        description="Fixed request headers (Accept, a content negotiation the service needs); the key "
        "goes through 'auth', never here",
    )
    json_params: dict[str, str] = Field(
        default_factory=dict,
        description="POST: JSON body key -> input field (a list input stays a list: NTS {\"b_no\": [...]})",
    )
    json_static: dict[str, Any] = Field(default_factory=dict, description="POST: fixed JSON body keys")
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
    filters: list[Filter] = Field(default_factory=list, description="cond[FIELD::OP] filters")
    window: DateWindow | None = None
    project_params: ProjectedParams | None = None
    paging: Paging | None = None
    envelope: Envelope | None = None
    record_path: str | None = Field(default=None, description="Dotted path to the record list")
    coordinates: Coordinates | None = None
    after: After | None = None
    fields: dict[str, str | FieldMap] = Field(
        default_factory=dict, description="Output item field -> upstream record field"
    )
    postprocess: str | None = Field(
        default=None, description="Named shared post-processor over the record list"
    )
    issue_time: IssueTime | None = Field(
        default=None, description="Parameters carrying the latest published issue time (KST)"
    )
    columns_to_rows: ColumnsToRows | None = Field(
        default=None, description="One record with numbered columns → one row per number (after postprocess)"
    )
    operations: Operations | None = Field(
        default=None,
        description="Operation chosen by an input's value (upstream.path is the one used when the input is absent)",
    )
    lookup: Lookup | None = None
    steps: list[Step] = Field(default_factory=list, description="Requests before the main one, in order")
    callable: bool = Field(
        default=True,
        description="False for mock-tier adapters whose real channel this project cannot call",
    )
    timeout_s: float | None = Field(
        default=None, gt=0, le=120, description="Total deadline of one call (connect+read+body, retries included)"
    )
    response_fields: ResponseFields | None = None
    rate_limit_per_s: float | None = None
    quota: Quota | None = None
    cache_ttl_s: int | None = Field(default=None, ge=0)
    notes: str | None = Field(default=None, description="Tolerances and (verify) caveats")
    credential_hosts: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Set by the build, never by a manifest: each credential of the upstream's "
        "profile -> the hosts it may be sent to (the profile's `hosts`)",
        json_schema_extra={"readOnly": True},
    )

    @field_validator("headers")
    @classmethod
    def _no_secret_headers(cls, v: dict[str, str]) -> dict[str, str]:
        for name in v:
            if name.lower() in ("authorization", "host", "cookie", "user-agent"):
                raise ValueError(f"header '{name}' is the engine's (auth, host guard, User-Agent), not a manifest's")
        return v

    @model_validator(mode="after")
    def _chain_and_body(self) -> Upstream:
        ids = [s.id for s in self.chain()]
        dup = {i for i in ids if ids.count(i) > 1}
        if dup:
            raise ValueError(f"steps: duplicate step id {sorted(dup)[0]!r}")
        if (self.json_params or self.json_static) and self.method != "POST":
            raise ValueError("json_params/json_static need method: POST")
        if self.issue_time is not None:
            clash = set(self.issue_time.params) & (set(self.params) | set(self.derived_params) | set(self.static_params))
            if clash:
                raise ValueError(f"issue_time.params: {sorted(clash)[0]!r} is sent twice")
        base = self.columns_to_rows.base if self.columns_to_rows is not None else None
        if base is not None and base.param is not None:
            sent = set((self.issue_time.params if self.issue_time else {})) | set(self.derived_params) | set(self.params) | set(self.static_params)
            if base.param not in sent:
                raise ValueError(f"columns_to_rows.base.param: {base.param!r} is not a parameter this upstream sends")
        if self.after is not None and self.after.nearest is not None and self.coordinates is None:
            raise ValueError("after.nearest needs upstream.coordinates (where each record's position is)")
        if self.operations is not None and self.path not in self.operations.paths():
            raise ValueError("upstream.path must be one of upstream.operations.choices (the operation used when the input is absent)")
        _plain_http_credential(self.base_url, self.auth, "upstream.base_url")
        for step in self.steps:
            _plain_http_credential(step.base_url, step.auth, f"upstream.steps.{step.id}")
        return self

    def for_arguments(self, args: Mapping[str, Any]) -> Upstream:
        """This upstream with the operation ``operations`` picks for ``args`` (itself without one)."""
        ops = self.operations
        if ops is None or args.get(ops.input) in (None, ""):
            return self
        choice = ops.choices.get(str(args[ops.input]))
        if choice is None:
            raise KeyError(f"{ops.input}={args[ops.input]!r} names no operation (choices: {', '.join(ops.choices)})")
        return self.model_copy(update={"path": choice.path, "fields": {**self.fields, **choice.fields}})

    def chain(self) -> list[Step]:
        """Every request before the main one, in order (``lookup`` is the first step's old form)."""
        return ([self.lookup.as_step()] if self.lookup is not None else []) + list(self.steps)


class HandoffChannel(Strict):
    channel: Bilingual
    url: str = Field(pattern=r"^https?://")
    steps: BilingualList
    documents: BilingualList = Field(default_factory=BilingualList)
    deadline: Bilingual | None = None
    offline: Bilingual | None = Field(default=None, description="Walk-in alternative")
    phone: str | None = None


class Limit(Strict):
    """A part of a request this adapter cannot serve — booking with a list of hospitals, first-bus
    times with an arrivals board. When the request asks for it (``words``, or the words of
    ``intent`` in registry/_intents/), the answer says so in one plain sentence, with the official
    channel for it (an id in registry/_channels/)."""

    words: BilingualList = Field(default_factory=BilingualList, description="Words that ask for what this adapter does not do")
    intent: str | None = Field(default=None, description="An intent id (registry/_intents/) whose words ask for it, e.g. book")
    cannot: Bilingual = Field(description="One plain sentence: what UMMAYA cannot do here")
    channel: str = Field(pattern=ADAPTER_ID, description="The channel (registry/_channels/<id>.yaml) where the citizen can do it")

    @model_validator(mode="after")
    def _asked_somehow(self) -> Limit:
        if not (self.words.ko or self.words.en or self.intent):
            raise ValueError("a limit needs 'words' or an 'intent' that asks for it")
        return self


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
    as_of: dt.datetime | dt.date | None = Field(
        default=None,
        description="The moment the body speaks of as now (a recorded body: when it was taken; a "
        "synthetic one: the day it is written for); default recorded_on. Mock moves the output's "
        "x-datetime fields by whole days from this day to today (wire/calendar.py).",
    )

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
    domain: Domain
    primitive: Primitive
    tier: Tier
    search_hints: BilingualList
    examples: BilingualList
    negative_examples: list[NegativeExample] = Field(default_factory=list)
    service_words: BilingualList = Field(
        default_factory=BilingualList,
        description="Words that name this adapter's service (주거급여, 과태료, passport …). A request "
        "naming none of them never reaches this adapter's consent notice or handoff "
        "(runtime/turn/scope.py). Empty: derived from search_hints and title, minus the generic "
        "words of registry/_intents/ (listed per adapter in generated/guidance.json).",
    )
    limits: list[Limit] = Field(default_factory=list, description="What this adapter does not do, and where the citizen can")
    permission: Permission
    citation: Citation
    credentials: list[str] = Field(default_factory=list)
    upstream: Upstream | None = None
    input_schema: dict[str, Any]
    output_schema: dict[str, Any]
    requires: list[str] = Field(
        default_factory=list,
        description="Slot types (registry/_slots/) an earlier primitive must fill",
    )
    provides: list[str] = Field(
        default_factory=list,
        description="Slot types this adapter's output fills (locate); each is declared by an output field's x-slot",
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

    @model_validator(mode="after")
    def _tier_consistency(self) -> Manifest:
        if self.tier == "handoff" and self.handoff is None:
            raise ValueError("a handoff adapter needs a 'handoff' block")
        if self.tier in ("live", "mock") and self.upstream is None:
            raise ValueError(f"a {self.tier} adapter needs an 'upstream' block")
        if self.primitive in ("check", "send") and not self.citation.basis:
            raise ValueError(f"a {self.primitive} adapter needs citation.basis (legal/policy basis)")
        return self
