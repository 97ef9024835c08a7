"""The Dispatcher: one engine for every manifest, Live / Mock / Handoff.

Live and Mock run the very same code — request building, lookup step, envelope reading,
projection, schema check — and differ only in the httpx transport: Live uses the real network (or
the ``transport=`` given, e.g. for tests), Mock a fixture transport answering with the fixture's
bytes, status and content type. Mock sends no key and skips the token exchange.

Live safety rails:
- host guard: every request (lookup and token requests included) must go to the host of the
  manifest's ``base_url``; ``base_url_overrides[adapter_id]``, ``UMMAYA_BASE_URL_<ADAPTER_ID>`` or
  ``UMMAYA_BASE_URL_<PROFILE_ID>`` (environment) is the only way to point it elsewhere. Anything
  else is refused with adapter_error HOST_GUARD before a byte is sent; redirects are not followed.
- credential binding (binding.py): a key, token-exchange secret or exchanged token is attached
  only for a URL on its profile's declared hosts over https (or the operator's override), else
  HOST_GUARD — so a manifest with its own ``base_url`` never carries a profile's key.
- one deadline per call: ``upstream.timeout_s`` (profile default 10 s, per-manifest override) bounds
  the whole call — connect, read and body of every request it sends (lookup, token, retries and
  backoff included), so an upstream that drips a byte a second ends as channel_unavailable TIMEOUT
  within it; retries never stretch a call past its deadline.
- every request carries ``User-Agent: ummaya/<version> (Korean public-service client)``.
- bounded retries: only ``retryable`` errors (timeouts, connect errors, 5xx/429, transient and
  quota result codes) are retried, ``max_attempts`` in all, with exponential backoff through an
  injectable ``sleep`` (a ``Retry-After`` in seconds lengthens the wait, up to 5 s).
- token exchange (SGIS): the token is cached per host+token_path for ``token_ttl_s`` and refreshed
  once when the answer carries one of ``auth.expired_codes``; concurrent calls share one exchange.
- ``cache_ttl_s``: in-memory TTL cache of ok/no_data outcomes keyed by adapter + arguments,
  bounded by ``cache_max_entries``.
- ``rate_limit_per_s``: requests to one host are spaced at least 1/rate seconds apart, on the
  injectable ``monotonic`` clock, waiting through the same injectable ``sleep``.
- bodies are streamed and refused past ``max_body_bytes``; environment proxy settings apply to
  real hosts but never to a loopback override.

- ``quota.per_day``: calls to one host are counted per KST day in this process; past the cap the
  call is refused before a byte is sent (channel_unavailable QUOTA_LOCAL). ``quota.per_second``
  spaces requests when no ``rate_limit_per_s`` is set.

Steps (``upstream.steps``, and ``lookup``, the first step's old form) run in order before the main
request, each when an input it fills is missing; each fills inputs from the first record (or the
first that ``match``es the citizen's words). A step that finds nothing ends the call as
``no_data`` naming the step, unless it is ``optional``. A step may name another profile: its
requests go to that profile's host only, with that profile's key.

Paging (``upstream.paging``): when ``max_pages`` > 1 the engine reads further pages while the last
was full and the total says there are more, then filters/sorts over all of them (``after.py``).

Mock with steps: a step's request is answered from ``<fixture stem>.<step id><suffix>`` beside the
fixture body (``.lookup`` for the old single lookup) when that file exists; otherwise the step is
skipped and the fixture answers the main request directly. Page N > 1 is answered from
``<fixture stem>.page<N><suffix>`` when present, else paging stops (fixture choice and the
fixture transport: ``fixtures.py``).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import functools
import json
import os
import ssl
import time
import zlib
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import httpx

from ummaya import USER_AGENT
from ummaya.model.manifest import Manifest, Step, Upstream
from ummaya.runtime.catalog import Catalog, CatalogError

from ummaya.wire.after import choose
from ummaya.wire.calendar import anchor_of, to_today
from ummaya.wire.envelopes import Parsed, read_response, records_of
from ummaya.wire.errors import ADAPTER_ERROR, CHANNEL_UNAVAILABLE, CREDENTIAL_MISSING, UpstreamError
from ummaya.wire.fixture_reader import outcome_from_expected, with_defaults
from ummaya.wire.outcome import CallOutcome, TierName, error_outcome, handoff_outcome, ms
from ummaya.wire.output import build_output, records_from
from ummaya.wire.resolvers import Clock, issue_params, kst, utc_now
from ummaya.wire.transforms import get_path

from .binding import CredentialGuard, credential, origin_of
from .fixtures import (
    FixtureTransport,
    fixture_content_type,
    page_fixture_name,
    pick_fixture,
    step_fixture_name,
)
from .request import (
    BuiltRequest,
    apply_auth,
    build_request,
    build_step_request,
    check_arguments,
    host_of,
    join_url,
)

Mode = Literal["auto", "live", "mock"]
MAX_RETRY_AFTER_S = 5.0  # a turn cannot wait minutes; past this, channel_unavailable is the answer
MOCK_BASE_URL = "https://mock.invalid"
DEFAULT_DEADLINE_S = 10.0  # one upstream call, retries included (issue 11)  # mock-tier adapters may have no real host at all


@functools.lru_cache(maxsize=1)
def _ssl_context() -> ssl.SSLContext:
    # Building a client's default context loads the CA bundle (~0.1 s); one shared context keeps
    # per-call clients cheap, which call_many's concurrency depends on.
    return httpx.create_ssl_context()



class _BoundedDecoder:
    """The body as sent, decoded here rather than by httpx so that the size limit holds for what
    it decodes to: httpx inflates each received chunk whole (a 64 KB gzip chunk can become 64 MB)
    and chains every listed coding (``gzip, gzip``: 64 KB → 64 MB → 64 GB). One coding at most,
    gzip or deflate; the limit is checked on every inflated piece (``max_length``)."""

    def __init__(self, content_encoding: str, limit: int):
        codings = [c.strip().lower() for c in content_encoding.split(",") if c.strip()]
        codings = [c for c in codings if c != "identity"]
        if len(codings) > 1 or (codings and codings[0] not in ("gzip", "x-gzip", "deflate")):
            raise UpstreamError(ADAPTER_ERROR, "PARSE",
                                f"unsupported Content-Encoding {content_encoding[:80]!r}")
        self.limit, self.size = limit, 0
        self.coding = codings[0] if codings else ""
        self.inflater: Any = None
        if self.coding in ("gzip", "x-gzip"):
            self.inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif self.coding == "deflate":
            self.inflater = zlib.decompressobj()
        self.first = True

    def _count(self, piece: bytes) -> bytes:
        self.size += len(piece)
        if self.size > self.limit:
            raise UpstreamError(ADAPTER_ERROR, "PARSE", f"body larger than {self.limit} bytes refused")
        return piece

    def decode(self, data: bytes) -> list[bytes]:
        if self.inflater is None:
            return [self._count(data)] if data else []
        out: list[bytes] = []
        while data:
            try:
                piece = self.inflater.decompress(data, self.limit - self.size + 1)
            except zlib.error as exc:
                if self.coding == "deflate" and self.first:  # raw deflate, no zlib header
                    self.inflater, self.first = zlib.decompressobj(-zlib.MAX_WBITS), False
                    continue
                raise UpstreamError(ADAPTER_ERROR, "PARSE", f"body does not inflate: {exc}") from None
            self.first = False
            out.append(self._count(piece))
            data = self.inflater.unconsumed_tail
        return out

    def flush(self) -> list[bytes]:
        if self.inflater is None:
            return []
        try:
            return [self._count(self.inflater.flush())]
        except zlib.error as exc:
            raise UpstreamError(ADAPTER_ERROR, "PARSE", f"body does not inflate: {exc}") from None

class _KeepOpen(httpx.AsyncBaseTransport):
    """A caller's transport outlives each per-call client (clients close their transport)."""

    def __init__(self, inner: httpx.AsyncBaseTransport):
        self.inner = inner

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        return None


