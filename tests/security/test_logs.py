"""Issue 11 item 4: no log line carries a credential or personal data — unit checks of the filter,
then a full run (a real uvicorn server, Live adapters against loopback upstreams, debug logging
and access logs on) whose every captured line is searched."""

from __future__ import annotations

import contextlib
import logging
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote, quote_plus, unquote_plus

import httpx
import pytest

from tests.serve.conftest import RELEASE_CACHE, generated  # noqa: F401  (fixture)
from tests.support.serving import listening_socket, spawn_on, wait_ready
from tests.support.upstreams import XML, Reply, UpstreamServer
from ummaya.runtime import log_filter
from ummaya.runtime.log_filter import ScrubFilter, scrub
from ummaya.wire.redact import find_personal

REPO = Path(__file__).resolve().parents[2]
# Shaped like the real ones: a data.go.kr key has '+', '/' and '=' (so its escaped forms differ).
SERVICE_KEY = "Zx9Q+Lk2/Vb8Rt5Wq1Mn4Hj7Gf3Dc6Sa0Pl==SECRET"
KAKAO_KEY = "0f1e2d3c4b5a69788796a5b4c3d2e1f0"
API_KEY = "uk_live_7c0ffee1c0ffee2c0ffee3"
SECRETS = [SERVICE_KEY, KAKAO_KEY, API_KEY]
PHONE, EMAIL, RRN = "010-2345-6789", "hong.gildong@example.com", "900101-1234567"
REQUEST = f"제 번호 {PHONE}, 메일 {EMAIL}, 주민번호 {RRN} 인데 동아대 승학캠퍼스 근처 응급실 알려줘"


@pytest.fixture
def secret_env(monkeypatch):
    monkeypatch.setenv("DATA_GO_KR_SERVICE_KEY", SERVICE_KEY)
    monkeypatch.setenv("KAKAO_REST_API_KEY", KAKAO_KEY)
    monkeypatch.setenv("UMMAYA_API_KEYS", f"{API_KEY},another-key-123")


@pytest.mark.parametrize(
    "line, gone",
    [
        ("HTTP Request: GET https://apis.data.go.kr/B5/x?serviceKey=abcDEF123%2B%3D%3D&pageNo=1 \"HTTP/1.1 200 OK\"", "abcDEF123"),
        ("GET /x?ServiceKey=K3yK3yK3y&numOfRows=10", "K3yK3yK3y"),
        ("GET https://business.juso.go.kr/addrlink/addrLinkApi.do?confmKey=U01TX0FVVEgy&keyword=x", "U01TX0FVVEgy"),
        ("GET /OpenAPI3/auth/authentication.json?consumer_key=ck123456&consumer_secret=cs654321", "cs654321"),
        ("GET /OpenAPI3/x.json?accessToken=tok-abcdef-123456&cd=26", "tok-abcdef-123456"),
        ("{'Authorization': 'KakaoAK 1234567890abcdef', 'User-Agent': 'ummaya'}", "1234567890abcdef"),
        ("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.e30.sig", "eyJhbGciOiJIUzI1NiJ9"),
        ('{"access_token": "at-987654321", "expires_in": 3600}', "at-987654321"),
        ('{"accessToken":"at-123123123","accessTimeout":"1"}', "at-123123123"),
        ("connection failed: postgresql://ummaya:pa55w0rd@db.internal:5432/ummaya", "pa55w0rd"),
        (f"turn request: {REQUEST}", PHONE),
        (f"turn request: {REQUEST}", EMAIL),
        (f"turn request: {REQUEST}", RRN),
        ("upstream https://dapi.kakao.com/v2/local/search/keyword.json?query=010%2D2345%2D6789", "010%2D2345%2D6789"),
    ],
)
def test_scrub_removes(line, gone):
    out = scrub(line)
    assert gone not in out and gone not in unquote_plus(out), out


