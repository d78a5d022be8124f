"""The golden review: every golden that differs, to accept or reject change by change,
or to report (``python -m harness review``; docs/goldens.md).

``changes`` finds the changed goldens (git) and ``report`` reads and writes review
reports; ``rows`` parses a golden's table and pairs its rows; ``decisions`` applies
accept / reject; ``page`` renders the HTML, ``server`` serves it, ``terminal`` asks in a
terminal, ``cli`` is the verb. Imported lazily: ``python -m harness`` loads none of it
(nor syrupy) until the review runs.
"""

from __future__ import annotations

from typing import Any

__all__ = ["GoldenChange", "GoldenDecisions", "changed_goldens", "render_review_page"]


def __getattr__(name: str) -> Any:
    if name in ("GoldenChange", "changed_goldens"):
        from harness.golden.review import changes

        return getattr(changes, name)
    if name == "GoldenDecisions":
        from harness.golden.review.decisions import GoldenDecisions

        return GoldenDecisions
    if name == "render_review_page":
        from harness.golden.review.page import render_review_page

        return render_review_page
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
