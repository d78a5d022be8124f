"""``python -m harness review``: the goldens that differ, to accept or reject.

    python -m harness review [PATH] [--from REPORT.json [--root DIR]]
        [--terminal | --static [DIR] | --format markdown|json] [--output FILE] [--port N]

The changes come from git (each golden under PATH, default ``golden/``, against HEAD:
the working tree after ``--snapshot-update``) or from a JSON report
(``pytest --mockllm-review-report PATH.json``: the goldens a run compared, and the text
it asserted). By default the review is served on 127.0.0.1 with accept / reject buttons;
``--terminal`` asks in the terminal; ``--static`` writes the read-only page (into a
temporary folder unless DIR or ``--output`` says where); ``--format`` prints a report.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from harness.command_line import Arg, OneOf

__all__ = ["REVIEW_ARGUMENTS", "run_review"]


REVIEW_ARGUMENTS = (
    Arg("path", nargs="?", default="golden", help="a golden file or folder (default golden/)"),
    Arg(
        "--from", dest="report", metavar="REPORT.json", help="review the changes of a JSON review report instead of git"
    ),
    Arg("--root", default=".", help="where a report's golden paths start (default: here)"),
    OneOf(
        Arg("--terminal", action="store_true", help="ask about each change in the terminal"),
        Arg(
            "--static",
            nargs="?",
            const="",
            default=None,
            metavar="DIR",
            help="write the read-only page into DIR (default: a new temporary folder)",
        ),
        Arg("--format", choices=("markdown", "json"), help="print a report for a pull request or CI"),
    ),
    Arg("--output", "-o", metavar="FILE", help="write the page or report to FILE"),
    Arg("--port", type=int, default=0, help="the served review's port (default: a free one)"),
)
"""The ``review`` verb's arguments (``harness.command_line``)."""


def _fail(message: str) -> int:
    print(f"harness review: {message}", file=sys.stderr)
    return 2


def run_review(args: argparse.Namespace) -> int:
    """accept or reject golden changes (served page, terminal) or report them

    Reviews the goldens that differ (from git HEAD, or a pytest report given with --from): a page served
    on loopback by default, --terminal to decide in the terminal, --static for a page to keep,
    --format markdown|json for a report.
    """
    from harness.exceptions import HarnessError
    from harness.golden.review.changes import changed_goldens
    from harness.golden.review.decisions import open_decisions
    from harness.golden.review.report import load_report, render_json, render_markdown

    against = "" if args.report else " from git HEAD"
    try:
        changes = load_report(args.report, args.root) if args.report else changed_goldens(args.path)
        reviews = open_decisions(changes)
    except HarnessError as exc:
        return _fail(str(exc))
    if args.format:
        text = (render_json if args.format == "json" else render_markdown)(reviews, against=against)
        if args.output:
            Path(args.output).write_text(text, encoding="utf-8")
        else:
            sys.stdout.write(text)
        return 0
    if args.static is not None or (args.output and not args.terminal):
        from harness.golden.review.page import render_review_page

        if args.output:
            output = Path(args.output)
        else:
            folder = Path(args.static) if args.static else Path(tempfile.mkdtemp(prefix="golden-review-"))
            folder.mkdir(parents=True, exist_ok=True)
            output = folder / "golden-review.html"
        output.write_text(render_review_page(changes, against=against), encoding="utf-8")
        print(f"harness review: {_differ(len(changes), against)}; wrote {output}")
        return 0
    if not reviews:
        print(f"harness review: {_differ(0, against)}; nothing to review.")
        return 0
    if args.terminal:
        from harness.golden.review.terminal import review_in_terminal

        review_in_terminal(reviews, out=sys.stdout, against=against)
        return 0
    from harness.golden.review.server import ReviewServer

    try:
        server = ReviewServer(reviews, port=args.port, against=against)
    except OSError as exc:
        return _fail(f"cannot listen on 127.0.0.1:{args.port}: {exc.strerror or exc}; pick another --port")

    def announce() -> None:
        print(f"harness review: {_differ(len(reviews), against)}; review them at", flush=True)
        print(f"  {server.url}", flush=True)
        print("  (Finish the review on the page, or Ctrl+C, to stop.)", flush=True)

    server.run(on_ready=announce)  # a Ctrl+C from the banner on ends it quietly
    print("\n".join(server.summary()), flush=True)
    return 0


def _differ(number: int, against: str) -> str:
    from harness.golden.review.wording import goldens_differ

    return goldens_differ(number, against)