def test_scrub_removes_the_environment_credentials_in_any_spelling(secret_env):
    for form in (SERVICE_KEY, quote(SERVICE_KEY, safe=""), quote_plus(SERVICE_KEY), quote(SERVICE_KEY)):
        out = scrub(f"request failed for https://x.invalid/a?k={form}&b=1 (sent {form})")
        assert form not in out and "***" in out
    assert API_KEY not in scrub(f"key {API_KEY} refused") and "another-key-123" not in scrub("another-key-123")


def test_scrub_keeps_what_operators_need():
    line = 'GET https://apis.data.go.kr/B552657/x?WGS84_LAT=35.1167&WGS84_LON=128.968&pageNo=1 "HTTP/1.1 200 OK" 12.5 ms'
    assert scrub(line) == line
    assert scrub("published 3b4a075e9260 as production") == "published 3b4a075e9260 as production"


def _record(name, msg, args=(), exc_info=None):
    return logging.LogRecord(name, logging.INFO, __file__, 1, msg, args, exc_info)


def test_access_line_loses_its_query_string():
    rec = _record("uvicorn.access", '%s - "%s %s HTTP/%s" %d',
                  ("127.0.0.1:5000", "GET", f"/v1/traces/abc?phone={PHONE}&serviceKey=x1y2z3", "1.1", 200))
    ScrubFilter().filter(rec)
    assert rec.args[2] == "/v1/traces/abc" and rec.getMessage() == '127.0.0.1:5000 - "GET /v1/traces/abc HTTP/1.1" 200'


def test_tracebacks_are_scrubbed():
    try:
        raise RuntimeError(f"Client error for url 'https://x.invalid/a?serviceKey=tb-secret-999&tel={PHONE}'")
    except RuntimeError:
        rec = _record("ummaya.serve", "unhandled error (trace %s)", ("T1",), sys.exc_info())
    ScrubFilter().filter(rec)
    text = logging.Formatter().format(rec)
    assert "tb-secret-999" not in text and PHONE not in text and "RuntimeError" in text


def test_install_covers_loggers_made_later(caplog):
    log_filter.install()
    log_filter.install()  # idempotent: one factory, one filter per handler
    with caplog.at_level(logging.INFO):
        logging.getLogger("some.library.created.now").info("GET /x?serviceKey=late-secret-1 from %s", PHONE)
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert "late-secret-1" not in text and PHONE not in text and "serviceKey=***" in text


# --- the full run -----------------------------------------------------------------------------

KAKAO_BODY = (REPO / "registry/kakao/fixtures/kakao_keyword_search/donga_seunghak_multi.json").read_bytes()
NMC_BODY = (REPO / "registry/nmc/fixtures/nmc_emergency_rooms/busan_saha_multi.xml").read_bytes()


@contextlib.contextmanager
def uvicorn_server(env: dict[str, str], log: Path):
    """The production entry point at debug level with access logs: every line goes to ``log``."""
    sock = listening_socket()  # bound before the start: readiness is one request (serving.py)
    port = sock.getsockname()[1]
    cmd = [sys.executable, "-m", "uvicorn", "--factory", "ummaya.runtime.serve.app:app_from_env",
           "--fd", str(sock.fileno()), "--log-level", "debug", "--access-log"]
    with open(log, "wb") as out:
        proc = spawn_on(sock, cmd, env={**os.environ, **env}, cwd=str(REPO), stdout=out, stderr=subprocess.STDOUT)
    try:
        url = f"http://127.0.0.1:{port}"
        wait_ready(url, proc, lambda: log.read_text(errors="replace"), timeout=60)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


