"""The ASGI app (FastAPI): health, releases, traces, ``POST /v1/retrieve`` and ``POST /v1/answer``.

    uvicorn --factory ummaya.runtime.serve.app:app_from_env      # what `ummaya serve` runs

Settings come from the environment (``ServeSettings.from_env``) so that every uvicorn worker
process builds the same app: ``UMMAYA_DATABASE_URL`` (default SQLite under ``UMMAYA_HOME``),
``UMMAYA_GENERATED`` (the build published at start-up when the default alias points nowhere),
``UMMAYA_DEFAULT_ALIAS`` (``production``), ``UMMAYA_AUTO_PUBLISH`` (on), ``UMMAYA_MAX_BODY_BYTES``
(65536), ``UMMAYA_TRACE_PURGE_INTERVAL_S`` (3600), the trace retention policy
(``UMMAYA_TRACES``, ``UMMAYA_TRACE_RAW_TEXT``, ``UMMAYA_TRACE_TTL_DAYS``) and the model provider
(``UMMAYA_LLM_*``, only for ``generation.planner = "openai"``). See runtime/serve/README.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response, StreamingResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from ummaya.runtime.store.records import RetentionPolicy, Trace, new_trace_id, utcnow

from . import api_models as M
from .auth import ApiKeyAuth, caller, parse_keys, same_owner
from .api_errors import CODES, ApiError, error_body, json_error, status_of
from .pipeline import (
    ApiEvent,
    RequestState,
    answer_events,
    fold,
    language_of,
    prepare,
    retrieve_result,
)
from .releases import DEFAULT_ALIAS, ReleaseCache, ensure_default_release

log = logging.getLogger("ummaya.serve")

SSE_MEDIA = "text/event-stream"
SSE_EVENTS = ["metadata", "evidence", "tool_call", "tool_result", "permission", "delta", "candidate",
              "completed", "error"]
# One SSE event as clients (and schemathesis) see it: id, event name, JSON text in data.
SSE_EVENT_SCHEMA: dict[str, Any] = {
    "type": "object", "required": ["id", "event", "data"],
    "properties": {"id": {"type": "string", "pattern": "^[0-9]+$"},
                   "event": {"type": "string", "enum": SSE_EVENTS},
                   "data": {"type": "string", "contentMediaType": "application/json"}},
}
MAX_BODY_BYTES = 64 * 1024
MAX_JSON_DEPTH = 32  # our request schemas nest 3 deep; a deeper body is an attack, not a request
BODY_READ_TIMEOUT_S = 10.0


def _env_on(value: str | None, default: bool = True) -> bool:
    if value is None or value.strip() == "":
        return default
    return value.strip().lower() not in ("0", "off", "false", "no")


def _number(env: dict[str, str], name: str, kind: Any, default: Any) -> Any:
    """A positive number from the environment; a bad value names its variable."""
    raw = env.get(name)
    if raw is None or not raw.strip():
        return default
    try:
        value = kind(raw)
    except ValueError:
        raise ValueError(f"{name}={raw!r} is not a {kind.__name__}") from None
    if not value > 0:
        raise ValueError(f"{name}={raw!r} must be greater than 0")
    return value


@dataclass
class ServeSettings:
    database_url: str | None = None  # None: open_store's default (UMMAYA_DATABASE_URL or SQLite)
    generated: Path | None = None
    default_alias: str = DEFAULT_ALIAS
    auto_publish: bool = True
    max_body_bytes: int = MAX_BODY_BYTES
    max_json_depth: int = MAX_JSON_DEPTH
    body_read_timeout_s: float = BODY_READ_TIMEOUT_S
    api_keys: tuple[str, ...] = ()  # UMMAYA_API_KEYS: when set, /v1 needs a bearer key (auth.py)
    purge_interval_s: float = 3600.0
    release_cache: Path | None = None
    project_id: str = "default"
    knowledge_base_id: str = "registry"
    # "auto": each request's mode decides; "mock": every adapter call is answered from fixtures
    # whatever the request asks (test and demo deployments that must never reach an agency).
    mode_ceiling: str = "auto"
    retention: RetentionPolicy = field(default_factory=RetentionPolicy)

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> ServeSettings:
        env = dict(os.environ if env is None else env)
        gen = env.get("UMMAYA_GENERATED")
        if gen is None:
            from ummaya.paths import generated_dir

            generated: Path | None = generated_dir()
        else:
            generated = Path(gen)
        return cls(
            database_url=env.get("UMMAYA_DATABASE_URL") or None,
            generated=generated,
            default_alias=env.get("UMMAYA_DEFAULT_ALIAS") or DEFAULT_ALIAS,
            auto_publish=_env_on(env.get("UMMAYA_AUTO_PUBLISH")),
            max_body_bytes=_number(env, "UMMAYA_MAX_BODY_BYTES", int, MAX_BODY_BYTES),
            max_json_depth=_number(env, "UMMAYA_MAX_JSON_DEPTH", int, MAX_JSON_DEPTH),
            body_read_timeout_s=_number(env, "UMMAYA_BODY_READ_TIMEOUT_S", float, BODY_READ_TIMEOUT_S),
            api_keys=parse_keys(env.get("UMMAYA_API_KEYS")),
            purge_interval_s=_number(env, "UMMAYA_TRACE_PURGE_INTERVAL_S", float, 3600.0),
            release_cache=Path(env["UMMAYA_RELEASE_CACHE"]) if env.get("UMMAYA_RELEASE_CACHE") else None,
            project_id=env.get("UMMAYA_PROJECT_ID") or "default",
            knowledge_base_id=env.get("UMMAYA_KNOWLEDGE_BASE_ID") or "registry",
            mode_ceiling="mock" if (env.get("UMMAYA_SERVE_MODE") or "").strip().lower() == "mock" else "auto",
            retention=RetentionPolicy.from_env(env),
        )


class Service:
    """What the routes share: settings, the store, loaded releases, planners."""

    def __init__(self, settings: ServeSettings, store: Any = None, *, dispatcher_factory: Any = None):
        from ummaya.runtime.store import open_store

        self.settings = settings
        self.store = store if store is not None else open_store(settings.database_url, policy=settings.retention)
        if settings.release_cache is not None:
            cache_root = settings.release_cache
        else:
            from ummaya.paths import state_dir

            cache_root = state_dir() / "releases"
        self.releases = ReleaseCache(self.store, cache_root, dispatcher_factory=dispatcher_factory)
        self._planners: dict[tuple[Any, ...], Any] = {}
        self.purged = 0
        from ummaya.runtime.store.trace_writer import TraceWriter

        self.traces = TraceWriter(self.store)  # its thread starts on the first trace
        from ummaya.runtime.turn.turn_trace import TraceSink

        # Every trace this server stores goes through the writer: the pipeline's, and the turns'
        # of MCP over HTTP (``turns`` hands the writer to their engine).
        self.trace_sink = TraceSink(self.store, settings.retention, self.traces)

    # -- start-up
    def startup(self) -> None:
        if self.settings.auto_publish:
            published = ensure_default_release(self.store, self.settings.generated, self.settings.default_alias)
            if published:
                log.info("published %s as %s (no release was active)", published, self.settings.default_alias)
        self.purged += self.store.purge_expired()
        walk = getattr(self.store, "walk_ledger", None)
        if walk is not None:  # the full walk at start: no citizen's first gated turn pays for it
            report = walk()
            if not report.ok:
                log.error("consent ledger failed verification at start (seq=%s): %s",
                          report.broken_seq, report.reason)
        from ummaya.runtime.dialogue.state import session_ttl

        self.store.purge_issued_sessions(session_ttl())
        release = self.store.resolve(self.settings.default_alias)
        if release is not None:
            try:
                self.releases.load(release)
            except ApiError as exc:
                log.error("cannot load release %s: %s", release.release_id, exc.message)

    def active(self) -> Any:
        release = self.store.resolve(self.settings.default_alias)
        if release is None or self.releases.loaded(release.release_id) is None:
            return release, False
        return release, True

    # -- the turn service of a release
    def turns(self, loaded: Any, alias: str | None = None) -> Any:
        """The release's ``TurnService`` (runtime/service.py) on this server's store, retention
        policy and trace writer, with the offline planner; a request derives its own with
        ``using`` (its reranking retriever, the planner it names). ``alias``: the alias the release
        was resolved through, for traces whose request does not say."""
        from ummaya.runtime.service import TurnService

        return TurnService(loaded.catalog, loaded.retriever, loaded.dispatcher, self.planner_for(M.Generation()),
                           store=self.store, retention=self.settings.retention,
                           widen_providers=loaded.policy.rerank.widen, trace_writer=self.traces,
                           release_alias=alias)

    # -- planners
    def planner_for(self, gen: M.Generation) -> Any:
        if gen.planner == "offline":
            key: tuple[Any, ...] = ("offline",)
            if key not in self._planners:
                from ummaya.runtime.plan.offline import OfflinePlanner

                self._planners[key] = OfflinePlanner()
            return self._planners[key]
        from ummaya.runtime.plan.protocol import ProviderError
        from ummaya.runtime.plan.openai_compat import ENV_BASE_URL, OpenAICompatPlanner

        overrides: dict[str, Any] = {}
        if gen.temperature is not None:
            overrides["temperature"] = gen.temperature
        if gen.max_tokens is not None:
            overrides["max_tokens"] = gen.max_tokens
        if gen.timeout_s is not None:
            overrides["timeout_s"] = gen.timeout_s
            overrides["total_timeout_s"] = gen.timeout_s * 4
        env = dict(os.environ)
        if gen.model:
            env["UMMAYA_LLM_MODEL"] = gen.model
        key = ("openai", env.get(ENV_BASE_URL), env.get("UMMAYA_LLM_MODEL"), env.get("UMMAYA_LLM_TIMEOUT_S"),
               tuple(sorted(overrides.items())))
        planner = self._planners.get(key)
        if planner is None:
            try:
                planner = OpenAICompatPlanner.from_env(env, **overrides)
            except ProviderError as exc:
                raise ApiError(exc.code if exc.code in CODES else "provider_config", exc.message) from None
            if len(self._planners) > 64:
                self._planners.clear()
            self._planners[key] = planner
        return planner

    # -- traces
    def _pending(self, state: RequestState, result: Any) -> Any:
        """The request's one trace: its turn's (built by the engine), or — refused before its turn,
        or a turn that never finished — the same record with no turn in it."""
        if result is not None and result.trace is not None:
            return result.trace
        from ummaya.runtime.turn.turn_trace import PendingTrace

        return PendingTrace(state.trace_id, state.origin(), state.received_wall, state.query,
                            release_id=state.release_id, session_id=state.session_id)

    async def write_trace(self, state: RequestState, result: Any = None, events: list[Any] | None = None) -> None:
        """Complete the request's trace with what the server saw and wait for its batch to commit
        (the event loop runs on meanwhile): an answer is sent as completed only with its trace
        stored, or saying it was not."""
        if not await self.trace_sink.commit(self._pending(state, result), state.served(events)):
            # a trace must never turn an answer into a failure … and the answer must not claim one
            state.trace_stored = False

    def write_trace_sync(self, state: RequestState, result: Any = None, events: list[Any] | None = None) -> None:
        """Queue the trace without waiting (a client that left: no answer is sent as completed).
        Written by the trace writer's thread; drained on shutdown."""
        self.trace_sink.commit_nowait(self._pending(state, result), state.served(events))

    def close(self) -> None:
        """Shutdown: every queued trace is written before the store closes."""
        self.traces.close()


