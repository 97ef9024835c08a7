"""The citizen page, end to end in Chromium: streamed answers, evidence cards with their tier
badge and citation, follow-ups in the server's session, the consent dialog, handoff, out of scope,
an upstream that fails, keyboard only and a 360-pixel phone screen. Every test saves screenshots
in its own temporary folder; the page must log no console error (conftest)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from playwright.sync_api import expect

from tests.support.upstreams import Reply, UpstreamServer

ER = "동아대 승학캠퍼스 근처 응급실 알려줘"
NMC_PATH = "/B552657/ErmctInfoInqireService/getEgytLcinfoInqire"

# First answer text after send, measured in the page (performance.now) — reported, not asserted.
FIRST_TEXT_JS = """() => new Promise((resolve) => {
  const log = document.getElementById('log');
  const send = document.querySelector('[data-testid=send]');
  let t0 = null;
  document.getElementById('ask').addEventListener('submit', () => { t0 = performance.now(); }, {capture: true, once: true});
  const obs = new MutationObserver(() => {
    const a = log.querySelector('li:last-child [data-testid=answer]');
    if (t0 !== null && a && a.textContent.length) { obs.disconnect(); resolve(performance.now() - t0); }
  });
  obs.observe(log, {childList: true, subtree: true, characterData: true});
  window.__firstText = null;
  send.click();
})"""


def test_er_request_streams_an_answer_with_a_mock_badge_and_citation(server: Any, open_page: Any, record_property: Any) -> None:
    p = open_page(server.url)
    page = p.page
    expect(page.locator("html")).to_have_attribute("lang", "ko")
    page.get_by_test_id("query").fill(ER)
    first_text_ms = page.evaluate(FIRST_TEXT_JS)
    turn = p.turn(0)
    answer = turn.get_by_test_id("answer")
    expect(answer).to_contain_text("[Mock · 모의]")
    expect(answer).to_contain_text("동아대학교병원")
    cards = turn.get_by_test_id("evidence")
    expect(cards).to_have_count(2)  # the place lookup, then the emergency rooms
    er = turn.locator("[data-testid=evidence][data-adapter=nmc_emergency_rooms]")
    badge = er.locator(".badge")
    expect(badge).to_have_attribute("data-tier", "mock")
    expect(badge).to_have_text("Mock · 모의")
    link = er.get_by_test_id("citation")
    expect(link).to_have_attribute("href", "https://www.data.go.kr/data/15000563/openapi.do")
    expect(er.locator("ol > li").first).to_contain_text("km")
    expect(turn.get_by_test_id("stop")).to_have_text("결과: 답변을 마쳤습니다.")
    p.shot("er-request")
    # once more, the server and the page warm: what a citizen's second question sees
    page.get_by_test_id("query").fill(ER)
    warm_ms = page.evaluate(FIRST_TEXT_JS)
    p.turn(1)
    record_property("first_answer_text_ms", round(first_text_ms, 1))
    record_property("first_answer_text_warm_ms", round(warm_ms, 1))
    print(f"\nfirst answer text after send (Mock): {first_text_ms:.1f} ms cold, {warm_ms:.1f} ms warm")


def test_a_follow_up_continues_the_servers_session(server: Any, open_page: Any) -> None:
    p = open_page(server.url)
    p.ask(ER)
    p.turn(0)
    p.ask("근처 약국도 알려줘")
    second = p.turn(1)
    # the place found in the first turn is reused: no second place lookup, pharmacies near it
    expect(second.get_by_test_id("evidence")).to_have_count(1)
    expect(second.locator("[data-testid=evidence][data-adapter=nmc_pharmacies]")).to_be_visible()
    expect(second.get_by_test_id("stop")).to_have_text("결과: 답변을 마쳤습니다.")
    p.shot("follow-up")


def test_consent_dialog_grants_and_retries_the_turn(server: Any, open_page: Any, sqlite_url: str) -> None:
    from ummaya.runtime.store import open_store

    p = open_page(server.url)
    page = p.page
    p.ask("모바일 신분증으로 본인 확인해줘")
    first = p.turn(0)
    expect(first.get_by_test_id("stop")).to_contain_text("개인정보 동의")
    dialog = page.get_by_test_id("consent-dialog")
    expect(dialog).to_be_visible()
    expect(dialog.locator("#consent-purpose")).to_contain_text("모바일 신분증 제시를 통한 본인 확인")
    expect(dialog.locator("#consent-items")).to_have_text("성명, 생년월일, 신분증 종류, 확인 결과")
    expect(dialog.locator("#consent-retention")).to_contain_text("세션이 끝나면 파기")
    expect(dialog.locator("#consent-refusal")).to_contain_text("동의하지 않을 권리")
    expect(page.get_by_test_id("consent-grant")).to_be_focused()
    p.shot("consent-dialog")
    page.get_by_test_id("consent-grant").click()
    expect(dialog).to_be_hidden()
    retried = p.turn(1)
    expect(retried.locator(".you")).to_contain_text("동의 후 다시 요청")
    # past the gate now: the engine asks for what the check needs (consent came before collection)
    expect(retried.get_by_test_id("stop")).not_to_contain_text("동의")
    expect(retried.get_by_test_id("answer")).to_contain_text("이름")
    p.shot("consent-granted")
    with open_store(sqlite_url) as store:
        grants = [c for c in store.list_consents() if c.action == "grant"]
        assert [g.adapter_id for g in grants] == ["mobile_id_verify"]
        assert grants[0].data_items == ["성명", "생년월일", "신분증 종류", "확인 결과"]


def test_consent_refused_runs_nothing(server: Any, open_page: Any, sqlite_url: str) -> None:
    from ummaya.runtime.store import open_store

    p = open_page(server.url)
    p.ask("모바일 신분증으로 본인 확인해줘")
    first = p.turn(0)
    p.page.get_by_test_id("consent-refuse").click()
    expect(first.get_by_test_id("stop")).to_contain_text("동의하지 않아 실행하지 않았습니다")
    expect(p.page.locator("#log > li")).to_have_count(1)
    with open_store(sqlite_url) as store:
        assert store.list_consents() == []


def test_handoff_card_shows_channel_steps_documents_and_deadline(server: Any, open_page: Any) -> None:
    p = open_page(server.url)
    p.ask("전입신고 하려면 어떻게 해?")
    turn = p.turn(0)
    card = turn.locator("[data-testid=evidence][data-kind=handoff]")
    expect(card.locator(".badge")).to_have_attribute("data-tier", "handoff")
    for label in ("공식 창구", "절차", "준비물", "기한"):
        expect(card.locator("dt", has_text=label)).to_be_visible()
    expect(card.locator("dd ol > li").first).to_be_visible()
    expect(card.get_by_test_id("citation").first).to_have_attribute("href", re.compile(r"^https://"))
    expect(turn.get_by_test_id("stop")).to_have_text("결과: 이 일은 공식 창구에서 직접 진행해야 합니다.")
    p.shot("handoff")


def test_out_of_scope_says_so_in_plain_words(server: Any, open_page: Any) -> None:
    p = open_page(server.url)
    p.ask("오늘 저녁 메뉴 추천해줘")
    turn = p.turn(0)
    expect(turn.get_by_test_id("evidence")).to_have_count(0)
    expect(turn.get_by_test_id("stop")).to_have_text("결과: 이 요청을 처리할 공공서비스를 찾지 못했습니다.")
    expect(turn.get_by_test_id("answer")).to_contain_text("공공서비스")
    p.shot("out-of-scope")


def test_upstream_error_is_shown_not_guessed(live_server: Any, sqlite_url: str, open_page: Any) -> None:
    """A Live adapter against a loopback upstream that keeps failing (503): the turn ends with the
    stream's error event, shown in plain words with its code and trace id — no result invented."""
    with UpstreamServer() as upstream:
        upstream.route(NMC_PATH, Reply(status=503, body=b"Service Unavailable", content_type="text/plain"))
        server = live_server(sqlite_url, DATA_GO_KR_SERVICE_KEY="test-key",
                             UMMAYA_BASE_URL_NMC_EMERGENCY_ROOMS=upstream.url)
        p = open_page(server.url)
        p.ask(ER)
        turn = p.turn(0)
        stop = turn.get_by_test_id("stop")
        expect(stop).to_have_class(re.compile(r"\berror\b"))
        expect(stop).to_contain_text("기관 시스템이 지금 응답하지 않습니다")
        expect(stop).to_contain_text("(channel_unavailable)")
        expect(stop).to_contain_text(re.compile(r"추적 번호 [0-9A-Z]{26}"))
        expect(turn.locator("[data-testid=evidence][data-adapter=nmc_emergency_rooms]")).to_have_count(0)
        assert upstream.seen(NMC_PATH), "the live call reached the loopback upstream"
        p.shot("upstream-error")


