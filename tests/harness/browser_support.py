"""Headless Chromium for the page tests: Debian's /usr/bin/chromium, never a downloaded
browser. Without it the tests skip, unless HARNESS_REQUIRE_BROWSER=1 (CI), where they fail.
Screenshots go to ``test-artifacts/``."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, sync_playwright

CHROMIUM = Path("/usr/bin/chromium")
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
    if not CHROMIUM.exists():
        reason = (
            f"Debian's chromium is not installed at {CHROMIUM}: install it with "
            "`apt-get update && apt-get install -y chromium` (with sudo if not root)"
        )
        if os.environ.get("HARNESS_REQUIRE_BROWSER") == "1":
            pytest.fail(f"HARNESS_REQUIRE_BROWSER=1 but {reason}")
        pytest.skip(reason)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """Headless Chromium for this module's tests."""
    with launched_chromium() as launched:
        yield launched
