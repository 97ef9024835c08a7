"""Issue 19 holes 9 and the bidi item / items 9 and 10, on the page: a citation or handoff link is
a link only when it is https, and bidirectional controls never reach the page — whatever the server
sends (the stream here is a hostile one, routed in by the browser test). The server-side halves
are in test_manifest_urls.py (check) and test_upstream_injection.py (answers)."""

from __future__ import annotations

import json
from typing import Any

from tests.web.conftest import Page, browser, chromium_path, open_page, server  # noqa: F401
from tests.serve.conftest import RELEASE_CACHE, _isolated_home, _release_cache, generated, live_server, sqlite_url  # noqa: F401

RLO = "\u202e"


def sse(*events: tuple[str, dict]) -> str:
    return "".join(f"id: {i}\nevent: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"
                   for i, (name, data) in enumerate(events))


def hostile_stream() -> str:
    return sse(
        ("metadata", {"trace_id": "T1", "release": {"id": "r", "alias": "production"}, "session_id": "s",
                      "language": "ko", "planner": "offline", "mode": "mock"}),
        ("evidence", {"rank": 1, "score": 1.0, "content": {"items": [{"name": f"하단병원{RLO}5432-6789-010"}]},
                      "citation": {"title": "http 출처", "url": "http://insecure.example.com/data"},
                      "metadata": {"evidence_id": "ev1", "adapter_id": "nmc_emergency_rooms", "primitive": "find",
                                   "tier": "mock", "status": "ok", "freshness": None}}),
        ("evidence", {"rank": 2, "score": 1.0, "content": {"channel": {"ko": "정부24"}, "url": "http://www.gov.kr/x",
                                                          "steps": {"ko": ["방문"]}},
                      "citation": {"title": "https 출처", "url": "https://www.data.go.kr/data/1"},
                      "metadata": {"evidence_id": "ev2", "adapter_id": "gov24_move_in_report", "primitive": "send",
                                   "tier": "handoff", "status": "handoff", "freshness": None}}),
        ("delta", {"text": f"가까운 곳은 하단병원{RLO}입니다 \u2066숨김\u2069"}),
        ("completed", {"trace_id": "T1", "stop_reason": "completed", "layer": "answer", "grounded": True,
                       "removed_claims": [], "usage": {}, "calls": [], "session_id": "s", "language": "ko"}),
    )


def test_the_page_links_https_only_and_shows_no_bidi_controls(server: Any, open_page: Any) -> None:  # noqa: F811
    p = open_page(server.url)
    p.page.route("**/v1/answer", lambda route: route.fulfill(status=200, content_type="text/event-stream",
                                                              body=hostile_stream()))
    p.ask("근처 응급실")
    li = p.turn(0)
    hrefs = [a.get_attribute("href") for a in li.locator("a").all()]
    assert "https://www.data.go.kr/data/1" in hrefs
    assert not any(h and h.startswith("http://") for h in hrefs), hrefs
    text = li.inner_text()
    assert "http 출처" in text  # the http citation is still named, as text
    for ch in (RLO, "\u2066", "\u2069"):
        assert ch not in text, repr(text)
    assert "하단병원" in text