# -- rendering ---------------------------------------------------------------------------------------

def _dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), default=str)


def sse_frame(e: ApiEvent) -> bytes:
    return f"id: {e.seq}\nevent: {e.event}\ndata: {_dumps(e.data)}\n\n".encode()


SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


def error_response(code: str, message: str, trace_id: str | None, *, stream: bool = False,
                   status: int | None = None) -> Response:
    status = status or status_of(code)
    if stream:
        body = error_body(code, message, trace_id)
        frames = (sse_frame(ApiEvent(0, "metadata", {"trace_id": trace_id, "release": None}))
                  + sse_frame(ApiEvent(1, "error", body)))
        return Response(frames, status_code=status, media_type=SSE_MEDIA, headers=SSE_HEADERS)
    return json_error(code, message, trace_id, status=status)


# -- the app -----------------------------------------------------------------------------------------

def json_depth_over(data: bytes, limit: int) -> bool:
    """True when the JSON text nests arrays/objects deeper than ``limit`` — checked on the bytes,
    before any parser recurses into them (Python's json raises RecursionError → a 500)."""
    if data.count(b"[") + data.count(b"{") <= limit:
        return False  # cannot be deeper than the number of brackets
    depth, in_string, escaped = 0, False, False
    for byte in data:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):
            depth += 1
            if depth > limit:
                return True
        elif byte in (0x5D, 0x7D):
            depth -= 1
    return False


