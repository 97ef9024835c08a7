"""Issue 11 item 10 end to end: an upstream that drips one byte a second ends the call as
``channel_unavailable`` (TIMEOUT) within the adapter's deadline, and the SSE stream ends with its
one ``error`` event — it is never held open by the drip."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.serve.conftest import client, parse_sse, variant
from tests.support.upstreams import Reply, UpstreamServer, header_body_json

PATH = "/1471000/DrbEasyDrugInfoService/getDrbEasyDrugList"
DEADLINE_S = 1.5


@pytest.fixture
def short_deadline(generated: Path, tmp_path: Path) -> Path:
    """The real build with mfds_easy_drug_info's deadline (upstream.timeout_s) set short."""
    dst = variant(generated, tmp_path / "g", "deadline-test")
    cat = json.loads((dst / "catalog.json").read_bytes())
    for a in cat["adapters"]:
        if a["id"] == "mfds_easy_drug_info":
            a["upstream"]["timeout_s"] = DEADLINE_S
    (dst / "catalog.json").write_text(json.dumps(cat, ensure_ascii=False, sort_keys=True))
    return dst


def test_a_dripping_upstream_ends_the_stream_within_the_deadline(short_deadline, sqlite_url, tmp_path, monkeypatch):
    body = header_body_json([{"itemName": "타이레놀정500밀리그람", "entpName": "한국존슨앤드존슨판매(유)", "itemSeq": "200300406"}])
    with UpstreamServer() as srv:
        srv.route(PATH, Reply(body=body, drip_s=1.0))  # one byte a second: ~4 minutes in full
        monkeypatch.setenv("DATA_GO_KR_SERVICE_KEY", "test-key")
        monkeypatch.setenv("UMMAYA_BASE_URL_MFDS_EASY_DRUG_INFO", srv.url)
        with client(short_deadline, sqlite_url, tmp_path) as c:
            r = c.post("/v1/answer", json={"query": "타이레놀 먹어도 돼?", "mode": "live", "stream": True})
    events = parse_sse(r.text)
    # No clock: each byte comes within any per-read timeout, so only the call's one deadline can
    # end it as TIMEOUT (the whole body would take minutes), and it is asked once, not per retry.
    assert len(srv.seen(PATH)) == 1, "the live upstream was called once"
    (result,) = [e["data"] for e in events if e["event"] == "tool_result"]
    assert result["status"] == "error"
    assert (result["error"]["class"], result["error"]["code"]) == ("channel_unavailable", "TIMEOUT")
    kinds = [e["event"] for e in events]
    assert kinds[-1] == "error" and kinds.count("error") == 1 and "completed" not in kinds
    assert events[-1]["data"]["error"]["code"] == "channel_unavailable"
