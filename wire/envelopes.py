"""Read an upstream answer: HTTP status + body bytes → records, or a classified ``UpstreamError``.

The body format is decided by content, not content-type: data.go.kr's gateway answers errors as
``<OpenAPI_ServiceResponse>`` XML even when JSON was asked for, and some upstreams label JSON as
``text/html``. Order of checks:

1. a gateway error envelope anywhere (any status) → its ``returnReasonCode`` and message classified;
2. HTTP ≥ 300 → Kakao-style ``{errorType, message}`` code if the body has one, class by status
   (5xx/429 channel_unavailable and retried; 401/403 credential_missing; other adapter_error;
   redirects are never followed — a redirect could leave the declared host);
3. an HTML page, malformed/truncated XML or JSON, hostile XML → adapter_error PARSE (a plain-text
   body whose words a taxonomy rule knows, e.g. a bare key error, gets that rule's class);
4. the *shape* of the body (``SHAPES``): the envelope kind's own shape first, then the data.go.kr
   standard forms every kind must also read — ``<response><header>…<body>`` (XML or JSON), top-level
   ``header``/``body``, flat ``resultCode`` — since services whose usual reply is flat or wrapped
   differently still send key errors and zero results that way. No shape with a result code where
   the kind needs one → PARSE; a Kakao answer without ``documents``/``meta`` → PARSE;
5. the result code and message through the taxonomy (``taxonomy.classify``).

Records (``records_of``) are read at the adapter's record path translated into the detected shape,
tolerating the variants one shape shows (``items.item`` list / single object / ``items`` as a plain
list / empty ``<items/>``). A reply that announces records (total > 0, page in range) but has none
there is adapter_error ``RECORD_PATH`` — never "no data": an ER finder must not tell a citizen there
is no ER nearby because the body moved.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from ummaya.model.manifest import Envelope

from .errors import ADAPTER_ERROR, CHANNEL_UNAVAILABLE, CREDENTIAL_MISSING, UpstreamError, parse_error
from .taxonomy import STANDARD, classify, classify_text
from .transforms import coerce, get_path, records_at
from .xmltree import xml_to_dict


@dataclass(frozen=True)
class Shape:
    """Where one body form keeps its result code, message, total, paging and records."""

    name: str
    code: str | None
    message: str | None
    total: str | None
    root: str  # records and paging live under it ("" = top level)
    extras: str  # the object whose keys become extra output fields (page info, meta)
    page_no: str | None = None
    page_size: str | None = None
    # How many of ``total`` the service will actually show (Kakao ``meta.pageable_count``, "total_count
    # 중 노출 가능 문서 수"): a total of matches none of which may be shown is not "records announced
    # but absent".
    shown: str | None = None


def _std(name: str, head: str, root: str) -> Shape:
    pre = f"{root}." if root else ""
    return Shape(
        name,
        f"{head}resultCode",
        f"{head}resultMsg",
        f"{pre}totalCount",
        root,
        root,
        f"{pre}pageNo",
        f"{pre}numOfRows",
    )


# The data.go.kr family: every envelope kind also reads these (the standard form first).
STANDARD_SHAPE = _std("standard", "response.header.", "response.body")
HEADER_BODY_SHAPE = _std("header_body", "header.", "body")
FLAT_SHAPE = _std("flat", "", "")
FAMILY = (STANDARD_SHAPE, HEADER_BODY_SHAPE, FLAT_SHAPE)


@dataclass(frozen=True)
class KindDefaults:
    shape: Shape
    record_path: str | None
    success: tuple[str, ...] = ()
    credential: tuple[str, ...] = ()
    transient: tuple[str, ...] = ()
    no_data: tuple[str, ...] = ()
    quota: tuple[str, ...] = ()


_DATA_GO_KR_OK = ("00", "0", "INFO-000")

KINDS: dict[str, KindDefaults] = {
    "data_go_kr": KindDefaults(STANDARD_SHAPE, "response.body.items.item", _DATA_GO_KR_OK),
    "flat_result": KindDefaults(FLAT_SHAPE, "items.item", _DATA_GO_KR_OK),
    "header_body": KindDefaults(HEADER_BODY_SHAPE, "body.items", _DATA_GO_KR_OK),
    "juso": KindDefaults(
        Shape(
            "juso",
            "results.common.errorCode",
            "results.common.errorMessage",
            "results.common.totalCount",
            "results",
            "results.common",
            "results.common.currentPage",
            "results.common.countPerPage",
        ),
        "results.juso",
        ("0",),
        credential=("E0001",),
        transient=("-999",),
    ),
    "kakao": KindDefaults(
        Shape("kakao", None, None, "meta.total_count", "", "meta", shown="meta.pageable_count"),
        "documents",
    ),
    "sgis": KindDefaults(
        Shape("sgis", "errCd", "errMsg", None, "", ""), "result", ("0",), credential=("-401",)
    ),
    "wanted_list": KindDefaults(
        Shape(
            "wanted_list",
            "wantedList.resultCode",
            "wantedList.resultMessage",
            "wantedList.totalCount",
            "wantedList",
            "wantedList",
            "wantedList.pageNo",
            "wantedList.numOfRows",
        ),
        "wantedList.servList",
        ("0", "00"),
    ),
    # odcloud (api.odcloud.kr, also behind the NTS and 정부24 benefit APIs): no result code on
    # success; ``matchCount`` is the filtered total (``totalCount`` ignores cond[...] filters);
    # errors are {"code": -4, "msg": "등록되지 않은 인증키 입니다."}, usually with HTTP 401.
    "odcloud": KindDefaults(
        Shape("odcloud", "code", "msg", "matchCount", "", "", "page", "perPage"),
        "data",
        credential=("-3", "-4", "-401"),
        transient=("-1", "-5"),
        quota=("-10",),
    ),
    # head/row (NEIS, legacy MOIS 1741000 sets, Seoul 열린데이터, REB R-ONE): the body is read in a
    # normal form (``normal_head_row``): {service, head: {code, message, total, …}, row: [...]}.
    "head_row": KindDefaults(
        Shape("head_row", "head.code", "head.message", "head.total", "", "head"),
        "row",
        ("INFO-000", "INFO-0"),
        no_data=("INFO-200", "INFO-3"),
    ),
    "json": KindDefaults(Shape("json", None, None, None, "", ""), ""),
}


_HEAD_ROW_CODE = ("CODE", "resultCode")
_HEAD_ROW_MESSAGE = ("MESSAGE", "resultMsg")
_HEAD_ROW_TOTAL = ("list_total_count", "totalCount")


def _result_block(head: dict[str, Any], result: Any) -> None:
    if isinstance(result, dict):
        head["code"] = next((result[k] for k in _HEAD_ROW_CODE if k in result), None)
        head["message"] = next((result[k] for k in _HEAD_ROW_MESSAGE if k in result), None)


def normal_head_row(doc: Any) -> Any:
    """The head/row body in one form, whatever the service calls itself and however it orders
    its head: ``{"mealServiceDietInfo": [{"head": [{"list_total_count": 3}, {"RESULT": {"CODE":
    "INFO-000", …}}]}, {"row": [...]}]}`` (NEIS; MOIS spells it ``totalCount`` and
    ``resultCode``/``resultMsg``), XML's ``<svc><head>…</head><row/>…</svc>``, and the error form,
    a top-level ``RESULT`` alone → ``{"service", "head": {"code", "message", "total", …}, "row"}``.
    Anything else is returned as it is (the shape check then says what it is not)."""
    if not isinstance(doc, dict):
        return doc
    if isinstance(doc.get("RESULT"), dict) and not any(isinstance(v, (list, dict)) and k != "RESULT" for k, v in doc.items()):
        head: dict[str, Any] = {}
        _result_block(head, doc["RESULT"])
        return {"service": None, "head": head, "row": []}
    for name, value in doc.items():
        parts = value if isinstance(value, list) else [value] if isinstance(value, dict) else []
        if not any(isinstance(p, dict) and "head" in p for p in parts):
            continue
        head = {}
        rows: Any = []
        for part in parts:
            if not isinstance(part, dict):
                continue
            heads = part.get("head")
            for h in heads if isinstance(heads, list) else [heads] if isinstance(heads, dict) else []:
                if not isinstance(h, dict):
                    continue
                for k, v in h.items():
                    if k == "RESULT":
                        _result_block(head, v)
                    else:
                        head[k] = v
            if "row" in part:
                rows = part["row"]
        head["total"] = next((head[k] for k in _HEAD_ROW_TOTAL if k in head), None)
        return {"service": name, "head": head, "row": rows}
    return doc


@dataclass
class Parsed:
    status: str  # ok | no_data
    document: Any
    code: str | None = None
    message: str | None = None
    extras: dict[str, Any] = field(default_factory=dict)
    shape: Shape = FLAT_SHAPE
    primary: Shape = FLAT_SHAPE
    total: int | None = None


def _code_str(v: Any) -> str | None:
    if v is None or isinstance(v, (dict, list)):
        return None
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    # A BOM or zero-width space glued to a code is no part of it.
    return str(v).strip().strip("\ufeff\u200b").strip()


_CHARSET = re.compile(r"charset\s*=\s*\"?([A-Za-z0-9._-]+)", re.I)
_KOREAN_LEGACY = ("euc-kr", "euckr", "ks_c_5601-1987", "cp949", "x-windows-949", "ms949")


def _legacy_korean(content_type: str) -> bool:
    m = _CHARSET.search(content_type or "")
    return bool(m and m.group(1).lower() in _KOREAN_LEGACY)


def _json_document(text: str) -> Any:
    """The JSON document at the start of ``text``. Some gateways append a newline-separated
    trailer (an HTML comment, a stray ``%``) after a complete object; the object is still the
    answer, so a *complete* leading object or array is read and the trailer dropped. A bare
    scalar followed by junk is not an answer."""
    stripped = text.lstrip()
    try:
        return json.loads(stripped)
    except json.JSONDecodeError as exc:
        if exc.msg != "Extra data" or not stripped.startswith(("{", "[")):
            raise
        doc, _end = json.JSONDecoder().raw_decode(stripped)
        return doc


def decode_body(body: bytes, content_type: str = "") -> tuple[str, Any]:
    """("xml" | "json", document). Raises PARSE for HTML pages and anything unreadable.

    Korean bodies come in UTF-8 (with or without a BOM) or, from legacy servers, in EUC-KR/CP949 —
    declared in the XML prolog, in the Content-Type charset, or not at all. Undeclared bytes that
    are not UTF-8 are read as CP949 (EUC-KR's superset), the only other encoding these services use.
    """
    text_head = body[:512].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    if not text_head:
        raise parse_error("empty body")
    if text_head.startswith((b"<!doctype html", b"<html")) or b"<html" in text_head[:200]:
        raise parse_error("an HTML page instead of data (upstream error or maintenance page)")
    if text_head.startswith(b"<"):
        # expat refuses anything (even a newline) before the XML declaration; a BOM is fine.
        start = body.find(b"<")
        xml = body[start:] if body[:start].strip(b" \t\r\n") == b"" else body
        return "xml", xml_to_dict(xml, legacy_korean=_legacy_korean(content_type))
    try:
        if _legacy_korean(content_type):
            raise UnicodeDecodeError("utf-8", body, 0, 0, "declared EUC-KR")
        text = body.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        try:  # a few Korean legacy servers still answer in CP949 (EUC-KR)
            text = body.decode("cp949")
        except UnicodeDecodeError:
            try:  # a charset header that lies: the bytes are UTF-8 after all
                text = body.decode("utf-8-sig")
            except UnicodeDecodeError:
                raise parse_error(
                    f"body is neither UTF-8 nor EUC-KR: {exc.reason} at byte {exc.start}"
                ) from exc
    try:
        return "json", _json_document(text)
    except json.JSONDecodeError as exc:
        raise parse_error(
            f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from exc
    except RecursionError as exc:
        raise parse_error("JSON nested too deeply") from exc


def _kind(env: Envelope | None) -> KindDefaults:
    return KINDS[env.kind if env else "json"]


def _primary(env: Envelope | None) -> Shape:
    """The kind's shape with the envelope's own path overrides applied."""
    base = _kind(env).shape
    if env is None:
        return base
    return Shape(
        base.name,
        env.code_path or base.code,
        env.message_path or base.message,
        env.total_path or base.total,
        base.root,
        base.extras,
        base.page_no,
        base.page_size,
        base.shown,
    )


def _envelopes(env: Envelope | None, shape: Shape, primary: Shape) -> list[Envelope]:
    own = env or Envelope(kind="json")
    kind = KINDS[own.kind]
    # The kind's built-in codes, for envelopes that list none of their own.
    builtin = Envelope(
        kind=own.kind,
        success_codes=list(kind.success),
        credential_codes=list(kind.credential),
        transient_codes=[c for c in kind.transient if c not in own.credential_codes],
        no_data_codes=list(kind.no_data),
        quota_codes=list(kind.quota),
    )
    envs = [own, builtin]
    if shape in FAMILY or primary in FAMILY:
        envs.append(STANDARD)
    return envs


def _detect(doc: Any, primary: Shape) -> tuple[Shape, str | None]:
    for shape in (primary, *FAMILY):
        if shape.code is None:
            continue
        code = _code_str(get_path(doc, shape.code))
        if code is not None:
            return shape, code
    return primary, None


def _gateway_error(doc: Any, env: Envelope | None, primary: Shape) -> None:
    header = get_path(doc, "OpenAPI_ServiceResponse.cmmMsgHeader")
    if not isinstance(header, dict):
        return
    code = _code_str(header.get("returnReasonCode")) or "99"
    msg = (
        " / ".join(str(header[k]) for k in ("errMsg", "returnAuthMsg") if header.get(k))
        or "gateway error"
    )
    status = classify(code, msg, _envelopes(env, STANDARD_SHAPE, primary), success=())
    # A gateway envelope is an error even if a profile listed its code as success/no-data.
    raise UpstreamError(ADAPTER_ERROR, code, f"gateway answered {status} code {code}: {msg}")


def _http_error(
    status: int, doc: Any, reason: str, env: Envelope | None = None, primary: Shape | None = None
) -> UpstreamError:
    code = f"HTTP_{status}"
    message = f"HTTP {status} {reason}".strip()
    if isinstance(doc, dict):
        if doc.get("errorType"):  # Kakao
            code = str(doc["errorType"])
            message = f"HTTP {status}: {doc.get('message') or doc['errorType']}"
        elif doc.get("message") or doc.get("msg"):
            message = f"HTTP {status}: {doc.get('message') or doc.get('msg')}"
        if env is not None and env.kind == "odcloud" and _code_str(doc.get("code")) is not None:
            # {"code": -4, "msg": …} with HTTP 401/500: the body's own code says which class.
            upstream_code = _code_str(doc.get("code")) or code
            try:
                classify(upstream_code, message, _envelopes(env, primary or _primary(env), primary or _primary(env)), success=())
            except UpstreamError as exc:
                return exc
            return UpstreamError(ADAPTER_ERROR, upstream_code, message)
    if status >= 500 or status == 429:
        return UpstreamError(CHANNEL_UNAVAILABLE, code, message, retryable=True)
    if status in (401, 403):
        return UpstreamError(CREDENTIAL_MISSING, code, message)
    if 300 <= status < 400:
        return UpstreamError(ADAPTER_ERROR, code, f"{message} (redirects are not followed)")
    return UpstreamError(ADAPTER_ERROR, code, message)


def _int(v: Any) -> int | None:
    out = coerce(v, {"type": ["integer", "null"]})
    return out if isinstance(out, int) and not isinstance(out, bool) else None


def _check_kind_signature(kind_name: str, doc: Any) -> None:
    """Kinds without a result code still have a fixed body; anything else is not their answer."""
    if kind_name == "odcloud":
        if not isinstance(doc, dict) or not isinstance(doc.get("data"), list):
            raise parse_error("not an odcloud answer: no 'data' list")
    if kind_name == "kakao":
        if not isinstance(doc, dict) or not isinstance(doc.get("documents"), list):
            raise parse_error("not a Kakao Local answer: no 'documents' list")
        if not isinstance(doc.get("meta"), dict):
            raise parse_error("not a Kakao Local answer: no 'meta' object")


def read_response(
    env: Envelope | None, http_status: int, body: bytes, reason: str = "", content_type: str = ""
) -> Parsed:
    kind = _kind(env)
    primary = _primary(env)
    try:
        _, doc = decode_body(body, content_type)
    except UpstreamError:
        if http_status >= 300:
            raise _http_error(http_status, None, reason) from None
        if len(body) <= 4096:
            classify_text(
                body.decode("utf-8", "replace"), _envelopes(env, STANDARD_SHAPE, primary)
            )
        raise
    _gateway_error(doc, env, primary)
    if http_status >= 300:
        raise _http_error(http_status, doc, reason, env, primary)
    if env is not None and env.kind == "head_row":
        doc = normal_head_row(doc)

    shape, code = _detect(doc, primary)
    if primary.name == "odcloud" and shape is primary and code is None:
        shape = primary  # odcloud's success carries no code: its 'data' list is the answer
    elif shape.code is not None and code is None:
        # Not the envelope, but it may still say what went wrong in words a rule knows (a gateway's
        # {"message": "SERVICE KEY IS NOT REGISTERED ERROR."}): that class, else PARSE.
        if len(body) <= 4096:
            classify_text(
                json.dumps(doc, ensure_ascii=False), _envelopes(env, STANDARD_SHAPE, primary)
            )
        raise parse_error(
            f"no result code at '{primary.code}' (not a {env.kind if env else 'json'} envelope)"
        )
    if shape is primary and not (primary.name == "odcloud" and code is not None):
        # (an odcloud body with a code is an error answer: its code is classified below)
        _check_kind_signature(env.kind if env else "json", doc)
    message = get_path(doc, shape.message) if shape.message else None
    message = None if message is None or isinstance(message, (dict, list)) else str(message)
    if code is not None or message:
        status = classify(
            code, message, _envelopes(env, shape, primary), success=kind.success
        )
    else:
        status = "ok"
    extras = get_path(doc, shape.extras)
    total = _int(get_path(doc, shape.total)) if shape.total else None
    return Parsed(
        status,
        doc,
        code,
        message,
        extras if isinstance(extras, dict) else {},
        shape,
        primary,
        total,
    )


def _translate(path: str, parsed: Parsed) -> str:
    """The adapter's record path (written for its own shape) in the shape the body came in."""
    if parsed.shape is parsed.primary or parsed.shape.name == parsed.primary.name:
        return path
    root = parsed.primary.root
    rel = "items.item"
    if parsed.primary in FAMILY or parsed.primary.name in {s.name for s in FAMILY}:
        if not root:
            rel = path or rel
        elif path.startswith(root + "."):
            rel = path[len(root) + 1 :]
    return f"{parsed.shape.root}.{rel}" if parsed.shape.root else rel


def _find(doc: Any, path: str) -> Any:
    """Records at ``path``, tolerating the variants of the data.go.kr item list."""
    found = get_path(doc, path)
    if found is None and path.endswith(".item"):
        parent = get_path(doc, path[: -len(".item")])
        if isinstance(parent, list):  # JSON with items as a plain list (AirKorea, MFDS)
            found = parent
    if isinstance(found, dict) and path.rsplit(".", 1)[-1] == "items" and set(found) == {"item"}:
        found = found["item"]  # items.item where the adapter reads items
    return found


def records_of(parsed: Parsed, path: str | None) -> list[Any]:
    """The records of a successful answer, or adapter_error RECORD_PATH when the answer announced
    records (or claims success in a form whose records live elsewhere) and has none there."""
    if parsed.status == "no_data":
        return []
    where = _translate(path or "", parsed)
    found = _find(parsed.document, where) if where else parsed.document
    if found is not None and not isinstance(found, (list, dict, str)):
        raise parse_error(f"expected records at '{where}', found {type(found).__name__}")
    records = records_at(found, "")
    if records:
        return records
    total = parsed.total
    if total is not None and total > 0 and not _past_last_page(parsed, total):
        raise UpstreamError(
            ADAPTER_ERROR,
            "RECORD_PATH",
            f"the answer announces {total} record(s) but has none at '{where}'",
        )
    shape = parsed.shape
    if shape.root and shape.name in ("standard", "header_body") and get_path(
        parsed.document, shape.root
    ) in (None, ""):
        # A success code with no body at all: a zero result still sends <body><items/>…
        if parsed.code is not None and total is None:
            raise UpstreamError(
                ADAPTER_ERROR,
                "RECORD_PATH",
                f"result code {parsed.code} but no '{shape.root}' where the records would be",
            )
    return records


def _past_last_page(parsed: Parsed, total: int) -> bool:
    """Page N of a shorter list is legitimately empty, and so is a list none of which is shown."""
    shape = parsed.shape
    if shape.shown and _int(get_path(parsed.document, shape.shown)) == 0:
        return True
    page = _int(get_path(parsed.document, shape.page_no)) if shape.page_no else None
    size = _int(get_path(parsed.document, shape.page_size)) if shape.page_size else None
    return bool(page and size and page > 1 and (page - 1) * size >= total)


def total_of(env: Envelope | None, doc: Any) -> Any:
    path = _primary(env).total
    return get_path(doc, path) if path else None


def default_record_path(env: Envelope | None) -> str | None:
    return _kind(env).record_path