def test_full_run_logs_carry_no_secret_and_no_personal_data(generated, tmp_path):  # noqa: F811
    log = tmp_path / "server.log"
    with UpstreamServer() as upstream:
        upstream.route("/v2/local/search/keyword.json", Reply(body=KAKAO_BODY))
        upstream.route("/B552657/ErmctInfoInqireService/getEgytLcinfoInqire", Reply(body=NMC_BODY, content_type=XML))
        upstream.route("/fail", Reply(status=500, body=b"oops"))
        env = {
            "UMMAYA_DATABASE_URL": f"sqlite:///{tmp_path / 'serve.sqlite3'}",
            "UMMAYA_GENERATED": str(generated), "UMMAYA_HOME": str(tmp_path / "home"),
            "UMMAYA_RELEASE_CACHE": str(RELEASE_CACHE),
            "DATA_GO_KR_SERVICE_KEY": SERVICE_KEY, "KAKAO_REST_API_KEY": KAKAO_KEY, "UMMAYA_API_KEYS": API_KEY,
            "UMMAYA_BASE_URL_KAKAO": upstream.url, "UMMAYA_BASE_URL_DATA_GO_KR": upstream.url,
            "UMMAYA_TRACE_RAW_TEXT": "full",  # the most the store may keep: logs must still be clean
        }
        with uvicorn_server(env, log) as url:
            headers = {"Authorization": f"Bearer {API_KEY}"}
            body = {"query": REQUEST, "mode": "live"}
            r = httpx.post(f"{url}/v1/answer?debug={quote(PHONE)}&serviceKey={quote(SERVICE_KEY)}",
                           json=body, headers=headers, timeout=60)
            assert r.status_code == 200, r.text
            answer = r.json()
            # the same request again, located this time, so the Live adapters run end to end
            body2 = {"query": "동아대 승학캠퍼스 근처 응급실 알려줘", "mode": "live", "session_id": answer.get("session_id")}
            r2 = httpx.post(f"{url}/v1/answer", json={k: v for k, v in body2.items() if v}, headers=headers, timeout=60)
            assert r2.status_code in (200, 404), r2.text
            trace_id = answer.get("trace_id")
            if trace_id:
                httpx.get(f"{url}/v1/traces/{trace_id}?email={quote(EMAIL)}", headers=headers, timeout=30)
            httpx.get(f"{url}/v1/traces/nope?rrn={RRN}", headers={"Authorization": f"KakaoAK {KAKAO_KEY}"}, timeout=30)
            httpx.post(f"{url}/v1/answer", content=b"{" * 5000, headers={**headers, "content-type": "application/json"}, timeout=30)
        assert upstream.seen(), "the Live adapters reached the loopback upstreams"
        sent = [s.raw_query for s in upstream.seen()]
    lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    assert len(lines) >= 5, lines
    assert any("GET" in ln or "POST" in ln for ln in lines), "access lines were logged"
    assert any(SERVICE_KEY in unquote_plus(q) for q in sent), "the key did go to the upstream (and nowhere else)"
    for line in lines:
        decoded = unquote_plus(line)
        for secret in SECRETS:
            assert secret not in line and secret not in decoded, line
        for value in (PHONE, EMAIL, RRN):
            assert value not in line and value not in decoded, line
        assert "serviceKey=" not in line or "serviceKey=***" in line, line
        assert find_personal(line) == [] and find_personal(decoded) == [], line
        assert "?debug=" not in line and "?email=" not in line and "?rrn=" not in line, line


def test_ummaya_serve_log_config_filters_both_uvicorn_handlers():
    import logging.config

    config = log_filter.uvicorn_log_config()
    assert all("ummaya_scrub" in h["filters"] for h in config["handlers"].values())
    logging.config.dictConfig(config)
    try:
        handler = logging.getLogger("uvicorn.access").handlers[0]
        rec = _record("uvicorn.access", '%s - "%s %s HTTP/%s" %d', ("1.2.3.4:1", "GET", f"/v1/x?tel={PHONE}", "1.1", 200))
        assert handler.filter(rec) and rec.args[2] == "/v1/x"
    finally:
        from uvicorn.config import LOGGING_CONFIG

        logging.config.dictConfig(LOGGING_CONFIG)


def test_a_record_with_a_broken_format_string_is_scrubbed_too():
    rec = _record("ummaya.x", "phone %s and %s", (PHONE,))  # one argument short
    ScrubFilter().filter(rec)
    assert PHONE not in rec.getMessage() and "[전화번호]" in rec.getMessage()
