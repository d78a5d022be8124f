"""``--mockllm-review-report PATH``: at the end of a run whose goldens differ, the review
report (``harness.golden.review.report``): JSON for a ``.json`` path, else Markdown.

pytest with syrupy writes nothing unless ``--snapshot-update``; the text each failing
``golden`` assertion asserted is exactly what ``--snapshot-update`` would have written,
so the report keeps it as the change's "after" side, and ``python -m harness review
--from PATH.json`` writes only what a reviewer accepts. Under pytest-xdist each worker
hands its changes to the controller, which writes the one report.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

__all__ = ["REVIEW_REPORT_OPTION", "ReviewReport", "add_review_report_option", "register_review_report"]

REVIEW_REPORT_OPTION = "--mockllm-review-report"
_WORKER_KEY = "mockllm_review_changes"


def add_review_report_option(group: Any) -> None:
    group.addoption(
        REVIEW_REPORT_OPTION,
        default=None,
        metavar="PATH",
        help="write the golden review report here when goldens differ (JSON for a .json path, else Markdown)",
    )


class ReviewReport:
    """Collects the run's failing golden assertions; writes the report at the end."""

    def __init__(self, config: pytest.Config, path: Path) -> None:
        self.config = config
        self.path = path
        self.changes: dict[str, tuple[str | None, str]] = {}

    def _collect_own(self) -> None:
        syrupy = getattr(self.config, "_syrupy", None)
        report = getattr(syrupy, "report", None)
        if report is None:
            return
        from harness.golden.extension import GoldenExtension

        root = self.config.rootpath
        for assertion in report.assertions:
            if not isinstance(assertion.extension, GoldenExtension):
                continue
            for result in assertion.executions.values():
                if result.success or not isinstance(result.asserted_data, str):
                    continue
                location = Path(result.snapshot_location)
                name = str(location.relative_to(root)) if location.is_relative_to(root) else str(location)
                before = result.recalled_data if isinstance(result.recalled_data, str) else None
                # One golden, several items (a scenario's protocols): the first one's text.
                self.changes.setdefault(name, (before, result.asserted_data))

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        for name, before, after in getattr(node, "workeroutput", {}).get(_WORKER_KEY, []):
            self.changes.setdefault(name, (before, after))

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        self._collect_own()
        workeroutput = getattr(self.config, "workeroutput", None)
        if workeroutput is not None:  # an xdist worker: the controller writes the report
            workeroutput[_WORKER_KEY] = [(name, *texts) for name, texts in self.changes.items()]
            return
        if not self.changes:
            return
        from harness.golden.review.changes import GoldenChange
        from harness.golden.review.decisions import GoldenDecisions
        from harness.golden.review.report import render_json, render_markdown

        reviews = []
        for name, (before, after) in sorted(self.changes.items()):
            reviews.append(GoldenDecisions(GoldenChange(name, before, after)))
        render = render_json if self.path.suffix == ".json" else render_markdown
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(render(reviews), encoding="utf-8")

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.changes and not hasattr(self.config, "workeroutput"):
            terminalreporter.write_line(f"mockllm: golden review report written to {self.path}")


def register_review_report(config: pytest.Config) -> None:
    """Register the collector when the option is given."""
    path = config.getoption(REVIEW_REPORT_OPTION, default=None)
    if path:
        config.pluginmanager.register(ReviewReport(config, Path(path).resolve()), "mockllm-review-report")
