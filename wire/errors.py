"""Error classes the engine reports and the exception that carries them inside the engine.

Three classes reach the turn (they double as stop reasons): ``adapter_error`` (the adapter or the
upstream answered something we cannot use — retrying will not help), ``credential_missing`` (no key,
or the upstream refused the key) and ``channel_unavailable`` (the upstream is down, slow or over
quota — worth retrying, and reported only after the bounded retries ran out).

Stable engine codes (upstream codes such as ``"30"`` or ``"E0001"`` are passed through as is):
PARSE (a body that is not the envelope's), RECORD_PATH (records announced but not where the adapter
reads them), SCHEMA, TRANSFORM, HOST_GUARD, TIMEOUT (the call's one deadline passed), CONNECT, HTTP_<status>, CREDENTIAL_MISSING,
INVALID_ARGUMENTS, NO_FIXTURE, UNKNOWN_ADAPTER, TOKEN, LOOKUP, RESOLVER, POSTPROCESS, NO_BASE_URL,
INTERNAL (an engine bug, reported instead of crashing the turn).
"""

from __future__ import annotations

ADAPTER_ERROR = "adapter_error"
CREDENTIAL_MISSING = "credential_missing"
CHANNEL_UNAVAILABLE = "channel_unavailable"
ERROR_CLASSES = (ADAPTER_ERROR, CREDENTIAL_MISSING, CHANNEL_UNAVAILABLE)


class UpstreamError(Exception):
    """A classified failure. ``retryable`` marks the transient ones (the only ones retried)."""

    def __init__(self, error_class: str, code: str, message: str, *, retryable: bool = False):
        assert error_class in ERROR_CLASSES, error_class
        # The message travels to the citizen, the API response and the trace. It is often built
        # from an exception's text or an upstream's words, which can quote the request URL (with
        # its key) or the citizen's data: both are removed here, once, for every error.
        message = public_message(message)
        super().__init__(f"{error_class} [{code}]: {message}")
        self.error_class = error_class
        self.code = code
        self.message = message
        self.retryable = retryable


def public_message(message: str) -> str:
    """What of a message may leave the process: no credential (by name or by the environment's
    literal values), no URL user information, no personal data. Every engine error passes it, and
    so does every error the API and the MCP server report (runtime/serve/api_errors.py)."""
    from .credentials import strip_credentials
    from .redact import redact

    return redact(strip_credentials(message or ""))


def parse_error(message: str) -> UpstreamError:
    return UpstreamError(ADAPTER_ERROR, "PARSE", message)
