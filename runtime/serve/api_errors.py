"""The one error shape and the table of stable public codes.

Every failure the API reports — a malformed body, an unknown release, a model provider that timed
out, an upstream agency that is down — is ``{"error": {"code", "message", "trace_id"}}``: the JSON
body with the HTTP status below, or the data of the SSE ``error`` event. The same failure gets the
same code (and the same status, which a stream also carries when it fails before it starts) in
both modes. Codes are part of the public contract: never renamed, only added.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.responses import Response

from ummaya.wire.errors import public_message  # the one scrubber (re-exported: serve's callers use it)

# code -> (HTTP status, what it means). runtime/serve/README.md renders this table.
CODES: dict[str, tuple[int, str]] = {
    # -- the request itself (nothing ran)
    "invalid_json": (400, "the body is not valid JSON"),
    "invalid_request": (422, "a field is missing, of the wrong type or out of range"),
    "unsupported_media_type": (415, "the body must be application/json"),
    "payload_too_large": (413, "the body is over the size limit"),
    "empty_query": (422, "the query is empty after normalisation"),
    "query_too_long": (422, "the query is over the length limit (refused, never truncated)"),
    "unknown_filter": (422, "a filter key the release's retrieval policy does not allow"),
    "invalid_filter": (422, "a filter value that cannot match (e.g. an unknown primitive or tier)"),
    "unknown_adapter": (404, "a consent names an adapter the release does not have"),
    "knowledge_base_not_found": (404, "this server does not serve that project / knowledge base"),
    "release_not_found": (404, "no such release alias or release id (never a fallback)"),
    "trace_not_found": (404, "no such trace (never stored, expired, created with another API key, "
                        "or traces are off)"),
    "session_not_found": (404, "no such session, or idle past UMMAYA_SESSION_TTL_MIN: ids are "
                          "issued by the server on the first turn (send no session_id to start "
                          "one); never adopted from a client"),
    "unauthorized": (401, "this server needs Authorization: Bearer <API key> on /v1 routes"),
    "json_too_deep": (422, "the body nests arrays/objects deeper than the limit"),
    "duplicate_key": (400, "an object in the body names the same key twice"),
    "request_timeout": (408, "the body did not arrive in time (shorter than its Content-Length?)"),
    "not_found": (404, "no such route"),
    "method_not_allowed": (405, "the route exists but not with this method"),
    "release_unavailable": (503, "the release is recorded but its bundle cannot be loaded"),
    "not_ready": (503, "no active release resolves yet"),
    # -- the model provider (generation.planner = openai)
    "provider_timeout": (504, "the model provider did not answer in time"),
    "provider_unavailable": (503, "the model provider is unreachable or answered 5xx"),
    "provider_rate_limited": (503, "the model provider rate-limited us beyond the retry budget"),
    "provider_stream_cut": (502, "the model provider's stream ended before it was complete"),
    "provider_capability": (502, "the model cannot do this (unknown model, no tool calling, context)"),
    "provider_bad_response": (502, "the model provider sent something unusable"),
    "provider_auth": (502, "the model provider refused the server's API key"),
    "provider_config": (503, "the model provider is not configured on this server"),
    # -- the upstream agencies (adapter calls; the turn's stop reasons)
    "adapter_error": (502, "an agency answered something unusable"),
    "channel_unavailable": (503, "an agency is down, slow or over quota (after bounded retries)"),
    "credential_missing": (503, "the server has no (valid) key for an agency"),
    # -- the store (the answer of a public lookup still comes; these are for what needs the store)
    "store_unavailable": (503, "the database cannot be reached or read; nothing was stored"),
    "store_full": (507, "the database has no space left; nothing was stored"),
    "store_busy": (503, "the database is locked or overloaded; try again shortly; nothing was stored"),
    "trace_backlog": (503, "too many traces are waiting to be stored; try again shortly; nothing was run"),
    # -- us
    "internal_error": (500, "an unexpected server error (the trace has the details)"),
}


def status_of(code: str) -> int:
    return CODES.get(code, (500, ""))[0]


class ApiError(Exception):
    """A failure with a stable public code; rendered by the app in the one shape."""

    def __init__(self, code: str, message: str, *, trace_id: str | None = None,
                 status: int | None = None):
        if code not in CODES:
            raise ValueError(f"unregistered error code {code!r}")
        super().__init__(message)
        self.code = code
        self.message = message
        self.trace_id = trace_id
        self.status = status or status_of(code)

    def body(self, trace_id: str | None = None) -> dict[str, Any]:
        return error_body(self.code, self.message, trace_id or self.trace_id)


def error_body(code: str, message: str, trace_id: str | None) -> dict[str, Any]:
    """The one error shape — every error leaving the server, JSON or SSE, is built here."""
    return {"error": {"code": code, "message": public_message(message), "trace_id": trace_id}}


def json_error(code: str, message: str, trace_id: str | None, *, status: int | None = None) -> Response:
    """The one error shape as a JSON response (the API's, and the key check's 401 before any route)."""
    body = json.dumps(error_body(code, message, trace_id), ensure_ascii=False, separators=(",", ":"), default=str)
    return Response(body.encode(), status_code=status or status_of(code), media_type="application/json")


def provider_error(code: str, message: str) -> tuple[str, str]:
    """A planner ProviderError code → the public code (identity for known ones)."""
    return ((code if code in CODES and code.startswith("provider_") else "provider_bad_response"),
            public_message(message))
