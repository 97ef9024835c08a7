"""Issue 19 hole 7 / item 7: no error message leaves the process with a credential in it, and URL
user information is stripped everywhere.

Before: a password in ``UMMAYA_LLM_BASE_URL`` reached clients in the ``provider_unavailable``
message, JSON and SSE alike (traces and logs masked it). Now every message is scrubbed where it
is made (``ProviderError``, ``UpstreamError``) and again where it leaves (the one error body, the
MCP error result, the CLI's failure line, the log filter).
"""

from __future__ import annotations

import json
import logging
import socket

import pytest

from tests.serve.conftest import client, parse_sse
from tests.serve.conftest import RELEASE_CACHE, _isolated_home, _release_cache, generated, sqlite_url  # noqa: F401
from ummaya.runtime.log_filter import scrub
from ummaya.runtime.plan.protocol import ProviderError
from ummaya.runtime.serve.api_errors import error_body
from ummaya.wire.credentials import strip_credentials

PASSWORD = "s3cr3t-Pa55word"
TOKEN = "tok_abcdef123456"


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("base", [
    "http://llmuser:{p}@127.0.0.1:{port}/v1",          # user and password
    "http://{p}@127.0.0.1:{port}/v1",                  # a token as the user
    "http://:{p}@127.0.0.1:{port}/v1",                 # a password alone
    "http://llm%40user:{p}%21@127.0.0.1:{port}/v1",    # escaped characters in both
])
def test_a_password_in_the_llm_url_reaches_no_client(base, generated, sqlite_url, tmp_path, monkeypatch) -> None:  # noqa: F811
    url = base.format(p=PASSWORD, port=closed_port())
    monkeypatch.setenv("UMMAYA_LLM_BASE_URL", url)
    body = {"query": "동아대 승학캠퍼스 근처 약국 어디 있어?", "mode": "mock",
            "generation": {"planner": "openai", "model": "m", "timeout_s": 0.5}}
    with client(generated, sqlite_url, tmp_path) as c:
        r = c.post("/v1/answer", json=body)
        assert r.json()["error"]["code"] == "provider_unavailable", r.text
        sse = c.post("/v1/answer", json={**body, "stream": True})
        events = parse_sse(sse.text)
        assert events[-1]["event"] == "error"
        trace = c.get(f"/v1/traces/{r.json()['error']['trace_id']}").text
    for text in (r.text, sse.text, trace):
        assert PASSWORD not in text and "llmuser" not in text and "%21" not in text, text
    assert "127.0.0.1" in r.json()["error"]["message"]  # still says where it could not reach


@pytest.mark.parametrize("text", [
    f"cannot reach https://user:{PASSWORD}@llm.example.com/v1: ConnectError",
    f"cannot reach https://{TOKEN}@llm.example.com/v1",
    f"postgresql://ummaya:{PASSWORD}@db.internal:5432/ummaya refused",
    f"redis://:{PASSWORD}@cache:6379/0",
    f"see HTTPS://USER:{PASSWORD}@Host.Example/x and ftp://anon:{PASSWORD}@f.example/",
])
def test_userinfo_is_stripped_everywhere(text) -> None:
    for out in (strip_credentials(text, []), scrub(text), error_body("internal_error", text, None)["error"]["message"],
                ProviderError("provider_unavailable", text).message):
        assert PASSWORD not in out and TOKEN not in out and "USER" not in out and "***@" in out, out


def test_an_at_sign_in_a_path_or_query_is_not_userinfo() -> None:
    text = "https://maps.example.com/place/@35.1,129.0 and https://x.example.com/?q=a@b"
    assert strip_credentials(text, []) == text


def test_mcp_and_cli_errors_are_scrubbed(capsys) -> None:
    from ummaya.cli._common import fail
    from ummaya.runtime.mcp.server import error_result

    r = error_result("provider_unavailable", f"cannot reach https://u:{PASSWORD}@h.example.com/v1")
    assert PASSWORD not in json.dumps(r.model_dump(mode="json"))
    with pytest.raises(SystemExit):
        fail(f"cannot open postgresql://u:{PASSWORD}@db.example.com/x")
    assert PASSWORD not in capsys.readouterr().err


def test_the_log_filter_strips_userinfo(caplog) -> None:
    from ummaya.runtime.log_filter import ScrubFilter

    record = logging.LogRecord("ummaya", logging.ERROR, __file__, 1, "provider at %s failed",
                               (f"https://{TOKEN}@llm.example.com/v1",), None)
    ScrubFilter().filter(record)
    assert TOKEN not in record.getMessage()