class BodyLimit:
    """Pure ASGI: bodies over the limit get 413 ``payload_too_large`` without being parsed; a
    non-JSON content type on the API's POST routes gets 415; a body that has not fully arrived
    within ``read_timeout`` seconds (e.g. shorter than its Content-Length) gets 408
    ``request_timeout``; JSON nested deeper than ``max_depth`` gets 422 ``json_too_deep``. The body
    is buffered (it is small)."""

    def __init__(self, app: Any, limit: int, *, max_depth: int = MAX_JSON_DEPTH,
                 read_timeout: float = BODY_READ_TIMEOUT_S):
        self.app, self.limit = app, limit
        self.max_depth, self.read_timeout = max_depth, read_timeout

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] not in ("POST", "PUT", "PATCH"):
            return await self.app(scope, receive, send)
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        trace_id = new_trace_id()

        async def reject(code: str, message: str) -> None:
            service = getattr(getattr(scope.get("app"), "state", None), "service", None)
            if service is not None and scope.get("path") in ("/v1/answer", "/v1/retrieve"):
                state = RequestState(scope["path"].rsplit("/", 1)[-1], trace_id, utcnow())
                state.owner = caller(scope)
                state.mark("received")
                state.error = {"code": code, "message": message}
                state.mark("failed")
                await service.write_trace(state)  # refused unread, but still traced
            resp = error_response(code, message, trace_id)
            await resp(scope, receive, send)

        ctype = headers.get("content-type", "").split(";")[0].strip().lower()
        if ctype and ctype != "application/json" and not ctype.endswith("+json"):
            return await reject("unsupported_media_type", f"content type {ctype!r}; send application/json")
        declared = headers.get("content-length")
        if declared is not None:
            try:
                if int(declared) > self.limit:
                    return await reject("payload_too_large", f"the body has {declared} bytes; the limit is {self.limit}")
            except ValueError:
                return await reject("invalid_request", "bad Content-Length")
        chunks: list[bytes] = []
        size = 0
        deadline = asyncio.get_running_loop().time() + self.read_timeout
        while True:
            remaining = deadline - asyncio.get_running_loop().time()
            try:
                if remaining <= 0:
                    raise asyncio.TimeoutError
                message = await asyncio.wait_for(receive(), remaining)
            except asyncio.TimeoutError:
                return await reject("request_timeout", f"the body did not arrive within "
                                    f"{self.read_timeout:g} s (shorter than its Content-Length?)")
            if message["type"] == "http.disconnect":
                return None
            body = message.get("body", b"")
            size += len(body)
            if size > self.limit:
                return await reject("payload_too_large", f"the body is over {self.limit} bytes")
            chunks.append(body)
            if not message.get("more_body"):
                break
        data = b"".join(chunks)
        if json_depth_over(data, self.max_depth):
            return await reject("json_too_deep", f"the body nests deeper than {self.max_depth} levels")
        if data.strip():
            try:
                json.loads(data, object_pairs_hook=_unique_keys, parse_constant=_no_constant)
            except _DuplicateKey as exc:
                return await reject("duplicate_key", f"the body names {exc.key!r} twice in one object")
            except ValueError:
                return await reject("invalid_json", "the body is not valid JSON (NaN and Infinity are not JSON)")
        if not ctype:  # a body without a content type is read as JSON
            scope = dict(scope)
            scope["headers"] = [*scope["headers"], (b"content-type", b"application/json")]
        delivered = False

        async def replay() -> dict[str, Any]:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": data, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


