"""Build the upstream request from the manifest's ``Upstream`` block and the arguments.

Query order: ``static_params`` (profile merged with manifest), ``format_param`` (only when the
adapter asks for JSON — XML is every data.go.kr default), ``params`` (upstream name ← input field;
absent optional inputs skipped; input_schema defaults applied before we get here),
``derived_params`` (shared resolvers), ``filters`` (``cond[FIELD::OP]``, an input's value or a
fixed one), ``window`` (a KST date window, each bound overridable by an input),
``project_params`` (the citizen's WGS84 coordinates in the upstream's CRS, pyproj), ``paging``
(page size; later pages differ only in the page parameter), then the key. Values are sent as the
upstream expects them: lists comma-joined, booleans lowercase. A POST sends ``json_params`` /
``json_static`` as a JSON body (lists stay lists); ``headers`` are fixed request headers.

Steps (``upstream.steps``) are built here too (``build_step_request``), with their own path,
parameters, filters and — when a step names another profile — their own host and key.

This module is the one place a URL meets a credential (``apply_auth``): a key is never attached to
a plain-http URL other than a loopback test server.

The data.go.kr key must reach httpx *decoded* (httpx encodes it once). Portal users often paste
the encoded key; a key carrying ``%XX`` escapes is unquoted once here so it is never sent as
``%252B`` (the classic SERVICE_KEY_IS_NOT_REGISTERED_ERROR).

Arguments get their ``input_schema`` defaults (``with_defaults``) and are checked against it
(``check_arguments``: adapter_error INVALID_ARGUMENTS naming the field) before anything is built.

``redacted_url`` is what outcomes and traces show: the key, tokens and any parameter named in
``SECRET_PARAMS`` are dropped entirely.
"""

from __future__ import annotations

import copy
import datetime as dt
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlencode, urlsplit

from ummaya.model.manifest import Auth, DateWindow, Filter, Step, Upstream
from ummaya.wire.schemas import errors as schema_errors

from ummaya.wire.errors import ADAPTER_ERROR, UpstreamError
from ummaya.wire.resolvers import issue_params, kst, resolve

from .binding import CredentialGuard

SECRET_PARAMS = frozenset(
    {
        "servicekey",
        "confmkey",
        "accesstoken",
        "consumer_key",
        "consumer_secret",
        "apikey",
        "api_key",
        "key",
        "token",
    }
)
_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")


@dataclass
class BuiltRequest:
    method: str
    url: str
    params: list[tuple[str, str]]
    headers: dict[str, str] = field(default_factory=dict)
    secret_names: frozenset[str] = frozenset()
    json: Any = None  # a POST's JSON body (None: no body)
    step: str | None = None  # the chain step this request belongs to (None: the main request)

    def public_params(self) -> list[tuple[str, str]]:
        return [(k, v) for k, v in self.params if not is_secret(k, self.secret_names)]

    def redacted_url(self) -> str:
        q = urlencode(self.public_params())
        return f"{self.url}?{q}" if q else self.url


def is_secret(name: str, extra: frozenset[str] = frozenset()) -> bool:
    return name.lower() in SECRET_PARAMS or name in extra


def param_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (list, tuple)):
        return ",".join(param_value(x) for x in v)
    return str(v)


def join_url(base_url: str, path: str) -> str:
    # Concatenation, never urljoin: a path like "//other.host/x" must not change the host.
    if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*://", path):
        return path  # absolute (only token_path may be) — the host guard decides
    return base_url.rstrip("/") + path


def host_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.hostname}:{parts.port or ''}".lower()


def service_key(raw: str) -> str:
    return unquote(raw) if _ESCAPE.search(raw) else raw


def secret_names(auth: Auth | None) -> frozenset[str]:
    if auth is None:
        return frozenset()
    names = set(auth.token_params)
    if auth.param and auth.style in ("query", "token_exchange"):
        names.add(auth.param)
    return frozenset(names)


def query_pairs(
    mapping: Mapping[str, str], static: Mapping[str, Any], args: Mapping[str, Any]
) -> list[tuple[str, str]]:
    merged: dict[str, str] = {k: param_value(v) for k, v in static.items() if v is not None}
    for upstream_name, input_name in mapping.items():
        if input_name in args and args[input_name] is not None:
            merged[upstream_name] = param_value(args[input_name])
    return list(merged.items())