# -- one call's mutable state --------------------------------------------------------------------


@dataclass
class _Run:
    manifest: Manifest
    upstream: Upstream
    client: httpx.AsyncClient
    base_url: str
    live: bool
    attempts: int = 0
    url: str | None = None
    mock_routes: frozenset[str] = frozenset()  # Mock: the steps/pages a side file answers
    # Mock replaying a recording made for other arguments: the after-call filters (nearest-first,
    # name match) run with the recording's own request, so the replay shows what the service
    # answered there — the answer then says the data is for another place — instead of an empty
    # list for a place the recording never covered.
    after_args: dict | None = None
    deadline: float = float("inf")  # event-loop time by which the whole call must be over
    guard: CredentialGuard | None = None  # Live: where this call's credentials may go
    sent: dict = field(default_factory=dict)  # the main request's parameters (columns_to_rows.base)
    # Mock: the recording's own moment; the issue time it answered is the one read into rows
    # (calendar.py then moves those rows to today, once).
    issue_anchor: dt.datetime | None = None


class Dispatcher:
    def __init__(
        self,
        catalog: Catalog,
        *,
        env: Mapping[str, str] | None = None,
        base_url_overrides: Mapping[str, str] | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        clock: Clock = utc_now,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
        monotonic: Callable[[], float] = time.monotonic,
        max_attempts: int = 3,
        backoff_s: float = 0.2,
        max_body_bytes: int = 20_000_000,
        cache_max_entries: int = 1024,
        on_response: Callable[[BuiltRequest, int, str, bytes], Any] | None = None,
    ):
        self.catalog = catalog
        self.env: Mapping[str, str] = os.environ if env is None else env
        self.base_url_overrides = dict(base_url_overrides or {})
        self.transport = transport
        self.clock = clock
        self.sleep = sleep
        self.monotonic = monotonic
        self.max_attempts = max(1, max_attempts)
        self.backoff_s = backoff_s
        self.max_body_bytes = max_body_bytes
        self.cache_max_entries = max(1, cache_max_entries)
        # Sees every upstream answer (request, status, content type, body) before it is read —
        # `ummaya record` keeps the bytes. Token-exchange answers are never shown to it.
        self.on_response = on_response
        self._tokens: dict[tuple[str, str], tuple[str, float]] = {}
        self._token_locks: dict[tuple[int, str, str], asyncio.Lock] = {}
        self._cache: dict[tuple[str, str], tuple[float, CallOutcome]] = {}
        self._next_slot: dict[str, float] = {}
        self._day_calls: dict[tuple[str, str], int] = {}  # (host, KST date) -> requests sent

    # -- tiers -----------------------------------------------------------------------------

    def resolve_tier(self, adapter_id: str, mode: Mode) -> TierName:
        if mode not in ("auto", "live", "mock"):
            raise ValueError(f"mode must be auto, live or mock, not {mode!r}")
        m = self.catalog.get(adapter_id)
        if m.tier == "handoff":
            return "handoff"
        if m.tier == "mock" or m.upstream is None or not m.upstream.callable:
            return "mock"
        if mode == "mock":
            return "mock"
        if mode == "live":
            return "live"
        return "live" if all((self.env.get(v) or "").strip() for v in m.credentials) else "mock"

    def base_url_for(self, manifest: Manifest) -> str | None:
        return self.override_for(manifest) or (manifest.upstream.base_url if manifest.upstream else None)

    def override_for(self, manifest: Manifest) -> str | None:
        """The operator's base URL for this adapter (argument or environment), if any."""
        override = self.base_url_overrides.get(manifest.id)
        if override:
            return override
        names = [manifest.id]
        if manifest.upstream and manifest.upstream.profile:
            names.append(manifest.upstream.profile)
        for name in names:
            value = self.env.get(f"UMMAYA_BASE_URL_{name.upper()}")
            if value:
                return value
        return None

    def guard_for(self, manifest: Manifest) -> CredentialGuard:
        override = self.override_for(manifest)
        bound = manifest.upstream.credential_hosts if manifest.upstream else {}
        return CredentialGuard(bound, origin_of(override) if override else None, manifest.id)

    def step_base_url(self, manifest: Manifest, step: Step, main_base: str) -> str | None:
        """A step on the main profile goes where the main request goes; one on another profile
        to that profile's host, or to ``base_url_overrides["<adapter id>.<step id>"]`` /
        ``UMMAYA_BASE_URL_<PROFILE>`` (the only ways to point it elsewhere)."""
        if step.profile is None:
            return main_base
        return self.step_override(manifest, step) or step.base_url

    def step_override(self, manifest: Manifest, step: Step) -> str | None:
        assert step.profile is not None
        override = self.base_url_overrides.get(f"{manifest.id}.{step.id}") or self.base_url_overrides.get(step.profile)
        return override or self.env.get(f"UMMAYA_BASE_URL_{step.profile.upper()}") or None

    def step_guard(self, run: _Run, step: Step | None) -> CredentialGuard | None:
        """The binding for one request: a step on another profile has its own override origin
        (the key it carries is still one its profile binds, to that profile's hosts)."""
        if step is None or step.profile is None or run.guard is None:
            return run.guard
        override = self.step_override(run.manifest, step)
        return CredentialGuard(run.guard.bound, origin_of(override) if override else None, run.manifest.id)

    # -- public calls ------------------------------------------------------------------------

    async def call(
        self, adapter_id: str, args: dict, *, mode: Mode = "auto", fixture: str | None = None
    ) -> CallOutcome:
        t0 = time.perf_counter()
        try:
            return await self._call(adapter_id, args, mode, fixture, t0)
        except Exception as exc:  # noqa: BLE001 — a turn stops with a reason, it never crashes
            err = UpstreamError(ADAPTER_ERROR, "INTERNAL", f"{type(exc).__name__}: {exc}")
            return error_outcome(adapter_id, "live" if mode == "live" else "mock", err, t0)

    async def _call(
        self, adapter_id: str, args: dict, mode: Mode, fixture: str | None, t0: float
    ) -> CallOutcome:
        try:
            manifest = self.catalog.get(adapter_id)
        except CatalogError as exc:
            return error_outcome(
                adapter_id,
                "live" if mode == "live" else "mock",
                UpstreamError(ADAPTER_ERROR, "UNKNOWN_ADAPTER", str(exc)),
                t0,
            )
        tier = self.resolve_tier(adapter_id, mode)
        if tier == "handoff":
            return handoff_outcome(manifest, t0)
        try:
            args = with_defaults(manifest.input_schema, args or {})
            check_arguments(manifest.input_schema, args)
        except UpstreamError as exc:
            return error_outcome(adapter_id, tier, exc, t0)
        if tier == "mock":
            return await self._mock(manifest, args, fixture, t0)
        return await self._live(manifest, args, t0)

    async def call_many(
        self, calls: list[tuple[str, dict]], *, mode: Mode = "auto"
    ) -> list[CallOutcome]:
        return list(await asyncio.gather(*(self.call(a, args, mode=mode) for a, args in calls)))

    # -- tiers' bodies -------------------------------------------------------------------------

    async def _mock(
        self, manifest: Manifest, args: dict, fixture_name: str | None, t0: float
    ) -> CallOutcome:
        assert manifest.upstream is not None
        try:
            fx = pick_fixture(manifest, args, fixture_name)
        except UpstreamError as exc:
            return error_outcome(manifest.id, "mock", exc, t0)
        if fx.response is None:
            return to_today(manifest, fx, outcome_from_expected(manifest, fx, t0), self.clock())
        path = self.catalog.fixture_path(manifest.id, fx.response)
        try:
            body = path.read_bytes()
        except OSError as exc:
            err = UpstreamError(ADAPTER_ERROR, "NO_FIXTURE", f"fixture body {path}: {exc.strerror}")
            return error_outcome(manifest.id, "mock", err, t0, fixture=fx.name)
        base = manifest.upstream.base_url or MOCK_BASE_URL
        routes: dict[str, bytes] = {}
        for step in manifest.upstream.chain():
            side = self.catalog.fixture_path(manifest.id, step_fixture_name(fx.response, step.id))
            if side.is_file():
                routes[f"step:{step.id}"] = side.read_bytes()
        paging = manifest.upstream.paging
        for n in range(2, (paging.max_pages if paging else 1) + 1):
            side = self.catalog.fixture_path(manifest.id, page_fixture_name(fx.response, n))
            if not side.is_file():
                break
            routes[f"page:{n}"] = side.read_bytes()
        transport = FixtureTransport(body, fx.status, fixture_content_type(fx), routes)
        # The fixture transport never opens a socket: no SSL context (loading the CA bundle costs
        # ~0.1 s, most of a cold Mock `ask`).
        async with httpx.AsyncClient(
            transport=transport,
            follow_redirects=False,
            trust_env=False,
            headers={"User-Agent": USER_AGENT},
        ) as client:
            run = _Run(
                manifest,
                manifest.upstream,
                client,
                base,
                live=False,
                mock_routes=frozenset(routes),
                issue_anchor=anchor_of(fx),
            )
            recorded = with_defaults(manifest.input_schema, fx.request)
            steps_match = any(step.match is not None for step in manifest.upstream.chain())
            if (manifest.upstream.after is not None or steps_match) and recorded != args:
                run.after_args = recorded
            outcome = await self._execute(run, args, t0)
        outcome.fixture = fx.name
        # A separate step after the fixture is parsed: Mock on today's calendar (calendar.py).
        return to_today(manifest, fx, outcome, self.clock())

    async def _live(self, manifest: Manifest, args: dict, t0: float) -> CallOutcome:
        upstream = manifest.upstream
        assert upstream is not None
        try:
            for name in manifest.credentials:
                credential(self.env, name)
            base = self.base_url_for(manifest)
            if not base:
                raise UpstreamError(
                    ADAPTER_ERROR, "NO_BASE_URL", f"{manifest.id}: upstream.base_url is not set"
                )
        except UpstreamError as exc:
            return error_outcome(manifest.id, "live", exc, t0)

        cache_key = None
        if upstream.cache_ttl_s:
            cache_key = (
                manifest.id,
                json.dumps(args, sort_keys=True, ensure_ascii=False, default=str),
            )
            hit = self._cache.get(cache_key)
            if hit and hit[0] > self._now_s():
                cached = hit[1].model_copy(deep=True)
                cached.attempts = 0
                cached.latency_ms = (time.perf_counter() - t0) * 1000
                return cached

        transport = _KeepOpen(self.transport) if self.transport is not None else None
        # Proxy settings from the environment apply to real hosts, never to a loopback override.
        loopback = httpx.URL(base).host in ("127.0.0.1", "localhost", "::1")
        async with httpx.AsyncClient(
            transport=transport,
            follow_redirects=False,
            verify=_ssl_context(),
            trust_env=not loopback,
            headers={"User-Agent": USER_AGENT},
        ) as client:
            run = _Run(manifest, upstream, client, base, live=True, guard=self.guard_for(manifest))
            outcome = await self._execute(run, args, t0)
        if cache_key and outcome.status in ("ok", "no_data"):
            self._evict()
            self._cache[cache_key] = (
                self._now_s() + float(upstream.cache_ttl_s or 0),
                outcome.model_copy(deep=True),
            )
        return outcome

    async def _execute(self, run: _Run, args: dict, t0: float) -> CallOutcome:
        tier: TierName = "live" if run.live else "mock"
        # Counted from the call's start (client setup included), not from the first request.
        started = asyncio.get_running_loop().time() - (time.perf_counter() - t0)
        run.deadline = started + _deadline_s(run.upstream)
        try:
            filled, empty_step = await self._chain(run, args)
            if empty_step is not None:
                return CallOutcome(
                    adapter_id=run.manifest.id,
                    tier=tier,
                    status="no_data",
                    output=_fit_empty({"items": [], "total_count": 0}, run.manifest.output_schema),
                    error_message=empty_step,
                    upstream_url=run.url,
                    latency_ms=ms(t0),
                    attempts=run.attempts,
                )
            args = filled
            # One operation of several, chosen by an input (upstream.operations): the main request,
            # its pages and the field map are that operation's.
            try:
                run.upstream = run.upstream.for_arguments(args)
            except KeyError as exc:
                raise UpstreamError(ADAPTER_ERROR, "INVALID_ARGUMENTS", str(exc.args[0])) from exc
            parsed = await self._main_request(run, args)
            more = await self._more_pages(run, args, parsed)
            output = build_output(
                parsed, run.upstream, run.manifest.output_schema,
                run.after_args if run.after_args is not None else args, more, run.sent,
                # $input fields: the steps' picks, and in Mock the recording's own request over them.
                inputs={**args, **(run.after_args or {})},
            )
        except UpstreamError as exc:
            out = error_outcome(run.manifest.id, tier, exc, t0)
            out.upstream_url, out.attempts = run.url, run.attempts
            return out
        status = "no_data" if parsed.status == "no_data" or not output.get("items") else "ok"
        return CallOutcome(
            adapter_id=run.manifest.id,
            tier=tier,
            status=status,
            output=output,
            upstream_url=run.url,
            latency_ms=ms(t0),
            attempts=run.attempts,
        )

    # -- steps ---------------------------------------------------------------------------------

    async def _chain(self, run: _Run, args: dict) -> tuple[dict, str | None]:
        """Run the steps in order; (filled arguments, None) or (arguments, why a step found
        nothing) — that ends the call as no_data."""
        for step in run.upstream.chain():
            if step.when_missing is not None and all(args.get(f) is not None for f in step.when_missing):
                continue
            if not run.live and f"step:{step.id}" not in run.mock_routes:
                continue  # Mock without the step's recording: the fixture answers directly
            base = self.step_base_url(run.manifest, step, run.base_url) if run.live else run.base_url
            if not base:
                raise UpstreamError(ADAPTER_ERROR, "NO_BASE_URL", f"upstream.steps.{step.id}: no host")
            req = build_step_request(run.upstream, step, args, base_url=base, now=self.clock())
            parsed = await self._authorized(run, req, step=step, base=base)
            path = step.record_path if step.record_path is not None else None
            records = records_of(parsed, path if path is not None else _default_path(step))
            # A step's name match, like the after-call filters, runs with a replayed recording's
            # own request: the recording's service/school/stop is shown (labelled as another
            # item's data) rather than no record for words the recording never answered.
            match_args = run.after_args if run.after_args is not None else args
            chosen = choose(records, step.match, match_args)
            if chosen is None:
                if step.optional:
                    continue
                missing = ", ".join(step.when_missing or list(step.pick))
                return args, f"step '{step.id}' found no record for {missing}"
            args = dict(args)
            for input_name, spec in step.pick.items():
                args[input_name] = _picked(chosen, spec, step.id, input_name)
        return args, None

    async def _main_request(self, run: _Run, args: dict, page: int | None = None) -> Parsed:
        req = build_request(run.upstream, args, base_url=run.base_url, now=self.clock(), env=None, page=page)
        if page in (None, 1):
            run.sent = dict(req.params)
            if run.issue_anchor is not None and run.upstream.issue_time is not None:
                run.sent.update(issue_params(run.upstream.issue_time, run.issue_anchor))
        return await self._authorized(run, req, page=page)

    async def _more_pages(self, run: _Run, args: dict, first: Parsed) -> list[Parsed]:
        paging = run.upstream.paging
        if paging is None or paging.max_pages <= 1:
            return []
        out: list[Parsed] = []
        last = first
        for n in range(2, paging.max_pages + 1):
            got = len(records_from(last, run.upstream))
            total = first.total
            if got < paging.size or (total is not None and (n - 1) * paging.size >= total):
                break
            if not run.live and f"page:{n}" not in run.mock_routes:
                break
            last = await self._main_request(run, args, page=n)
            out.append(last)
        return out

    async def _authorized(
        self, run: _Run, req: BuiltRequest, *, step: Step | None = None, base: str | None = None,
        page: int | None = None,
    ) -> Parsed:
        """Send ``req`` with the key (Live); refresh an expired exchanged token once. A step on
        another profile signs with that profile's key and reads that profile's envelope."""
        if not run.live:
            return await self._send(run, req, step=step, base=base, page=page)
        auth = step.auth if step is not None and step.auth is not None else run.upstream.auth
        if auth is None or auth.style == "none":
            return await self._send(run, req, step=step, base=base, page=page)
        if auth.style != "token_exchange":
            signed = _copy_req(req)
            apply_auth(signed, auth, self.env, None, self.step_guard(run, step))
            return await self._send(run, signed, step=step, base=base, page=page)
        stale: str | None = None
        for attempt in (1, 2):
            token = await self._token(run, stale=stale)
            stale = token
            signed = _copy_req(req)
            apply_auth(signed, auth, self.env, token, run.guard)
            try:
                return await self._send(run, signed)
            except UpstreamError as exc:
                if exc.code not in auth.expired_codes or attempt == 2:
                    raise
        raise AssertionError("unreachable")

    async def _token(self, run: _Run, *, stale: str | None) -> str:
        """A valid exchanged token other than ``stale`` (the one the upstream just refused).

        Single-flight per host+token_path: concurrent calls wait for one exchange instead of each
        issuing a token (an issuer may revoke the previous token when it issues a new one)."""
        auth = run.upstream.auth
        assert auth is not None and auth.token_path and auth.token_field
        key = (host_of(run.base_url), auth.token_path)
        # Locks bind to the loop they first wait on; call_sync runs a fresh loop per call.
        lock = self._token_locks.setdefault((id(asyncio.get_running_loop()), *key), asyncio.Lock())
        async with lock:
            cached = self._tokens.get(key)
            if cached and cached[0] != stale and cached[1] > self._now_s():
                return cached[0]
            return await self._exchange(run, key)

    async def _exchange(self, run: _Run, key: tuple[str, str]) -> str:
        auth = run.upstream.auth
        assert auth is not None and auth.token_path and auth.token_field
        url = join_url(run.base_url, auth.token_path)
        assert run.guard is not None
        params = [(k, run.guard.secret(self.env, v, url)) for k, v in auth.token_params.items()]
        req = BuiltRequest("GET", url, params, secret_names=frozenset(auth.token_params))
        parsed = await self._send(run, req, keep_url=False)
        token = get_path(parsed.document, auth.token_field)
        if not token:
            raise UpstreamError(
                CREDENTIAL_MISSING, "TOKEN", f"token response has no '{auth.token_field}'"
            )
        self._tokens[key] = (str(token), self._now_s() + auth.token_ttl_s)
        return str(token)

    async def _send(
        self, run: _Run, req: BuiltRequest, *, keep_url: bool = True, step: Step | None = None,
        base: str | None = None, page: int | None = None,
    ) -> Parsed:
        allowed = base or run.base_url
        if host_of(req.url) != host_of(allowed):
            raise UpstreamError(
                ADAPTER_ERROR,
                "HOST_GUARD",
                f"refusing {host_of(req.url)}: {run.manifest.id} may only reach {host_of(allowed)}",
            )
        envelope = step.envelope if step is not None and step.envelope is not None else run.upstream.envelope
        extensions = {"ummaya_route": f"step:{step.id}" if step is not None else f"page:{page}" if page and page > 1 else "main"}
        if keep_url and step is None and not page:
            run.url = req.redacted_url()
        if run.live:
            self._count_quota(run.upstream, req.url)
        timeout = _deadline_s(run.upstream)
        loop = asyncio.get_running_loop()
        for attempt in range(1, self.max_attempts + 1):
            run.attempts += 1
            if run.live:
                paced = loop.time()
                await self._pace(req.url, _rate(run.upstream))
                run.deadline += loop.time() - paced  # our own spacing is not the upstream's time
            err: UpstreamError
            wait = self.backoff_s * (2 ** (attempt - 1))
            remaining = run.deadline - loop.time()
            try:
                if remaining <= 0:
                    raise asyncio.TimeoutError
                # wait_for bounds connect + headers + the whole body: httpx's own timeouts are per
                # operation, so a drip of one byte a second would never trip them.
                status, reason, body, retry_after, ctype = await asyncio.wait_for(
                    self._fetch(run.client, req, remaining, extensions), remaining
                )
                if self.on_response is not None and keep_url:
                    self.on_response(req, status, ctype, body)
                if retry_after is not None:  # the upstream said when; honour it within bounds
                    wait = min(max(wait, retry_after), MAX_RETRY_AFTER_S)
                return read_response(envelope, status, body, reason, ctype)
            except UpstreamError as exc:
                err = exc
            except (httpx.TimeoutException, asyncio.TimeoutError) as exc:
                err = UpstreamError(
                    CHANNEL_UNAVAILABLE,
                    "TIMEOUT",
                    f"no complete answer within the {timeout:g}s deadline ({type(exc).__name__})",
                    retryable=True,
                )
            except httpx.TransportError as exc:
                err = UpstreamError(
                    CHANNEL_UNAVAILABLE, "CONNECT", f"{type(exc).__name__}: {exc}", retryable=True
                )
            if not err.retryable or attempt == self.max_attempts:
                raise err
            if loop.time() + wait >= run.deadline:
                raise err  # another attempt could not finish before the deadline
            await self.sleep(wait)
        raise AssertionError("unreachable")

    async def _fetch(
        self, client: httpx.AsyncClient, req: BuiltRequest, timeout: float,
        extensions: dict[str, Any] | None = None,
    ) -> tuple[int, str, bytes, float | None, str]:
        """Status, reason, body and Retry-After seconds — refusing bodies over ``max_body_bytes``
        while streaming, so a hostile or runaway upstream cannot fill memory."""
        body = None if req.json is None else json.dumps(req.json, ensure_ascii=False).encode()
        async with client.stream(
            req.method, req.url, params=tuple(req.params), headers=req.headers, timeout=timeout,
            content=body, extensions=extensions,
        ) as resp:
            chunks: list[bytes] = []
            if hasattr(resp, "_content"):
                # A local transport (Mock fixtures) built the response from bytes in memory.
                chunks = _BoundedDecoder("", self.max_body_bytes).decode(resp.content)
            else:
                decoder = _BoundedDecoder(resp.headers.get("content-encoding", ""), self.max_body_bytes)
                async for raw in resp.aiter_raw():
                    chunks.extend(decoder.decode(raw))
                chunks.extend(decoder.flush())
            return (
                resp.status_code,
                resp.reason_phrase,
                b"".join(chunks),
                _retry_after(resp),
                resp.headers.get("content-type", ""),
            )

    async def _pace(self, url: str, rate: float | None) -> None:
        if not rate or rate <= 0:
            return
        # No lock needed: nothing awaits between reading and booking the slot, so concurrent
        # calls on one event loop book consecutive slots.
        host = host_of(url)
        now = self.monotonic()
        slot = max(now, self._next_slot.get(host, now))
        self._next_slot[host] = slot + 1.0 / rate
        if slot > now:
            await self.sleep(slot - now)

    def _count_quota(self, upstream: Upstream, url: str) -> None:
        cap = upstream.quota.per_day if upstream.quota is not None else None
        if not cap:
            return
        key = (host_of(url), kst(self.clock()).strftime("%Y%m%d"))
        used = self._day_calls.get(key, 0)
        if used >= cap:
            raise UpstreamError(
                CHANNEL_UNAVAILABLE, "QUOTA_LOCAL",
                f"the {cap} calls a day this service allows ({host_of(url)}) are used up for today (KST)",
            )
        self._day_calls[key] = used + 1

    def _evict(self) -> None:
        """Keep the cache bounded: drop expired entries, then the oldest ones."""
        if len(self._cache) < self.cache_max_entries:
            return
        now = self._now_s()
        for key in [k for k, (expires, _) in self._cache.items() if expires <= now]:
            del self._cache[key]
        while len(self._cache) >= self.cache_max_entries:
            del self._cache[next(iter(self._cache))]  # dicts keep insertion order

    def _now_s(self) -> float:
        return self.clock().timestamp()