def test_keyboard_only_on_a_360_pixel_phone(server: Any, open_page: Any) -> None:
    p = open_page(server.url, width=360, height=740)
    page = p.page
    # labelled controls
    expect(page.get_by_label("무엇을 도와드릴까요?")).to_have_attribute("data-testid", "query")
    # Tab from the top reaches the skip link, the language switch, then the question box
    page.keyboard.press("Tab")
    expect(page.locator("a.skip")).to_be_focused()
    page.keyboard.press("Tab")
    expect(page.get_by_test_id("lang")).to_be_focused()
    page.keyboard.press("Tab")
    expect(page.get_by_test_id("query")).to_be_focused()
    page.keyboard.type("모바일 신분증으로 본인 확인해줘")
    page.keyboard.press("Enter")
    p.turn(0)
    expect(page.get_by_test_id("consent-dialog")).to_be_visible()
    page.keyboard.press("Enter")  # the focused button: 동의하고 계속
    p.turn(1)
    expect(page.get_by_test_id("query")).to_be_focused()
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= 360, f"horizontal scroll on a 360-px screen: {width}px"
    # the latest turn's end is in view above the question box, not hidden behind it
    stop_box = p.turn(1).get_by_test_id("stop").bounding_box()
    form_box = page.locator("#ask").bounding_box()
    assert stop_box["y"] + stop_box["height"] <= form_box["y"] + 1, (stop_box, form_box)
    p.shot("phone-360")


