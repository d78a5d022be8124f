"""The review page's tests (test_review_page.py, test_review_served.py) share one headless
Chromium: a launch costs about 1.8 s of CPU (Chromium and Playwright's driver)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser

from tests.harness.browser_support import launched_chromium


@pytest.fixture(scope="package")
def browser() -> Iterator[Browser]:
    """Headless Chromium for this package's tests."""
    with launched_chromium() as launched:
        yield launched
