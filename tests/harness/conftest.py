"""The page tests' headless Chromium: one browser and one tab per test process, shared by
the progress page tests (systems/service) and the golden review page tests (golden)."""

from tests.harness.browser_support import browser, page_session, shared_tab

__all__ = ["browser", "page_session", "shared_tab"]  # fixtures, requested by name (and pyflakes sees them used)
