"""The review in a terminal (``python -m harness review --terminal``): one prompt per
change — ``a``ccept, ``r``eject, ``s``kip, ``q``uit — each decision written at once.

A skipped change keeps what the file holds; quitting (or the end of input) keeps every
change not yet decided as it is.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TextIO

from harness.golden.refusal import FallbackRefused
from harness.golden.review.decisions import ACCEPT, REJECT, GoldenDecisions, Hunk
from harness.golden.review.wording import count, goldens_differ

__all__ = ["review_in_terminal"]

_PROMPT = "[a]ccept, [r]eject, [s]kip, [q]uit? "
_ANSWERS = {"a": ACCEPT, "accept": ACCEPT, "r": REJECT, "reject": REJECT, "s": "skip", "skip": "skip"}


def _show(hunk: Hunk, out: TextIO) -> None:
    for line in hunk.before:
        out.write(f"  - {line}\n")
    for line in hunk.after:
        out.write(f"  + {line}\n")
    if hunk.records_fallback:
        out.write("  (records the mock's fallback reply: it cannot be accepted)\n")


def review_in_terminal(
    reviews: Sequence[GoldenDecisions], *, ask: Callable[[str], str] = input, out: TextIO, against: str = ""
) -> int:
    """Ask about every change of ``reviews``; returns the number of goldens written."""
    out.write(f"{goldens_differ(len(reviews), against)}.\n")
    written: set[str] = set()
    quit_ = False
    for review in reviews:
        if quit_:
            break
        out.write(f"\n{review.path} ({review.change.status}, {count(len(review.hunks), 'change')})\n")
        for number, hunk in enumerate(review.hunks, 1):
            out.write(f"change {number} of {len(review.hunks)} ({hunk.state}):\n")
            _show(hunk, out)
            while True:
                try:
                    answer = ask(_PROMPT).strip().lower()
                except (EOFError, OSError):  # no input to read: stop, keeping what is undecided
                    answer = "q"
                if answer in ("q", "quit"):
                    quit_ = True
                    break
                decision = _ANSWERS.get(answer)
                if decision is None:
                    out.write("  answer a, r, s or q\n")
                    continue
                if decision == "skip":
                    break
                try:
                    review.decide(hunk.key, decision)
                except FallbackRefused as exc:
                    out.write(f"  {str(exc).splitlines()[0]}\n")
                    continue
                if review.write():
                    written.add(review.path)
                break
            if quit_:
                break
    out.write("\n" + "\n".join(review.summary() for review in reviews) + "\n")
    out.write(f"{count(len(written), 'golden')} written.\n")
    return len(written)
