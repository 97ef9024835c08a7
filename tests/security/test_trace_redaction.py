"""Issue 11 item 5: upstream URLs kept in traces are redacted after URL-decoding — percent and
plus escapes hide nothing — under every raw-text policy (none, redacted and full), on SQLite and
PostgreSQL; coordinates in the same URLs survive byte for byte."""

from __future__ import annotations

import json
from urllib.parse import quote_plus, unquote_plus, urlencode

import pytest

from tests.store.conftest import db_url, pg_base_url, pg_url  # noqa: F401  (fixtures)
from ummaya.runtime.events import Event
from ummaya.runtime.store import RetentionPolicy, Trace, open_store
from ummaya.wire.redact import find_personal

PERSONAL = {
    "query": "홍길동 010-1234-5678 hong@example.com 900101-1234567 근처",
    "tel": "010 9876 5432",
    "passport": "M12345678",
}
COORDS = {"x": "129.050504421228", "y": "35.0101234567"}
URL = "https://dapi.kakao.com/v2/local/search/keyword.json?" + urlencode({**PERSONAL, **COORDS})
# urlencode: spaces as "+", "@" as "%40", Korean as UTF-8 escapes; hyphens stay literal.
HAND_ENCODED = ("https://apis.data.go.kr/x?phone=010%2D2222%2D3333&mail=kim%40korea.kr"
                f"&x={COORDS['x']}&y={COORDS['y']}")
RAW_FORMS = ["010-1234-5678", "01012345678", "hong@example.com", "hong%40example.com", "900101-1234567",
             "010+9876+5432", "M12345678", "010%2D2222%2D3333", "kim%40korea.kr", "kim@korea.kr"]


def _trace() -> Trace:
    call = {"adapter_id": "kakao_keyword_search", "primitive": "locate", "tier": "live", "status": "ok",
            "upstream_url": URL, "arguments": {"query": "근처"}}
    call2 = {**call, "adapter_id": "x", "upstream_url": HAND_ENCODED}
    events = [
        Event(seq=0, type="turn_started", stage="context", t_ms=0.0, data={"request": "응급실", "session_id": "s1"}),
        Event(seq=1, type="call_finished", stage="dispatch", t_ms=3.0,
              data={"call_id": "c1", "adapter_id": "kakao_keyword_search", "tier": "live", "status": "ok",
                    "latency_ms": 2.0, "upstream_url": URL, "error": None}),
        Event(seq=2, type="stop", stage="answer", t_ms=4.0, data={"stop_reason": "completed", "layer": "answer"}),
    ]
    return Trace(release_id="rel", release_alias="prod", session_id="s1", stop_reason="completed",
                 request_text="응급실", answer_text="답", timings={}, events=events, calls=[call, call2],
                 meta={"last_url": HAND_ENCODED})


@pytest.mark.parametrize("raw_text", ["none", "redacted", "full"])
def test_urls_in_traces_are_redacted_under_every_policy(db_url, raw_text):  # noqa: F811
    store = open_store(db_url, policy=RetentionPolicy(raw_text=raw_text))
    try:
        stored = store.put_trace(_trace(), RetentionPolicy(raw_text=raw_text))
        got = store.get_trace(stored.trace_id)
    finally:
        store.close()
    urls = [c["upstream_url"] for c in got.calls] + [got.events[1]["data"]["upstream_url"], got.meta["last_url"]]
    text = json.dumps([got.calls, got.events, got.meta], ensure_ascii=False)
    for form in RAW_FORMS:
        assert form not in text and form not in unquote_plus(text), (raw_text, form)
    for url in urls:
        assert find_personal(url) == [] and find_personal(unquote_plus(url)) == []
        assert f"x={COORDS['x']}" in url and f"y={COORDS['y']}" in url  # audit records keep their places
    assert "[전화번호]" in urls[0] and "[이메일]" in urls[0] and "[주민등록번호]" in urls[0] and "[여권번호]" in urls[0]
    assert urls[0].startswith("https://dapi.kakao.com/v2/local/search/keyword.json?query=")


@pytest.mark.parametrize("raw_text", ["none", "redacted", "full"])
def test_no_credential_is_stored_in_a_trace(db_url, raw_text, monkeypatch):  # noqa: F811
    key = "Qk9+Zm9v/YmFy==data-go-kr"
    monkeypatch.setenv("DATA_GO_KR_SERVICE_KEY", key)
    call = {"adapter_id": "x", "status": "error", "upstream_url": "https://apis.data.go.kr/x?pageNo=1",
            "error": {"code": "INTERNAL", "message": f"InvalidURL: https://apis.data.go.kr/x?serviceKey={quote_plus(key)}&pageNo=1"}}
    trace = Trace(release_id="rel", release_alias="prod", session_id="s1", stop_reason="adapter_error",
                  request_text="응급실", answer_text=f"Authorization: KakaoAK abcdef123456 {key}", timings={}, events=[],
                  calls=[call], meta={"note": f"raw key {key}"})
    store = open_store(db_url, policy=RetentionPolicy(raw_text=raw_text))
    try:
        got = store.get_trace(store.put_trace(trace, RetentionPolicy(raw_text=raw_text)).trace_id)
    finally:
        store.close()
    text = json.dumps([got.calls, got.meta, got.answer_text], ensure_ascii=False)
    assert key not in text and quote_plus(key) not in text and "abcdef123456" not in text
    assert "serviceKey=***" in got.calls[0]["error"]["message"]
