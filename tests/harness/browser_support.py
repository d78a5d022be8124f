"""Headless Chromium for the page tests: Debian's, never a downloaded browser. Its
headless shell (package chromium-headless-shell, Chromium's own build for automation, the
one Playwright runs headless by default) where installed, else the full browser (package
chromium, in its headless mode): the shell costs the page tests about a quarter less CPU.
Without either the tests skip, unless HARNESS_REQUIRE_BROWSER=1 (CI), where they fail.
Screenshots go to ``test-artifacts/``.

One browser and one tab serve every page test of a test process (tests/harness/conftest.py
provides ``page_session``, ``browser`` and ``shared_tab``): a launch costs Chromium and
Playwright's driver about 2 CPU-s, a new tab about 0.6 (a fresh renderer process)."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:  # Playwright's API takes ~0.2 s to import: only where a page test runs
    from playwright.sync_api import Browser, Page, Request, ViewportSize

# The programs themselves, not Debian's /usr/bin wrapper scripts around them.
CHROMIUMS = (Path("/usr/lib/chromium/chromium-headless-shell"), Path("/usr/lib/chromium/chromium"))
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@contextlib.contextmanager
def launched_chromium() -> Iterator[Browser]:
    """Headless Chromium, closed on leaving; the test skips (or fails, see above) without it."""
    chromium = next((path for path in CHROMIUMS if path.exists()), None)
    if chromium is None:
        reason = (
            f"Debian's Chromium is not installed (none of {', '.join(map(str, CHROMIUMS))}): "
            "install it with `apt-get update && apt-get install -y chromium-headless-shell` "
            "(with sudo if not root)"
        )
        if os.environ.get("HARNESS_REQUIRE_BROWSER") == "1":
            pytest.fail(f"HARNESS_REQUIRE_BROWSER=1 but {reason}")
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(chromium), args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


class PageSession:
    """One browser, and one tab, for the test process's page tests.

    After each call, Playwright's sync API marks its event loop as the main thread's running
    loop (``wait_for_future`` in playwright/_impl/_greenlets.py), so that while a browser is
    open every other test that runs an event loop in the main thread (``asyncio.run``) fails:
    "cannot be called from a running event loop". Between page tests the mark is taken off;
    ``lend`` puts it back for the page test's time."""

    def __init__(self, browser: Browser) -> None:
        self.browser = browser
        self._tab: Page | None = None
        self._loop = asyncio._get_running_loop()  # Playwright's: the launch marked it
        asyncio._set_running_loop(None)

    @contextlib.contextmanager
    def lend(self) -> Iterator[Browser]:
        """The browser, for a page test's time."""
        asyncio._set_running_loop(self._loop)
        try:
            yield self.browser
        finally:
            asyncio._set_running_loop(None)

    def tab(self) -> Page:
        """The shared tab (call inside ``lend``); a new one if a test closed it."""
        if self._tab is None or self._tab.is_closed():
            self._tab = self.browser.new_page()
        return self._tab

    def end(self) -> None:
        """Close the tab and give Playwright its loop back, for the browser's close."""
        asyncio._set_running_loop(self._loop)
        if self._tab is not None:
            self._tab.close()


@pytest.fixture(scope="session")
def page_session() -> Iterator[PageSession]:
    """Headless Chromium for the test process's page tests, launched by the first."""
    with launched_chromium() as launched:
        session = PageSession(launched)
        try:
            yield session
        finally:
            session.end()


@pytest.fixture
def browser(page_session: PageSession) -> Iterator[Browser]:
    """The test process's Chromium, for a test that opens tabs of its own."""
    with page_session.lend() as browser:
        yield browser


@pytest.fixture
def shared_tab(page_session: PageSession) -> Iterator[Page]:
    """The test process's one shared tab, for a test that needs no tab of its own
    (``tab_at`` sizes it and leaves it blank)."""
    with page_session.lend():
        yield page_session.tab()


@contextlib.contextmanager
def tab_at(tab: Page, viewport: ViewportSize) -> Iterator[Page]:
    """``tab`` sized to ``viewport``; left on about:blank, so the test's page (and any
    WebSocket it opened) is gone before the test's server stops."""
    tab.set_viewport_size(viewport)
    try:
        yield tab
    finally:
        tab.goto("about:blank")


@contextlib.contextmanager
def tab_reaching_only(tab: Page, viewport: ViewportSize, prefix: str) -> Iterator[Page]:
    """``tab_at``, failing the test if the page requested a URL not starting with ``prefix``."""
    requests: list[str] = []

    def request(request: Request) -> None:
        requests.append(request.url)

    with tab_at(tab, viewport) as page:
        page.on("request", request)
        try:
            yield page
            assert all(url.startswith(prefix) for url in requests), f"the page reached out: {requests}"
        finally:
            page.remove_listener("request", request)
