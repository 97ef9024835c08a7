"""A model provider's HTTP failures → ``ProviderError`` with a stable code (docs/providers.md,
"Failures"): the status, the error body's words (a 400 about tool calling, an unknown model, a
context overflow) and Retry-After decide it; 502/503 are marked transient (worth one retry)."""

from __future__ import annotations

import datetime as dt
import email.utils
import json
from typing import Any

import httpx

from .protocol import ProviderError

ENV_BASE_URL = "UMMAYA_LLM_BASE_URL"
ENV_API_KEY = "UMMAYA_LLM_API_KEY"
ENV_API_KEY_FALLBACK = "FRIENDLI_TOKEN"


def _retry_after(headers: httpx.Headers) -> float | None:
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.timezone.utc)
    return max(0.0, (when - dt.datetime.now(dt.timezone.utc)).total_seconds())


def _error_message(raw: bytes | dict[str, Any]) -> str:
    obj: Any = raw
    if isinstance(raw, (bytes, bytearray)):
        try:
            obj = json.loads(raw)
        except ValueError:
            return raw[:300].decode("utf-8", "replace").strip()
    if isinstance(obj, dict):
        err = obj.get("error")
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])[:500]
        if isinstance(err, str):
            return err[:500]
        for key in ("message", "detail"):
            if obj.get(key):
                return str(obj[key])[:500]
    return json.dumps(obj, ensure_ascii=False)[:300]


_MODEL_WORDS = ("model", "모델")
_NOT_FOUND_WORDS = ("does not exist", "not found", "unknown", "not supported", "unsupported",
                    "no such", "invalid model", "not available")
_TOOL_WORDS = ("tool", "function call", "function_call", "auto-tool-choice", "tool_choice")
_CONTEXT_WORDS = ("context length", "maximum context", "context window", "too many tokens",
                  "max_model_len")


def _classify(status: int, message: str, model: str, retry_after: float | None) -> ProviderError:
    low = message.lower()
    detail = f"HTTP {status}: {message}" if message else f"HTTP {status}"
    if status in (401, 403):
        return ProviderError(
            "provider_auth",
            f"the provider refused the API key ({detail}); check {ENV_API_KEY} "
            f"(or {ENV_API_KEY_FALLBACK})",
        )
    if status == 429:
        return ProviderError(
            "provider_rate_limited", f"rate limited ({detail})", retry_after=retry_after
        )
    if status in (408, 504):
        return ProviderError("provider_timeout", f"the provider timed out ({detail})")
    if status in (400, 404, 422):
        if any(w in low for w in _TOOL_WORDS):
            return ProviderError(
                "provider_capability", f"the endpoint cannot do tool calling ({detail})"
            )
        if any(w in low for w in _MODEL_WORDS) and any(w in low for w in _NOT_FOUND_WORDS):
            return ProviderError("provider_capability", f"model {model!r} is not served ({detail})")
        if any(w in low for w in _CONTEXT_WORDS):
            return ProviderError(
                "provider_capability", f"the request exceeds the model's context ({detail})"
            )
        if status == 404:
            return ProviderError(
                "provider_unavailable",
                f"no chat-completions endpoint there; check {ENV_BASE_URL} ({detail})",
            )
        return ProviderError(
            "provider_bad_response", f"the provider rejected the request ({detail})"
        )
    if status >= 500:
        return ProviderError(
            "provider_unavailable",
            f"the provider is unavailable ({detail})",
            retry_after=retry_after,
            # A gateway between us and the model (502/503) often recovers at once; a 500 is the
            # server refusing this very request (llama.cpp on null content) and would again.
            transient=status in (502, 503),
        )
    return ProviderError("provider_bad_response", f"unexpected reply ({detail})")


def _http_error(
    status: int, headers: httpx.Headers, raw: bytes, model: str, url: str
) -> ProviderError:
    return _classify(status, _error_message(raw), model, _retry_after(headers))


def _body_error(obj: dict[str, Any], model: str) -> ProviderError:
    """An error object inside a 200 reply or a stream chunk (vLLM sends these mid-stream)."""
    err = obj.get("error") if isinstance(obj.get("error"), dict) else obj
    code = err.get("code") if isinstance(err, dict) else None
    status = code if isinstance(code, int) and 400 <= code <= 599 else 0
    msg = _error_message(obj)
    if status:
        return _classify(status, msg, model, None)
    return ProviderError("provider_bad_response", f"the provider sent an error: {msg}")
