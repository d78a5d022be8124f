"""The review as a report, for a pull-request comment or a CI artifact.

``render_markdown`` lists each changed golden with its changed rows as a ``diff`` block
(``-`` the golden before, ``+`` after); ``render_json`` holds the same and both full
texts, so ``python -m harness review --from REPORT.json`` can replay the review on a
reviewer's machine and write what they accept. Both come from ``python -m harness
review --format markdown|json`` and from ``pytest --mockllm-review-report PATH``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.exceptions import HarnessError
from harness.golden.review.changes import GoldenChange
from harness.golden.review.decisions import GoldenDecisions
from harness.golden.review.wording import count, goldens_differ

__all__ = ["REPORT_FORMAT", "ReportError", "load_report", "render_json", "render_markdown"]

REPORT_FORMAT = "mockllm-golden-review"
_VERSION = 1


class ReportError(HarnessError, ValueError):
    """A review report that cannot be read back."""


def _status(review: GoldenDecisions) -> str:
    return review.change.status


def render_markdown(reviews: Sequence[GoldenDecisions], *, against: str = "") -> str:
    """The changed goldens and their changed rows, as Markdown (see module docstring)."""
    lines = [f"## Golden review: {goldens_differ(len(reviews), against)}", ""]
    for review in reviews:
        lines.append(f"### `{review.path}` ({_status(review)}, {count(len(review.hunks), 'change')})")
        lines.append("")
        if any(h.records_fallback for h in review.hunks):
            lines += ["> **Records the mock's fallback reply**: the review refuses to accept it.", ""]
        body = []
        for hunk in review.hunks:
            body += [f"- {line}" for line in hunk.before] + [f"+ {line}" for line in hunk.after]
        longest = max((len(run) for line in body for run in re.findall(r"`+", line)), default=0)
        fence = "`" * max(3, longest + 1)
        lines += [f"{fence}diff", *body, fence, ""]
    if reviews:
        lines.append(
            "Accept or reject each change with `python -m harness review` (in a browser) or "
            "`python -m harness review --terminal`."
        )
    return "\n".join(lines).rstrip("\n") + "\n"


def render_json(reviews: Sequence[GoldenDecisions], *, against: str = "") -> str:
    """The report as JSON: a summary, and per golden its texts and changed rows."""
    goldens: list[dict[str, Any]] = [
        {
            "path": review.path,
            "status": _status(review),
            "records_fallback": any(h.records_fallback for h in review.hunks),
            "before": review.change.before,
            "after": review.change.after,
            "changes": [
                {"key": h.key, "state": h.state, "before": list(h.before), "after": list(h.after)} for h in review.hunks
            ],
        }
        for review in reviews
    ]
    document = {
        "format": REPORT_FORMAT,
        "version": _VERSION,
        "summary": goldens_differ(len(reviews), against),
        "goldens": goldens,
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def load_report(path: Path | str, root: Path | str) -> list[GoldenChange]:
    """The changes a JSON report holds, their files found from ``root``."""
    path = Path(path)
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ReportError(f"cannot read the review report {path}: {exc.strerror or exc}") from exc
    except ValueError as exc:
        raise ReportError(f"{path} is not a JSON review report ({exc}); write one with --format json") from exc
    if not isinstance(document, dict) or document.get("format") != REPORT_FORMAT:
        raise ReportError(
            f'{path} is not a golden review report (no "format": {REPORT_FORMAT!r}); write one with '
            "python -m harness review --format json or pytest --mockllm-review-report PATH.json"
        )
    changes = []
    for i, golden in enumerate(document.get("goldens") or []):
        try:
            name, before, after = golden["path"], golden["before"], golden["after"]
        except (KeyError, TypeError):
            raise ReportError(f"{path}: golden {i} lacks its path, before or after") from None
        if not isinstance(name, str) or not all(isinstance(t, (str, type(None))) for t in (before, after)):
            raise ReportError(f"{path}: golden {i} has a path or text that is not a string")
        file = (Path(root) / name).resolve()
        if not file.is_relative_to(Path(root).resolve()):
            raise ReportError(f"{path}: golden {i} ({name!r}) is outside {root}; a review writes only under it")
        changes.append(GoldenChange(name, before, after, file))
    return changes