def filter_pairs(filters: list[Filter], args: Mapping[str, Any]) -> list[tuple[str, str]]:
    out = []
    for f in filters:
        value = f.value if f.input is None else next(
            (args[n] for n in f.inputs if args.get(n) not in (None, "")), None
        )
        if value is not None and value != "":
            out.append((f.param, param_value(value)))
    return out


_WINDOW_FORMATS = {
    "yyyymmdd": "%Y%m%d",
    "yyyy-mm-dd": "%Y-%m-%d",
    "yyyymmddhhmm": "%Y%m%d%H%M",
    "yyyymmddhhmmss": "%Y%m%d%H%M%S",
}


def window_pairs(window: DateWindow | None, args: Mapping[str, Any], now: dt.datetime) -> list[tuple[str, str]]:
    """The window's bounds in KST: the start at 00:00 of ``today - days_back``, the end at 23:59
    of ``today + days_ahead`` (for the formats with a time), unless an input gives a bound."""
    if window is None:
        return []
    fmt = _WINDOW_FORMATS[window.format]
    today = kst(now)
    start = (today - dt.timedelta(days=window.days_back)).replace(hour=0, minute=0, second=0)
    end = (today + dt.timedelta(days=window.days_ahead)).replace(hour=23, minute=59, second=59)
    out = []
    for param, bound, given in ((window.start_param, start, window.start_input), (window.end_param, end, window.end_input)):
        if not param:
            continue
        value = args.get(given) if given else None
        out.append((param, param_value(value) if value not in (None, "") else bound.strftime(fmt)))
    return out


def projected_pairs(upstream: Upstream, args: Mapping[str, Any]) -> list[tuple[str, str]]:
    spec = upstream.project_params
    if spec is None:
        return []
    from ummaya.wire.geo import from_wgs84

    try:
        lat, lon = float(args[spec.latitude]), float(args[spec.longitude])
    except (KeyError, TypeError, ValueError) as exc:
        raise UpstreamError(
            ADAPTER_ERROR, "INVALID_ARGUMENTS",
            f"upstream.project_params needs numeric '{spec.latitude}' and '{spec.longitude}' inputs",
        ) from exc
    x, y = from_wgs84(spec.crs, lat, lon)
    return [(spec.x, f"{x:.{spec.decimals}f}"), (spec.y, f"{y:.{spec.decimals}f}")]


def json_body(upstream: Upstream, args: Mapping[str, Any]) -> Any:
    if upstream.method != "POST" or not (upstream.json_params or upstream.json_static):
        return None
    body: dict[str, Any] = copy.deepcopy(dict(upstream.json_static))
    for key, input_name in upstream.json_params.items():
        if args.get(input_name) is not None:
            body[key] = copy.deepcopy(args[input_name])
    return body


def build_request(
    upstream: Upstream,
    args: Mapping[str, Any],
    *,
    base_url: str,
    now: dt.datetime,
    env: Mapping[str, str] | None,
    token: str | None = None,
    page: int | None = None,
    guard: Any = None,
) -> BuiltRequest:
    """``env`` None means "no auth" (Mock): the same request, minus the key. ``page`` (with
    ``upstream.paging``) asks for a later page. With ``env``, the credential binding ``guard``
    (binding.CredentialGuard) decides whether the key may go."""
    pairs = dict(query_pairs({}, upstream.static_params, args))
    if upstream.format == "json":
        pairs.update({k: param_value(v) for k, v in (upstream.format_param or {}).items()})
    pairs.update(dict(query_pairs(upstream.params, {}, args)))
    for name, expr in upstream.derived_params.items():
        if value := resolve(expr, args, now):  # "": nothing to derive (law_jo without an article)
            pairs[name] = value
    if upstream.issue_time is not None:
        pairs.update(issue_params(upstream.issue_time, now))
    pairs.update(dict(filter_pairs(upstream.filters, args)))
    pairs.update(dict(window_pairs(upstream.window, args, now)))
    pairs.update(dict(projected_pairs(upstream, args)))
    if upstream.paging is not None:
        pairs[upstream.paging.size_param] = str(upstream.paging.size)
        pairs[upstream.paging.page_param] = str(page or 1)
    body = json_body(upstream, args)
    headers = dict(upstream.headers)
    if body is not None:
        headers.setdefault("Content-Type", "application/json")
    req = BuiltRequest(
        upstream.method,
        join_url(base_url, upstream.path),
        list(pairs.items()),
        headers,
        secret_names=secret_names(upstream.auth),
        json=body,
    )
    if env is not None:
        apply_auth(req, upstream.auth, env, token, guard or CredentialGuard({}))
    return req