# -- helpers ---------------------------------------------------------------------------------


def _rate(upstream: Upstream) -> float | None:
    if upstream.rate_limit_per_s:
        return upstream.rate_limit_per_s
    return upstream.quota.per_second if upstream.quota is not None else None


def _default_path(step: Step) -> str | None:
    from ummaya.wire.envelopes import default_record_path

    return default_record_path(step.envelope)


def _picked(record: Any, spec: Any, step_id: str, input_name: str) -> Any:
    source = spec if isinstance(spec, str) else spec.source
    value = get_path(record, source)
    if value is None or value == "":
        raise UpstreamError(
            ADAPTER_ERROR, "LOOKUP", f"upstream.steps.{step_id}.pick.{input_name}: record has no field '{source}'"
        )
    if isinstance(spec, str):
        return value
    text = str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)
    if spec.slice is not None:
        text = text[spec.slice[0]:spec.slice[1]]
    if spec.zfill:
        text = text.zfill(spec.zfill)
    return text


def _deadline_s(upstream: Upstream) -> float:
    return float(upstream.timeout_s or DEFAULT_DEADLINE_S)


def _retry_after(resp: httpx.Response) -> float | None:
    """Retry-After in seconds (the delta form; an HTTP date is rare upstream and ignored)."""
    value = resp.headers.get("retry-after", "").strip()
    try:
        return max(0.0, float(value)) if value else None
    except ValueError:
        return None


def _copy_req(req: BuiltRequest) -> BuiltRequest:
    return BuiltRequest(
        req.method, req.url, list(req.params), dict(req.headers), req.secret_names, req.json, req.step
    )


def _fit_empty(output: dict, schema: dict) -> dict:
    props = schema.get("properties", {})
    if "total_count" not in props and schema.get("additionalProperties", True) is False:
        output.pop("total_count", None)
    return output
