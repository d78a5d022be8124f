"""The review page's tests (test_review_page.py, test_review_served.py) share one headless
Chromium: ``browser``, for this package."""

from __future__ import annotations

from tests.harness.browser_support import browser

__all__ = ["browser"]  # a fixture, requested by name (and pyflakes sees it used)