def build_step_request(
    upstream: Upstream, step: Step, args: Mapping[str, Any], *, base_url: str, now: dt.datetime | None = None
) -> BuiltRequest:
    """A chain step's request. A step on the main request's profile shares its static and
    format parameters (the key comes with ``apply_auth``, the step's own ``auth``); its own
    ``derived_params`` are resolved at ``now`` (never the main request's)."""
    own_profile = step.profile is not None
    static = dict(step.static_params) if own_profile else {**upstream.static_params, **step.static_params}
    pairs = dict(query_pairs({}, static, args))
    fmt = step.format or upstream.format
    if fmt == "json":
        fp = step.format_param if step.format_param is not None else (upstream.format_param or {})
        pairs.update({k: param_value(v) for k, v in fp.items()})
    pairs.update(dict(query_pairs(step.params, {}, args)))
    if step.derived_params:
        if now is None:
            raise UpstreamError(ADAPTER_ERROR, "NO_CLOCK", f"upstream.steps.{step.id}: derived_params need the engine's clock")
        for name, expr in step.derived_params.items():
            if value := resolve(expr, args, now):
                pairs[name] = value
    pairs.update(dict(filter_pairs(step.filters, args)))
    auth = step.auth if step.auth is not None else upstream.auth
    return BuiltRequest(
        step.method,
        join_url(base_url, step.path),
        list(pairs.items()),
        secret_names=secret_names(auth),
        step=step.id,
    )


_LOOPBACK = ("127.0.0.1", "localhost", "::1")


def apply_auth(
    req: BuiltRequest, auth: Auth | None, env: Mapping[str, str], token: str | None, guard: Any = None
) -> None:
    """Attach the key (or the exchanged token) to ``req``; ``guard`` (binding.CredentialGuard)
    refuses it unless ``req.url`` is one of the hosts the credential is bound to."""
    if auth is None or auth.style == "none":
        return
    if guard is None:
        guard = CredentialGuard({})  # no binding: no key goes anywhere
    parts = urlsplit(req.url)
    if parts.scheme.lower() != "https" and (parts.hostname or "") not in _LOOPBACK:
        # The schema and `ummaya check` refuse such a manifest; this holds for overrides too.
        raise UpstreamError(
            ADAPTER_ERROR, "PLAIN_HTTP",
            f"refusing to send a credential over {parts.scheme}:// to {parts.hostname}",
        )
    if auth.style == "query":
        req.params.append((auth.param or "", service_key(guard.secret(env, auth.credential, req.url))))
    elif auth.style == "header":
        req.headers[auth.param or "Authorization"] = auth.prefix + guard.secret(env, auth.credential, req.url)
    elif auth.style == "token_exchange":
        if token is None:
            raise UpstreamError(ADAPTER_ERROR, "TOKEN", "token exchange did not produce a token")
        guard.check(req.url, auth.token_params.values())  # the token stands for those secrets
        req.params.append((auth.param or "accessToken", token))


# -- arguments ---------------------------------------------------------------------------------


def check_arguments(input_schema: dict[str, Any], args: Mapping[str, Any]) -> None:
    errors = schema_errors(input_schema, dict(args))
    if errors:
        err = errors[0]
        where = "/".join(str(p) for p in err.absolute_path) or "(arguments)"
        raise UpstreamError(ADAPTER_ERROR, "INVALID_ARGUMENTS", f"{where}: {err.message}")