class _DuplicateKey(ValueError):
    def __init__(self, key: str):
        super().__init__(key)
        self.key = key


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object naming a key twice is refused: parsers disagree on which value wins (a proxy or
    a log reads the first, we would act on the last), so such a body can say two things."""
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise _DuplicateKey(k[:64])
        out[k] = v
    return out


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def create_app(settings: ServeSettings | None = None, *, store: Any = None,
               dispatcher_factory: Any = None) -> FastAPI:
    settings = settings or ServeSettings.from_env()
    holder: dict[str, Service] = {}

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        service = Service(settings, store, dispatcher_factory=dispatcher_factory)
        await asyncio.to_thread(service.startup)
        holder["service"] = service
        app.state.service = service
        purger = asyncio.create_task(_purge_loop(service))
        try:
            async with mcp_lifespan():  # the /mcp session manager (runtime/mcp/http.py)
                yield
        finally:
            purger.cancel()
            with contextlib.suppress(BaseException):
                await purger
            await asyncio.to_thread(service.close)  # drain the trace queue
            if store is None:
                service.store.close()

    app = FastAPI(
        title="UMMAYA serving API", version="1",
        description=("Retrieve adapters and answer citizens' requests for Korean public-service "
                     "outcomes from a published release. Errors everywhere: "
                     '`{"error": {"code", "message", "trace_id"}}`; codes in runtime/serve/README.md.'),
        lifespan=lifespan, openapi_url=None, docs_url=None, redoc_url=None,
    )

    def svc(request: Request) -> Service:
        return request.app.state.service

    def wants_stream(body: Any) -> bool:
        return isinstance(body, dict) and body.get("stream") is True

    async def record_failure(request: Request, state: RequestState | None, code: str, message: str,
                             stream: bool) -> Response:
        trace_id = state.trace_id if state else new_trace_id()
        service = getattr(request.app.state, "service", None)
        if service is not None and request.url.path in ("/v1/answer", "/v1/retrieve"):
            if state is None:
                state = RequestState(request.url.path.rsplit("/", 1)[-1], trace_id, utcnow(), stream=stream)
                state.owner = caller(request.scope)
                state.mark("received")
            state.error = {"code": code, "message": message}
            state.mark("failed")
            await service.write_trace(state)
            if not state.trace_stored:
                trace_id = None  # never name a trace that was not stored
        return error_response(code, message, trace_id, stream=stream)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> Response:
        errors = exc.errors()
        if any(e.get("type") == "json_invalid" for e in errors):
            return await record_failure(request, None, "invalid_json", "the body is not valid JSON", False)
        first = errors[0] if errors else {}
        loc = ".".join(str(x) for x in first.get("loc", ()) if x != "body") or "body"
        code = "invalid_request"
        where = tuple(first.get("loc", ()))
        if where == ("body", "query"):  # the query's own stable codes
            code = {"string_too_short": "empty_query", "string_pattern_mismatch": "empty_query",
                    "string_too_long": "query_too_long"}.get(first.get("type", ""), code)
        elif where[:2] == ("body", "filters") and len(where) > 2:
            code = "invalid_filter"
        message = {"empty_query": "the request is empty (no letters or digits)",
                   "query_too_long": f"the request is over {M.MAX_QUERY_CHARS} characters",
                   "invalid_filter": f"{loc}: {first.get('msg', 'invalid')}"}.get(
                       code, f"{loc}: {first.get('msg', 'invalid')}")
        return await record_failure(request, None, code, message, wants_stream(exc.body))

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> Response:
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "invalid_request")
        # Not a turn, so nothing is stored; the id still lets a client's report meet the log line.
        trace_id = new_trace_id()
        log.info("%s %s -> %s (trace %s)", request.method, request.url.path, code, trace_id)
        resp = error_response(code, str(exc.detail), trace_id, status=exc.status_code)
        if exc.headers:
            resp.headers.update(exc.headers)
        return resp

    @app.exception_handler(Exception)
    async def _crash(request: Request, exc: Exception) -> Response:
        from ummaya.runtime.store.records import StoreFault

        if isinstance(exc, StoreFault):  # a stable code, and no trace id: none was stored
            log.error("store fault on %s %s: %s", request.method, request.url.path, exc.code)
            return error_response(exc.code, exc.message, None)
        trace_id = new_trace_id()
        log.exception("unhandled error (trace %s)", trace_id)
        return error_response("internal_error", "an unexpected server error", trace_id)

    # -- routes ----------------------------------------------------------------------------------

    errors: dict[int | str, dict[str, Any]] = {s: {"model": M.ErrorResponse, "description": d} for s, d in (
        (400, "invalid_json"), (401, "unauthorized (only when the server has API keys)"),
        (404, "release_not_found, knowledge_base_not_found, unknown_adapter, session_not_found"),
        (408, "request_timeout"), (413, "payload_too_large"), (415, "unsupported_media_type"),
        (422, errors_422),
        (500, "internal_error"), (502, "provider_* / adapter_error"),
        (503, "provider_unavailable, channel_unavailable, credential_missing, release_unavailable, "
               "trace_backlog"),
        (504, "provider_timeout"))}

    @app.get("/healthz", response_model=M.Health, response_model_exclude_none=True, tags=["ops"])
    async def healthz(request: Request) -> dict[str, Any]:
        service = getattr(request.app.state, "service", None)
        return {"status": "ok", **({"traces": service.traces.stats()} if service is not None else {})}

    @app.get("/readyz", response_model=M.Health, response_model_exclude_none=True, tags=["ops"],
             responses={503: {"model": M.ErrorResponse, "description": "not_ready"}})
    async def readyz(request: Request) -> Any:
        service = svc(request)
        release, ready = await asyncio.to_thread(service.active)
        if not ready:
            why = ("no release behind alias " + repr(service.settings.default_alias)) if release is None \
                else f"release {release.release_id} is not loaded"
            return error_response("not_ready", why, None)
        return {"status": "ready", "release": {"id": release.release_id, "alias": service.settings.default_alias}}

    @app.get("/openapi.json", include_in_schema=False)
    async def openapi() -> Response:
        return Response(openapi_bytes(app), media_type="application/json")

    @app.get("/v1/releases", response_model=M.ReleasesResponse, tags=["releases"])
    async def releases(request: Request) -> dict[str, Any]:
        service = svc(request)

        def read() -> dict[str, Any]:
            aliases = service.store.aliases()
            by_release: dict[str, list[str]] = {}
            for a, rid in aliases.items():
                by_release.setdefault(rid, []).append(a)
            rows = []
            history = service.store.alias_history()
            for r in service.store.list_releases():
                d = r.to_dict()
                evals = service.store.release_evaluations(r.release_id)
                rows.append({k: d[k] for k in ("release_id", "created_at", "catalog_sha256",
                                               "retrieval_policy", "meta")}
                            | {"aliases": sorted(by_release.get(r.release_id, [])),
                               "evaluations": {s: e.to_dict(cases=False) for s, e in evals.items()},
                               "history": [m.to_dict(report=False) for m in history
                                           if m.release_id == r.release_id]})
            return {"releases": rows, "aliases": aliases, "default_alias": service.settings.default_alias}

        return await asyncio.to_thread(read)

    @app.get("/v1/traces/{trace_id}", response_model=M.TraceResponse, tags=["traces"],
             responses={401: {"model": M.ErrorResponse, "description": "unauthorized"},
                        404: {"model": M.ErrorResponse, "description": "trace_not_found"}})
    async def trace(request: Request, trace_id: str) -> Any:
        service = svc(request)
        t = await asyncio.to_thread(service.store.get_trace, trace_id)  # expired → None
        # Another key's trace is "not found" too: its existence is not confirmed.
        if t is None or not same_owner(t.owner, caller(request.scope)):
            return error_response("trace_not_found", f"no trace {trace_id!r}", trace_id)
        return Response(_dumps(public_trace(t)).encode(), media_type="application/json")

    sse_doc = {"content": {SSE_MEDIA: {"schema": {**SSE_EVENT_SCHEMA, "description": (
        "Server-sent events: metadata, then evidence / tool_call / tool_result / permission / "
        "delta as the turn goes (retrieve: candidate), then exactly one completed or error. "
        "Every event has an id (its sequence number) and JSON data.")}}}}

    @app.post("/v1/retrieve", response_model=M.RetrieveResponse, tags=["pipeline"],
              responses={200: sse_doc, **errors})
    async def retrieve(request: Request, body: M.RetrieveRequest) -> Any:
        service = svc(request)
        state = RequestState("retrieve", new_trace_id(), utcnow(), stream=body.stream)
        state.owner = caller(request.scope)
        state.mark("received")
        try:
            p = await prepare(service, body, state, answer=False)
            result = retrieve_result(service, p, language_of(p.query))
        except ApiError as exc:
            return await record_failure(request, state, exc.code, exc.message, body.stream)
        await service.write_trace(state)
        if body.stream:
            frames = [ApiEvent(0, "metadata", {"trace_id": result["trace_id"], "release": result["release"]})]
            frames += [ApiEvent(i + 1, "candidate", c) for i, c in enumerate(result["candidates"])]
            frames.append(ApiEvent(len(frames), "completed", {"trace_id": result["trace_id"],
                                                              "dropped": result["dropped"],
                                                              "policy": result["policy"]}))
            return Response(b"".join(sse_frame(f) for f in frames), media_type=SSE_MEDIA, headers=SSE_HEADERS)
        return Response(_dumps(result).encode(), media_type="application/json")

    @app.post("/v1/answer", response_model=M.AnswerResponse, tags=["pipeline"],
              responses={200: sse_doc, **errors})
    async def answer(request: Request, body: M.AnswerRequest) -> Any:
        service = svc(request)
        state = RequestState("answer", new_trace_id(), utcnow(), stream=body.stream)
        state.owner = caller(request.scope)
        state.mark("received")
        try:
            p = await prepare(service, body, state, answer=True)
        except ApiError as exc:
            return await record_failure(request, state, exc.code, exc.message, body.stream)
        if body.stream:
            async def frames() -> AsyncIterator[bytes]:
                held: list[bytes] = []
                async for e in answer_events(service, p):
                    if e is not None:
                        held.append(sse_frame(e))
                    elif held:
                        yield b"".join(held)
                        held.clear()
                if held:
                    yield b"".join(held)

            return StreamingResponse(frames(), media_type=SSE_MEDIA, headers=SSE_HEADERS)
        events = [e async for e in answer_events(service, p, live=False) if e is not None]
        ok, err = fold(events)
        if err is not None:
            return Response(_dumps(err).encode(), status_code=status_of(err["error"]["code"]),
                            media_type="application/json")
        return Response(_dumps(ok).encode(), media_type="application/json")

    # MCP over streamable HTTP and the citizen page (issue 14): both outside the OpenAPI document.
    from ummaya.runtime.mcp.http import mount as mount_mcp

    from .page import mount as mount_web

    mcp_lifespan = mount_mcp(app, lambda: holder["service"], mode=settings.mode_ceiling)
    mount_web(app)
    app.add_middleware(BodyLimit, limit=settings.max_body_bytes, max_depth=settings.max_json_depth,
                       read_timeout=settings.body_read_timeout_s)
    app.add_middleware(ApiKeyAuth, keys=settings.api_keys)  # outermost: before any body is read
    return app


def _without_session_ids(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_session_ids(v) for k, v in value.items() if k != "session_id"}
    if isinstance(value, list):
        return [_without_session_ids(v) for v in value]
    return value


def public_trace(t: Trace) -> dict[str, Any]:
    """A stored trace as the API shows it: no session id anywhere (a session id is a bearer
    credential for the citizen's consents and place) and no key fingerprint."""
    d = t.to_dict()
    d.pop("owner", None)
    return _without_session_ids(d)


async def _purge_loop(service: Service) -> None:
    interval = max(1.0, service.settings.purge_interval_s)
    while True:
        await asyncio.sleep(interval)
        try:
            service.purged += await asyncio.to_thread(service.store.purge_expired)
            from ummaya.runtime.dialogue.state import session_ttl

            await asyncio.to_thread(service.store.purge_issued_sessions, session_ttl())
        except Exception:
            log.exception("trace purge failed")


def openapi_document(app: FastAPI) -> dict[str, Any]:
    """The OpenAPI document, with the error codes table attached."""
    from fastapi.openapi.utils import get_openapi

    doc = get_openapi(title=app.title, version=app.version, description=app.description,
                      routes=app.routes)
    doc["x-error-codes"] = {c: {"status": s, "meaning": m} for c, (s, m) in sorted(CODES.items())}
    # FastAPI documents its own 422 shape; ours is the one error shape. A request that asked for a
    # stream gets its error as an SSE body (metadata, then error) with the same status.
    err = {"$ref": "#/components/schemas/ErrorResponse"}
    for route, path in doc.get("paths", {}).items():
        for op in path.values():
            for status, resp in op.get("responses", {}).items():
                if status == "422":
                    resp["description"] = errors_422
                if status[0] in "45":
                    resp["content"] = {"application/json": {"schema": err}}
                    if route in ("/v1/answer", "/v1/retrieve") and status not in ("400", "413", "415"):
                        resp["content"][SSE_MEDIA] = {"schema": SSE_EVENT_SCHEMA}
    for name in ("HTTPValidationError", "ValidationError"):
        doc.get("components", {}).get("schemas", {}).pop(name, None)
    return doc


errors_422 = ("invalid_request, empty_query, query_too_long, unknown_filter, invalid_filter, "
              "json_too_deep")


def openapi_bytes(app: Any) -> bytes:
    return (json.dumps(openapi_document(app), ensure_ascii=False, sort_keys=True, indent=2) + "\n").encode()


def quiet_upstream_logs(env: dict[str, str] | None = None) -> None:
    """httpx writes an INFO line for every upstream request — Mock calls included — and each line
    is built and scrubbed (runtime/log_filter.py) before any handler sees it: ~0.5 ms of server CPU
    per answer. Every call is in the answer's trace already (adapter, tier, status, timing), so
    the server logs httpx from WARNING up unless ``UMMAYA_LOG_UPSTREAM=on``, the server runs at
    debug level (``--log-level debug``) or httpx's level was set."""
    if _env_on((os.environ if env is None else env).get("UMMAYA_LOG_UPSTREAM"), default=False):
        return
    if logging.getLogger("uvicorn.error").isEnabledFor(logging.DEBUG):
        return
    for name in ("httpx", "httpcore"):
        logger = logging.getLogger(name)
        if logger.level == logging.NOTSET:
            logger.setLevel(logging.WARNING)


def app_from_env() -> Any:
    """The uvicorn factory: ``uvicorn --factory ummaya.runtime.serve.app:app_from_env``."""
    from ummaya.runtime.log_filter import install

    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    install()  # every worker: no credential (a Live call's URL) or personal data in any log line
    quiet_upstream_logs()
    return create_app(ServeSettings.from_env())
