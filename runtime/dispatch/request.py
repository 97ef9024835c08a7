"""Build the upstream request from the manifest's ``Upstream`` block and the arguments.

Query order: ``static_params`` (profile merged with manifest), ``format_param`` (only when the
adapter asks for JSON — XML is every data.go.kr default), ``params`` (upstream name ← input field;
absent optional inputs skipped; input_schema defaults applied before we get here),
``derived_params`` (shared resolvers), then the key. Values are sent as the upstream expects them:
lists comma-joined, booleans lowercase.

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

from ummaya.codegen.manifest import Auth, Lookup, Upstream
from ummaya.runtime.schemas import errors as schema_errors

from .errors import ADAPTER_ERROR, CREDENTIAL_MISSING, UpstreamError
from .resolvers import resolve

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


def credential(env: Mapping[str, str], name: str | None) -> str:
    # Keys are pasted from portals; a trailing newline would otherwise reach the upstream.
    value = (env.get(name) or "").strip() if name else ""
    if not value:
        raise UpstreamError(
            CREDENTIAL_MISSING, "CREDENTIAL_MISSING", f"environment variable {name} is not set"
        )
    return value


def query_pairs(
    mapping: Mapping[str, str], static: Mapping[str, Any], args: Mapping[str, Any]
) -> list[tuple[str, str]]:
    merged: dict[str, str] = {k: param_value(v) for k, v in static.items() if v is not None}
    for upstream_name, input_name in mapping.items():
        if input_name in args and args[input_name] is not None:
            merged[upstream_name] = param_value(args[input_name])
    return list(merged.items())


def build_request(
    upstream: Upstream,
    args: Mapping[str, Any],
    *,
    base_url: str,
    now: dt.datetime,
    env: Mapping[str, str] | None,
    token: str | None = None,
) -> BuiltRequest:
    """``env`` None means "no auth" (Mock): the same request, minus the key."""
    pairs = dict(query_pairs({}, upstream.static_params, args))
    if upstream.format == "json":
        pairs.update({k: param_value(v) for k, v in (upstream.format_param or {}).items()})
    pairs.update(dict(query_pairs(upstream.params, {}, args)))
    for name, expr in upstream.derived_params.items():
        pairs[name] = resolve(expr, args, now)
    req = BuiltRequest(
        upstream.method,
        join_url(base_url, upstream.path),
        list(pairs.items()),
        secret_names=secret_names(upstream.auth),
    )
    if env is not None:
        apply_auth(req, upstream.auth, env, token)
    return req


def build_lookup_request(
    upstream: Upstream, lookup: Lookup, args: Mapping[str, Any], *, base_url: str
) -> BuiltRequest:
    """The lookup step's request: same static/format parameters and key as the main request."""
    pairs = dict(query_pairs({}, {**upstream.static_params, **lookup.static_params}, args))
    if upstream.format == "json":
        pairs.update({k: param_value(v) for k, v in (upstream.format_param or {}).items()})
    pairs.update(dict(query_pairs(lookup.params, {}, args)))
    return BuiltRequest(
        "GET",
        join_url(base_url, lookup.path),
        list(pairs.items()),
        secret_names=secret_names(upstream.auth),
    )


def apply_auth(
    req: BuiltRequest, auth: Auth | None, env: Mapping[str, str], token: str | None
) -> None:
    if auth is None or auth.style == "none":
        return
    if auth.style == "query":
        req.params.append((auth.param or "", service_key(credential(env, auth.credential))))
    elif auth.style == "header":
        req.headers[auth.param or "Authorization"] = auth.prefix + credential(env, auth.credential)
    elif auth.style == "token_exchange":
        if token is None:
            raise UpstreamError(ADAPTER_ERROR, "TOKEN", "token exchange did not produce a token")
        req.params.append((auth.param or "accessToken", token))


# -- arguments ---------------------------------------------------------------------------------


def with_defaults(input_schema: dict[str, Any], args: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(args)
    for name, prop in (input_schema.get("properties") or {}).items():
        if name not in out and isinstance(prop, dict) and "default" in prop:
            out[name] = copy.deepcopy(prop["default"])
    return out


def check_arguments(input_schema: dict[str, Any], args: Mapping[str, Any]) -> None:
    errors = schema_errors(input_schema, dict(args))
    if errors:
        err = errors[0]
        where = "/".join(str(p) for p in err.absolute_path) or "(arguments)"
        raise UpstreamError(ADAPTER_ERROR, "INVALID_ARGUMENTS", f"{where}: {err.message}")
