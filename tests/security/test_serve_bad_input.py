"""Issue 11 item 9 over HTTP: deeply nested JSON is a clean 422 (never a 500), and a body shorter
than its Content-Length is answered 408 (its read timer's answer) on the real server (uvicorn), SQLite and
PostgreSQL."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.serve.conftest import (  # noqa: F401  (fixtures)
    _isolated_home,
    _release_cache,
    client,
    generated,
    live_server,
)
from tests.store.conftest import pg_base_url, pg_url  # noqa: F401
from ummaya.runtime.serve.app import MAX_JSON_DEPTH, json_depth_over


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'bad.sqlite3'}"
    return request.getfixturevalue("pg_url")


def nested(depth: int, inner: str = "1") -> bytes:
    return ('{"query": "약국", "filters": ' + "[" * depth + inner + "]" * depth + "}").encode()


@pytest.mark.parametrize("path", ["/v1/answer", "/v1/retrieve"])
def test_deep_nesting_is_422_json_too_deep(generated, url, tmp_path, path) -> None:  # noqa: F811
    with client(generated, url, tmp_path) as c:
        for depth in (MAX_JSON_DEPTH + 1, 1000, 20000):  # 20000 once crashed json with RecursionError
            r = c.post(path, content=nested(depth), headers={"content-type": "application/json"})
            assert r.status_code == 422, (depth, r.status_code, r.text[:200])
            err = r.json()["error"]
            assert err["code"] == "json_too_deep" and err["trace_id"]
        objects = ("{" + '"a":{' * 5000 + "}" * 5001).encode()
        r = c.post(path, content=objects, headers={"content-type": "application/json"})
        assert r.status_code == 422 and r.json()["error"]["code"] == "json_too_deep"
        # Brackets inside strings are text, not nesting: an ordinary request still works.
        body = {"query": "[[[[" * 100 + " 약국 어디 있어?", "mode": "mock"} if path == "/v1/answer" \
            else {"query": "{{{{" * 100 + " 약국"}
        r = c.post(path, json=body)
        assert r.status_code == 200, r.text[:300]
        assert c.get("/healthz").status_code == 200


def test_depth_scanner_matches_the_parser() -> None:
    cases = [b"[]", b"[[1]]", b'["[[[["]', b'{"a": "\\"[[[["}', b'[' * 5 + b']' * 5,
             b'"' + b"[" * 100 + b'"', b"[" * 40]
    for data in cases:
        depth = 0
        try:
            def d(v: Any) -> int:
                return 1 + max((d(x) for x in (v.values() if isinstance(v, dict) else v)), default=0) \
                    if isinstance(v, (list, dict)) else 0
            depth = d(json.loads(data))
        except ValueError:
            depth = data.count(b"[")  # unterminated: every bracket counts
        assert json_depth_over(data, 3) == (depth > 3), data


def _short_body(port: int, path: str, declared: int, sent: bytes) -> bytes:
    """The server's whole answer to a body that stops short of its Content-Length; the socket's
    30 s timeout fails the test (socket.timeout) if the server never answers."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        head = (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                f"Content-Length: {declared}\r\n\r\n").encode()
        s.sendall(head + sent)
        data = b""
        while b"\r\n\r\n" not in data or not data.rstrip().endswith(b"}"):
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
        return data


def test_body_shorter_than_content_length_is_408_request_timeout(live_server, url) -> None:  # noqa: F811
    srv = live_server(url, UMMAYA_BODY_READ_TIMEOUT_S="2", UMMAYA_SERVE_MODE="mock")
    port = int(srv.url.rsplit(":", 1)[1])
    for path in ("/v1/answer", "/v1/retrieve"):
        data = _short_body(port, path, 500, '{"query": "약국'.encode())
        head, _, body = data.partition(b"\r\n\r\n")
        # The stable outcome, not a stopwatch: a 408 request_timeout is only ever the body-read
        # timer's answer (a body read whole would be a 400/422, a hang a socket timeout above).
        assert head.startswith(b"HTTP/1.1 408"), data[:200]
        assert json.loads(body)["error"]["code"] == "request_timeout"
    # the server is fine afterwards
    r = httpx.post(srv.url + "/v1/retrieve", json={"query": "약국"}, timeout=30)
    assert r.status_code == 200 and srv.alive()
