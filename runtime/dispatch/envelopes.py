"""Read an upstream answer: HTTP status + body bytes → records, or a classified ``UpstreamError``.

The body format is decided by content, not content-type: data.go.kr's gateway answers errors as
``<OpenAPI_ServiceResponse>`` XML even when JSON was asked for, and some upstreams label JSON as
``text/html``. Order of checks:

1. a gateway error envelope anywhere (any status) → its ``returnReasonCode`` classified;
2. HTTP ≥ 300 → Kakao-style ``{errorType, message}`` code if the body has one, class by status
   (5xx/429 channel_unavailable and retried; 401/403 credential_missing; other adapter_error;
   redirects are never followed — a redirect could leave the declared host);
3. an HTML page, malformed/truncated XML or JSON, hostile XML → adapter_error PARSE;
4. the envelope kind's result code (defaults per kind below, overridable in ``Envelope``) and the
   profile's code lists: success → ok, no-data codes → no_data, credential/transient/quota codes →
   their classes, anything else → adapter_error with the upstream code.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ummaya.codegen.manifest import Envelope

from .errors import (
    ADAPTER_ERROR,
    CHANNEL_UNAVAILABLE,
    CREDENTIAL_MISSING,
    UpstreamError,
    parse_error,
)
from .transforms import get_path
from .xmltree import xml_to_dict


@dataclass(frozen=True)
class KindDefaults:
    code_path: str | None
    message_path: str | None
    total_path: str | None
    record_path: str | None
    extras_path: str | None  # where extra top-level output fields (page info, meta) are read
    success: tuple[str, ...] = ()
    credential: tuple[str, ...] = ()
    transient: tuple[str, ...] = ()


_DATA_GO_KR_OK = ("00", "0", "INFO-000")

KINDS: dict[str, KindDefaults] = {
    "data_go_kr": KindDefaults(
        "response.header.resultCode",
        "response.header.resultMsg",
        "response.body.totalCount",
        "response.body.items.item",
        "response.body",
        _DATA_GO_KR_OK,
    ),
    "flat_result": KindDefaults(
        "resultCode", "resultMsg", "totalCount", "items.item", "", _DATA_GO_KR_OK
    ),
    "header_body": KindDefaults(
        "header.resultCode",
        "header.resultMsg",
        "body.totalCount",
        "body.items",
        "body",
        _DATA_GO_KR_OK,
    ),
    "juso": KindDefaults(
        "results.common.errorCode",
        "results.common.errorMessage",
        "results.common.totalCount",
        "results.juso",
        "results.common",
        ("0",),
        credential=("E0001",),
        transient=("-999",),
    ),
    "kakao": KindDefaults(None, None, "meta.total_count", "documents", "meta"),
    "sgis": KindDefaults("errCd", "errMsg", None, "result", "", ("0",), credential=("-401",)),
    "wanted_list": KindDefaults(
        "wantedList.resultCode",
        "wantedList.resultMessage",
        "wantedList.totalCount",
        "wantedList.servList",
        "wantedList",
        ("0", "00"),
    ),
    "json": KindDefaults(None, None, None, "", ""),
}


@dataclass
class Parsed:
    status: str  # ok | no_data
    document: Any
    code: str | None = None
    message: str | None = None
    extras: dict[str, Any] = field(default_factory=dict)


def _code_str(v: Any) -> str | None:
    if v is None or isinstance(v, (dict, list)):
        return None
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    return str(v).strip()


def decode_body(body: bytes) -> tuple[str, Any]:
    """("xml" | "json", document). Raises PARSE for HTML pages and anything unreadable."""
    text_head = body[:512].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    if not text_head:
        raise parse_error("empty body")
    if text_head.startswith((b"<!doctype html", b"<html")) or b"<html" in text_head[:200]:
        raise parse_error("an HTML page instead of data (upstream error or maintenance page)")
    if text_head.startswith(b"<"):
        # expat refuses anything (even a newline) before the XML declaration; a BOM is fine.
        start = body.find(b"<")
        return "xml", xml_to_dict(body[start:] if body[:start].strip(b" \t\r\n") == b"" else body)
    try:
        text = body.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        try:  # a few Korean legacy servers still answer in CP949 (EUC-KR)
            text = body.decode("cp949")
        except UnicodeDecodeError:
            raise parse_error(f"body is not UTF-8: {exc.reason} at byte {exc.start}") from exc
    try:
        return "json", json.loads(text)
    except json.JSONDecodeError as exc:
        raise parse_error(
            f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from exc
    except RecursionError as exc:
        raise parse_error("JSON nested too deeply") from exc


def _classify_code(code: str, message: str | None, env: Envelope | None, kind: KindDefaults) -> str:
    """ok | no_data, or raise the classified error."""
    e = env or Envelope(kind="json")
    success = set(e.success_codes) or set(kind.success)
    if code in success:
        return "ok"
    if code in e.no_data_codes:
        return "no_data"
    text = f"upstream result code {code}" + (f": {message}" if message else "")
    if code in e.credential_codes or (code in kind.credential and code not in e.transient_codes):
        raise UpstreamError(CREDENTIAL_MISSING, code, text)
    if code in e.transient_codes or code in e.quota_codes or code in kind.transient:
        raise UpstreamError(CHANNEL_UNAVAILABLE, code, text, retryable=True)
    raise UpstreamError(ADAPTER_ERROR, code, text)


def _gateway_error(doc: Any, env: Envelope | None, kind: KindDefaults) -> None:
    header = get_path(doc, "OpenAPI_ServiceResponse.cmmMsgHeader")
    if not isinstance(header, dict):
        return
    code = _code_str(header.get("returnReasonCode")) or "99"
    msg = (
        " / ".join(str(header[k]) for k in ("errMsg", "returnAuthMsg") if header.get(k))
        or "gateway error"
    )
    status = _classify_code(code, msg, env, kind)
    # A gateway envelope is an error even if a profile listed its code as success/no-data.
    raise UpstreamError(ADAPTER_ERROR, code, f"gateway answered {status} code {code}: {msg}")


def _http_error(status: int, doc: Any, reason: str) -> UpstreamError:
    code = f"HTTP_{status}"
    message = f"HTTP {status} {reason}".strip()
    if isinstance(doc, dict):
        if doc.get("errorType"):  # Kakao
            code = str(doc["errorType"])
            message = f"HTTP {status}: {doc.get('message') or doc['errorType']}"
        elif doc.get("message") or doc.get("msg"):
            message = f"HTTP {status}: {doc.get('message') or doc.get('msg')}"
    if status >= 500 or status == 429:
        return UpstreamError(CHANNEL_UNAVAILABLE, code, message, retryable=True)
    if status in (401, 403):
        return UpstreamError(CREDENTIAL_MISSING, code, message)
    if 300 <= status < 400:
        return UpstreamError(ADAPTER_ERROR, code, f"{message} (redirects are not followed)")
    return UpstreamError(ADAPTER_ERROR, code, message)


def read_response(env: Envelope | None, http_status: int, body: bytes, reason: str = "") -> Parsed:
    kind = KINDS[env.kind if env else "json"]
    try:
        _, doc = decode_body(body)
    except UpstreamError:
        if http_status >= 300:
            raise _http_error(http_status, None, reason) from None
        raise
    _gateway_error(doc, env, kind)
    if http_status >= 300:
        raise _http_error(http_status, doc, reason)

    code_path = (env.code_path if env else None) or kind.code_path
    message_path = (env.message_path if env else None) or kind.message_path
    code = _code_str(get_path(doc, code_path)) if code_path else None
    message = get_path(doc, message_path) if message_path else None
    message = None if message is None else str(message)
    if code_path and code is None:
        raise parse_error(
            f"no result code at '{code_path}' (not a {env.kind if env else 'json'} envelope)"
        )
    status = _classify_code(code, message, env, kind) if code is not None else "ok"

    extras_path = kind.extras_path
    extras = get_path(doc, extras_path) if extras_path is not None else None
    return Parsed(status, doc, code, message, extras if isinstance(extras, dict) else {})


def total_of(env: Envelope | None, doc: Any) -> Any:
    kind = KINDS[env.kind if env else "json"]
    path = (env.total_path if env else None) or kind.total_path
    return get_path(doc, path) if path else None


def default_record_path(env: Envelope | None) -> str | None:
    return KINDS[env.kind if env else "json"].record_path
