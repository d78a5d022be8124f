"""The golden review page: every golden that differs from git HEAD, side by side, as
one static HTML file (``python -m harness review``).

``changes`` finds the changed goldens and reads both versions; ``rows`` parses a
golden's table and pairs its rows; ``page`` renders the HTML.
"""

from harness.golden.review.changes import GoldenChange, changed_goldens
from harness.golden.review.page import render_review_page

__all__ = ["GoldenChange", "changed_goldens", "render_review_page"]