def test_english_switch(server: Any, open_page: Any) -> None:
    p = open_page(server.url)
    page = p.page
    page.get_by_test_id("lang").click()
    expect(page.locator("html")).to_have_attribute("lang", "en")
    expect(page.get_by_label("How can I help?")).to_be_visible()
    expect(page.get_by_test_id("send")).to_have_text("Send")
    p.ask("emergency room near Busan Station")
    turn = p.turn(0)
    expect(turn.get_by_test_id("stop")).to_have_text(re.compile(r"^Result: "))
    page.get_by_test_id("lang").click()
    expect(turn.get_by_test_id("stop")).to_have_text(re.compile(r"^결과: "))
    p.shot("english")


def test_page_ships_in_the_package_with_a_strict_policy(server: Any) -> None:
    import httpx

    from ummaya.runtime.serve import page

    r = httpx.get(server.url + "/")
    assert r.status_code == 200 and "text/html" in r.headers["content-type"]
    assert "script-src 'self'" in r.headers["content-security-policy"]
    for name in ("index.html", "app.css", "app.js"):
        assert (Path(page.__file__).parent / "static" / name).is_file()
    assert "http" not in re.sub(r"https?://www\.w3\.org[^\"']*", "", r.text.split("<body>")[0])  # no CDN
    assert httpx.get(server.url + "/static/app.js").status_code == 200


CONTRAST_JS = """(selectors) => {
  const rgb = (s) => (s.match(/[\\d.]+/g) || []).map(Number);
  const lum = ([r, g, b]) => { const f = (c) => { c /= 255; return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b); };
  const background = (el) => { for (let e = el; e; e = e.parentElement) { const c = rgb(getComputedStyle(e).backgroundColor);
    if (c.length === 3 || (c.length === 4 && c[3] > 0.5)) return c.slice(0, 3); } return [255, 255, 255]; };
  const out = {};
  for (const sel of selectors) {
    const el = document.querySelector(sel);
    if (!el) { out[sel] = null; continue; }
    const a = lum(rgb(getComputedStyle(el).color).slice(0, 3)), b = lum(background(el));
    out[sel] = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
  }
  return out;
}"""


def test_text_contrast_meets_wcag_aa(server: Any, open_page: Any) -> None:
    """Every kind of text the page shows — answer, badges of all three tiers, handoff card, stop
    line, hint, buttons, the user's bubble — at ≥ 4.5:1 against what is behind it."""
    p = open_page(server.url)
    p.ask(ER)
    p.turn(0)
    p.ask("전입신고 하려면 어떻게 해?")
    p.turn(1)
    selectors = [".answer", ".badge[data-tier=mock]", ".badge[data-tier=handoff]", ".card.handoff dd",
                 ".card a", ".stop", ".hint", "#send", "#lang", ".you .q", ".intro", "label[for=query]"]
    ratios = p.page.evaluate(CONTRAST_JS, selectors)
    low = {k: v for k, v in ratios.items() if v is None or v < 4.5}
    assert low == {}, ratios
