"""The citizen page in a real browser: Playwright driving the system's Chromium (Debian package
``chromium``; Playwright's own browser download is never used) against ``ummaya serve`` on
loopback. Tests skip only when no Chromium is installed; CI installs it (.ci/run)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.serve.conftest import (  # noqa: F401  (shared fixtures: the build, live uvicorn servers)
    RELEASE_CACHE,
    _isolated_home,
    _release_cache,
    generated,
    live_server,
    sqlite_url,
)


def chromium_path() -> str | None:
    for candidate in (os.environ.get("UMMAYA_CHROMIUM"), "chromium", "chromium-browser"):
        if candidate and (found := shutil.which(candidate)):
            return found
    return None


@pytest.fixture
def browser() -> Iterator[Any]:
    # Per test, not per session: Playwright's sync API keeps an asyncio loop running in this thread
    # while it is open, and every other test that runs its own loop (anyio.run) would then fail.
    path = chromium_path()
    if path is None:
        pytest.skip("no system Chromium (apt-get install chromium; .ci/run does) — the browser tests need one")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=path, args=["--no-sandbox", "--disable-gpu"])
        try:
            yield b
        finally:
            b.close()


class Page:
    """One browser page on the server, with every console error and page error collected."""

    def __init__(self, browser: Any, url: str, shots: Path, width: int = 390, height: int = 844):
        self.context = browser.new_context(viewport={"width": width, "height": height}, locale="ko-KR")
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.page.on("console", lambda m: self.errors.append(f"console.{m.type}: {m.text}") if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(f"pageerror: {e}"))
        self.shots = shots
        self.page.goto(url + "/")

    def ask(self, query: str) -> None:
        self.page.get_by_test_id("query").fill(query)
        self.page.get_by_test_id("send").click()

    def turn(self, n: int) -> Any:
        """The n-th turn (0-based) once its stop line is written (the turn has ended)."""
        li = self.page.locator("#log > li").nth(n)
        # A deadline, not a speed bound: a first turn at 136 adapters took over a minute on the
        # 2-core machine under load (30 s timed out), a few seconds when idle.
        li.locator("[data-testid=stop]:not(:empty)").wait_for(timeout=180_000)
        return li

    def shot(self, name: str) -> Path:
        # What the citizen sees: the viewport (the page keeps the latest turn in view). A full-page
        # capture of a page with a sticky form paints that form over the middle of the page.
        path = self.shots / f"{name}.png"
        self.page.screenshot(path=str(path))
        return path


@pytest.fixture
def server(live_server: Any, sqlite_url: str) -> Any:
    return live_server(sqlite_url, UMMAYA_SERVE_MODE="mock")


@pytest.fixture
def open_page(browser: Any, tmp_path: Path, request: Any) -> Iterator[Any]:
    pages: list[Page] = []
    # UMMAYA_WEB_SHOTS=DIR keeps every screenshot (one folder per test) to look at afterwards.
    keep = os.environ.get("UMMAYA_WEB_SHOTS")
    shots = Path(keep) / request.node.name if keep else tmp_path
    shots.mkdir(parents=True, exist_ok=True)

    def make(url: str, **kw: Any) -> Page:
        p = Page(browser, url, shots, **kw)
        pages.append(p)
        return p

    yield make
    for p in pages:
        errors = list(p.errors)
        p.context.close()
        assert errors == [], errors  # no console errors, in any test
