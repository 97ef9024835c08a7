"""Local stand-ins for the real upstreams, speaking their wire formats on 127.0.0.1.

Nothing here reaches the internet: a threaded ``http.server`` on an ephemeral loopback port answers
with byte-faithful bodies — the data.go.kr envelope in XML and JSON (list, single object, empty,
no-data 03), the gateway's ``<OpenAPI_ServiceResponse>`` error XML (sent even when JSON was asked
for), KOROAD's flat JSON, MFDS e약은요's header/body JSON, juso, Kakao (errors as HTTP 4xx JSON),
SGIS (token exchange, ``errCd -401`` on an expired token) and MOHW's ``wantedList`` XML — plus the
failure shapes real services produce: HTML error pages, truncated XML, entity-expansion bombs,
5xx and slow answers.

Usage::

    with UpstreamServer() as srv:
        srv.route("/B552657/.../getEgytLcinfoInqire", Reply(body=data_go_kr_xml([{...}])))
        srv.route("/slow", Reply(body=b"{}", hold=True))               # answers only once released
        srv.route("/drip", Reply(body=b"{...}", drip_s=1.0))          # one byte a second
        srv.route("/flaky", [Reply(status=503), Reply(body=...)])   # a sequence; the last repeats
        srv.route("/echo", lambda seen: Reply(body=...))            # a function of the request
        ... Dispatcher(catalog, base_url_overrides={"my_adapter": srv.url}) ...
        assert srv.seen("/flaky")[0].query["serviceKey"] == ["..."]

Every request is recorded as ``Seen`` (path, decoded query, raw query string, headers) so tests
assert what was actually sent: camelCase names, a key encoded exactly once, derived grid cells.

A slow upstream is an event, not a guess at a duration: ``hold=True`` answers only after
``srv.release()`` (or never, until the server stops — a client's deadline must end the call), a
handler may block on the test's own barrier, and ``srv.wait_seen(path, n)`` blocks until ``n``
requests reached ``path``. Only ``drip_s`` paces on the clock: a trickle of bytes each within a
read timeout is the input under test there (the total deadline), and has no event to stand for.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit
from xml.sax.saxutils import escape

XML = "text/xml;charset=UTF-8"
JSON = "application/json;charset=UTF-8"
HTML = "text/html;charset=UTF-8"


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    content_type: str = JSON
    # Answer only once the server is released (``release()``) or stopped: an upstream that is
    # slower than any deadline, for as long as the test needs, without a guessed duration.
    hold: bool = False
    headers: dict[str, str] = field(default_factory=dict)
    # Write the body one byte every drip_s seconds (a slow-drip upstream); bounded by the body.
    drip_s: float = 0.0


@dataclass
class Seen:
    method: str
    path: str
    raw_query: str
    query: dict[str, list[str]]
    headers: dict[str, str]  # lower-cased names
    body: bytes = b""  # a POST's body as received

    def param(self, name: str) -> str | None:
        values = self.query.get(name)
        return values[0] if values else None


Handler = Reply | list[Reply] | Callable[[Seen], Reply]


class UpstreamServer:
    """A loopback HTTP server with per-path canned or computed replies. Thread-safe recording."""

    def __init__(self, routes: Mapping[str, Handler] | None = None):
        self._routes: dict[str, Handler] = dict(routes or {})
        self._counters: dict[str, int] = {}
        self._lock = threading.Lock()
        self._arrived = threading.Condition(self._lock)  # notified as each request is recorded
        self._released = threading.Event()  # held replies go out once set (release, stop)
        self.requests: list[Seen] = []
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- configuration ------------------------------------------------------------------

    def route(self, path: str, handler: Handler) -> UpstreamServer:
        with self._lock:
            self._routes[path] = handler
            self._counters[path] = 0
        return self

    def seen(self, path: str | None = None) -> list[Seen]:
        with self._lock:
            return [s for s in self.requests if path is None or s.path == path]

    def wait_seen(self, path: str, n: int, timeout: float = 30.0) -> bool:
        """Block until ``n`` requests reached ``path`` (a handler's way to wait for the others);
        ``timeout`` only bounds a test that is already failing."""
        with self._arrived:
            return self._arrived.wait_for(lambda: sum(s.path == path for s in self.requests) >= n, timeout)

    def release(self) -> None:
        """Let every held reply (``Reply(hold=True)``) go out, now and from now on."""
        self._released.set()

    @property
    def url(self) -> str:
        assert self._server is not None, "server not started"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    # -- lifecycle ----------------------------------------------------------------------

    def start(self) -> UpstreamServer:
        owner = self

        class _H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:  # noqa: N802 (http.server naming)
                owner._handle(self)

            do_POST = do_GET

            def log_message(self, *_: Any) -> None:  # keep test output clean
                return None

        server = ThreadingHTTPServer(("127.0.0.1", 0), _H)
        server.daemon_threads = True
        server.block_on_close = False  # a slow reply must not hold up shutdown
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="upstream-server",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._released.set()  # a held reply ends with the server, never outlives it
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> UpstreamServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # -- request handling ---------------------------------------------------------------

    def _next_reply(self, seen: Seen) -> Reply:
        with self._lock:
            self.requests.append(seen)
            self._arrived.notify_all()
            handler = self._routes.get(seen.path)
            n = self._counters.get(seen.path, 0)
            self._counters[seen.path] = n + 1
        if handler is None:
            return Reply(404, html_error_page(404, "Not Found"), HTML)
        if isinstance(handler, Reply):
            return handler
        if isinstance(handler, list):
            return handler[min(n, len(handler) - 1)]
        return handler(seen)

    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        parts = urlsplit(h.path)
        length = int(h.headers.get("content-length") or 0)
        raw = h.rfile.read(length) if length else b""
        seen = Seen(
            h.command,
            parts.path,
            parts.query,
            parse_qs(parts.query, keep_blank_values=True),
            {k.lower(): v for k, v in h.headers.items()},
            raw,
        )
        try:
            reply = self._next_reply(seen)
        except Exception as exc:  # a broken test handler shows up as a 500, not a hang
            reply = Reply(500, html_error_page(500, repr(exc)), HTML)
        if reply.hold:
            self._released.wait()
        try:
            h.send_response(reply.status)
            h.send_header("Content-Type", reply.content_type)
            h.send_header("Content-Length", str(len(reply.body)))
            for k, v in reply.headers.items():
                h.send_header(k, v)
            h.end_headers()
            if reply.drip_s:
                for i in range(len(reply.body)):
                    h.wfile.write(reply.body[i : i + 1])
                    h.wfile.flush()
                    # The one paced wait in the suite's fakes (module docstring; allow-listed in
                    # tests/ci/test_no_wall_clock_sleeps.py): the trickle is the input under test.
                    time.sleep(reply.drip_s)
            else:
                h.wfile.write(reply.body)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout tests)
            pass


# -- wire formats -------------------------------------------------------------------------------


def _xml_fields(record: Mapping[str, Any]) -> str:
    return "".join(f"<{k}>{escape(str(v))}</{k}>" for k, v in record.items() if v is not None)


def data_go_kr_xml(
    items: Iterable[Mapping[str, Any]],
    *,
    code: str = "00",
    msg: str = "NORMAL SERVICE.",
    total: int | None = None,
    page_no: int = 1,
    num_of_rows: int = 10,
    with_body: bool = True,
) -> bytes:
    """The data.go.kr XML envelope; no items → ``<items/>``; ``with_body=False`` is what NODATA
    (03) answers look like on several services."""
    items = list(items)
    head = (
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?><response><header>'
        f"<resultCode>{escape(code)}</resultCode><resultMsg>{escape(msg)}</resultMsg></header>"
    )
    if not with_body:
        return (head + "</response>").encode()
    inner = "".join(f"<item>{_xml_fields(it)}</item>" for it in items)
    items_xml = f"<items>{inner}</items>" if items else "<items/>"
    body = (
        f"<body>{items_xml}<numOfRows>{num_of_rows}</numOfRows><pageNo>{page_no}</pageNo>"
        f"<totalCount>{len(items) if total is None else total}</totalCount></body>"
    )
    return (head + body + "</response>").encode()


def data_go_kr_json(
    items: list[Mapping[str, Any]],
    *,
    code: str = "00",
    msg: str = "NORMAL_SERVICE",
    total: int | None = None,
    shape: str = "wrapped",
    page_no: int = 1,
    num_of_rows: int = 10,
) -> bytes:
    """data.go.kr JSON. ``shape``: ``wrapped`` (items.item list), ``single`` (items.item object —
    XML-to-JSON conversions do this for one record), ``empty`` (items is ""), ``plain`` (items is
    the list itself, as AirKorea sends it)."""
    if shape == "wrapped":
        items_v: Any = {"item": list(items)}
    elif shape == "single":
        assert len(items) == 1
        items_v = {"item": dict(items[0])}
    elif shape == "empty":
        items_v = ""
    elif shape == "plain":
        items_v = list(items)
    else:
        raise ValueError(shape)
    doc = {
        "response": {
            "header": {"resultCode": code, "resultMsg": msg},
            "body": {
                "dataType": "JSON",
                "items": items_v,
                "pageNo": page_no,
                "numOfRows": num_of_rows,
                "totalCount": len(items) if total is None else total,
            },
        }
    }
    return json.dumps(doc, ensure_ascii=False).encode()


def gateway_error_xml(
    code: str = "30", auth_msg: str = "SERVICE_KEY_IS_NOT_REGISTERED_ERROR"
) -> bytes:
    return (
        "<OpenAPI_ServiceResponse>\n\t<cmmMsgHeader>\n\t\t<errMsg>SERVICE ERROR</errMsg>\n"
        f"\t\t<returnAuthMsg>{auth_msg}</returnAuthMsg>\n"
        f"\t\t<returnReasonCode>{code}</returnReasonCode>\n\t</cmmMsgHeader>\n"
        "</OpenAPI_ServiceResponse>"
    ).encode()


def flat_result_json(
    items: list[Mapping[str, Any]],
    *,
    code: str = "00",
    msg: str = "NORMAL_CODE",
    total: int | None = None,
) -> bytes:
    """KOROAD: result code and items at the top level, no ``response`` wrapper."""
    doc = {
        "resultCode": code,
        "resultMsg": msg,
        "items": {"item": list(items)} if items else "",
        "totalCount": len(items) if total is None else total,
        "numOfRows": 10,
        "pageNo": 1,
    }
    return json.dumps(doc, ensure_ascii=False).encode()


def header_body_json(
    items: list[Mapping[str, Any]],
    *,
    code: str = "00",
    msg: str = "NORMAL SERVICE.",
    total: int | None = None,
) -> bytes:
    """MFDS e약은요: ``header`` and ``body`` at the top level, ``body.items`` a plain list."""
    doc = {
        "header": {"resultCode": code, "resultMsg": msg},
        "body": {
            "pageNo": 1,
            "totalCount": len(items) if total is None else total,
            "numOfRows": 10,
            "items": list(items),
        },
    }
    return json.dumps(doc, ensure_ascii=False).encode()


def juso_json(
    juso: list[Mapping[str, Any]],
    *,
    error_code: str = "0",
    error_message: str = "정상",
    total: int | None = None,
) -> bytes:
    doc = {
        "results": {
            "common": {
                "errorMessage": error_message,
                "countPerPage": "10",
                "totalCount": str(len(juso) if total is None else total),
                "errorCode": error_code,
                "currentPage": "1",
            },
            "juso": list(juso) if error_code == "0" else None,
        }
    }
    return json.dumps(doc, ensure_ascii=False).encode()


def kakao_json(
    documents: list[Mapping[str, Any]], *, total: int | None = None, is_end: bool = True
) -> bytes:
    n = len(documents) if total is None else total
    doc = {
        "documents": list(documents),
        "meta": {"is_end": is_end, "pageable_count": n, "total_count": n, "same_name": None},
    }
    return json.dumps(doc, ensure_ascii=False).encode()


def kakao_error(
    error_type: str = "AccessDeniedError", message: str = "cannot find appkey"
) -> bytes:
    return json.dumps({"errorType": error_type, "message": message}).encode()


def sgis_token_json(token: str, *, timeout_ms: int = 1_900_000_000_000) -> bytes:
    doc = {
        "id": "API_0101",
        "result": {"accessToken": token, "accessTimeout": str(timeout_ms)},
        "errMsg": "Success",
        "errCd": 0,
        "trId": "TR0001",
    }
    return json.dumps(doc).encode()


def sgis_json(result: Any, *, err_cd: int = 0, err_msg: str = "Success") -> bytes:
    doc = {"id": "API_0701", "result": result, "errMsg": err_msg, "errCd": err_cd, "trId": "TR0002"}
    return json.dumps(doc, ensure_ascii=False).encode()


def wanted_list_xml(
    servs: list[Mapping[str, Any]],
    *,
    code: str = "0",
    msg: str = "SUCCESS",
    total: int | None = None,
) -> bytes:
    """MOHW 중앙부처 복지서비스: ``servList`` repeats as siblings inside ``wantedList``."""
    inner = "".join(f"<servList>{_xml_fields(s)}</servList>" for s in servs)
    return (
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?><wantedList>'
        f"<totalCount>{len(servs) if total is None else total}</totalCount><pageNo>1</pageNo>"
        f"<numOfRows>10</numOfRows><resultCode>{code}</resultCode><resultMessage>{msg}</resultMessage>"
        f"{inner}</wantedList>"
    ).encode()


def odcloud_json(
    data: list[Mapping[str, Any]], *, page: int = 1, per_page: int = 10, total: int = 10000,
    match: int | None = None,
) -> bytes:
    """api.odcloud.kr: ``totalCount`` is the unfiltered total, ``matchCount`` what cond[...]
    matched, ``currentCount`` this page's records."""
    doc = {
        "currentCount": len(data),
        "data": list(data),
        "matchCount": len(data) if match is None else match,
        "page": page,
        "perPage": per_page,
        "totalCount": total,
    }
    return json.dumps(doc, ensure_ascii=False).encode()


def odcloud_error(code: int = -4, msg: str = "등록되지 않은 인증키 입니다.") -> bytes:
    return json.dumps({"code": code, "msg": msg}, ensure_ascii=False).encode()


def head_row_json(
    service: str, rows: list[Mapping[str, Any]], *, code: str = "INFO-000",
    msg: str = "정상 처리되었습니다.", total: int | None = None, style: str = "neis",
) -> bytes:
    """head/row: NEIS/Seoul spell the head ``list_total_count`` + ``RESULT{CODE,MESSAGE}``; the
    legacy MOIS sets ``totalCount`` + ``{numOfRows, pageNo, type}`` + ``RESULT{resultCode,
    resultMsg}`` (INFO-0 / NORMAL SERVICE)."""
    n = len(rows) if total is None else total
    if style == "neis":
        head: list[Any] = [{"list_total_count": n}, {"RESULT": {"CODE": code, "MESSAGE": msg}}]
    else:
        head = [{"totalCount": n}, {"numOfRows": "10", "pageNo": "1", "type": "json"},
                {"RESULT": {"resultCode": code, "resultMsg": msg}}]
    doc = {service: [{"head": head}, {"row": list(rows)}]}
    return json.dumps(doc, ensure_ascii=False).encode()


def head_row_result(code: str = "INFO-200", msg: str = "해당하는 데이터가 없습니다.", style: str = "neis") -> bytes:
    """The head/row services' no-data and error form: a top-level RESULT alone."""
    keys = ("CODE", "MESSAGE") if style == "neis" else ("resultCode", "resultMsg")
    return json.dumps({"RESULT": {keys[0]: code, keys[1]: msg}}, ensure_ascii=False).encode()


def html_error_page(status: int = 500, text: str = "Internal Server Error") -> bytes:
    return (
        "<!DOCTYPE html>\n<html><head><title>"
        f"{status} {escape(text)}</title></head><body><h1>{status} {escape(text)}</h1>"
        "<p>요청하신 페이지를 처리할 수 없습니다.</p></body></html>"
    ).encode()


def truncated(body: bytes, keep: float = 0.6) -> bytes:
    """A body cut off mid-stream, as a dropped connection behind a proxy delivers it."""
    return body[: max(1, int(len(body) * keep))]


# Billion laughs: ~10^9 expansions if a parser honoured the entities.
ENTITY_BOMB = (
    b'<?xml version="1.0"?>\n<!DOCTYPE lolz [\n <!ENTITY lol "lol">\n'
    + b"".join(
        f' <!ENTITY lol{i} "{("&lol" + (str(i - 1) if i > 1 else "") + ";") * 10}">\n'.encode()
        for i in range(1, 10)
    )
    + b"]>\n<response><header><resultCode>00</resultCode><resultMsg>&lol9;</resultMsg></header></response>"
)


def standard_error_json(code: str, msg: str) -> bytes:
    """The standard envelope carrying only a header (key errors, 99s) as JSON."""
    return json.dumps(
        {"response": {"header": {"resultCode": code, "resultMsg": msg}}}, ensure_ascii=False
    ).encode()


def standard_error_xml(code: str, msg: str) -> bytes:
    """The standard envelope carrying only a header, as XML (e.g. resultCode 99 key errors)."""
    return (
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?><response><header>'
        f"<resultCode>{escape(code)}</resultCode><resultMsg>{escape(msg)}</resultMsg>"
        "</header></response>"
    ).encode()
