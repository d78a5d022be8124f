"""Accepting or rejecting a golden's changes, as a whole or one changed row at a time.

A change has two texts: ``before`` (git HEAD, or the golden a pytest run compared) and
``after`` (the working tree after ``--snapshot-update``, or the text the run asserted).
Its *hunks* are what a reviewer decides on: the header lines (if they differ) and each
changed, added or removed row of the side-by-side view (``rows.pair_rows``). A new or
deleted golden is one hunk, the whole file.

The golden as decided takes, hunk by hunk, the ``after`` lines of an accepted hunk,
the ``before`` lines of a rejected one, and for an undecided hunk what the file holds
now. So accepting everything writes ``after`` byte for byte — what ``--snapshot-update``
writes — and rejecting everything writes ``before``; nothing else is ever written.

Accepting a hunk that would record the mock's fallback reply is refused, as the
``golden`` assertion refuses it (``harness.golden.assertion``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from harness.exceptions import HarnessError
from harness.golden.refusal import FallbackRefused
from harness.golden.review.changes import GoldenChange
from harness.golden.review.rows import Pair, pair_rows, parse_golden
from harness.golden.review.wording import count
from mockllm.testing import FALLBACK_PREFIX

__all__ = ["ACCEPT", "DECISIONS", "REJECT", "GoldenDecisions", "Hunk", "ReviewConflict", "open_decisions"]

ACCEPT = "accept"
REJECT = "reject"
DECISIONS = (ACCEPT, REJECT)
WHOLE = "golden"
"""The key that decides every hunk of a golden at once."""


class ReviewConflict(HarnessError, RuntimeError):
    """A golden on disk is neither side of its change (edited since the review began)."""


@dataclass(frozen=True)
class Hunk:
    """One decision: ``key`` (``header``, ``row-<n>`` — ``n`` the pair's position in
    the side-by-side view —, or ``golden`` for a whole new or deleted file), its
    ``state`` (``changed``, ``added``, ``removed``, ``header``, ``new``, ``deleted``)
    and its lines on each side."""

    key: str
    state: str
    before: tuple[str, ...]
    after: tuple[str, ...]

    @property
    def records_fallback(self) -> bool:
        """Whether accepting it would put a mock fallback reply into the golden."""
        return any(FALLBACK_PREFIX in line for line in self.after)


def _layout(text: str) -> tuple[list[str], list[str]]:
    """(the lines up to the table's rule, the row lines); all lines if no table."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("───"):
            return lines[: i + 1], lines[i + 1 :]
    return lines, []


def _text(lines: Iterable[str]) -> str:
    return "".join(f"{line}\n" for line in lines)


class GoldenDecisions:
    """One golden's hunks, the decisions taken so far, and the file they are written to."""

    def __init__(self, change: GoldenChange) -> None:
        self.change = change
        self.pairs: list[Pair] = pair_rows(parse_golden(change.before)[1], parse_golden(change.after)[1])
        self.hunks: list[Hunk] = self._hunks()
        self.decisions: dict[str, str] = {}
        # A change with no file (a report's) is read as its "before" side, never written.
        self._written = self._on_disk() if change.file is not None else change.before
        if self._written == change.after:
            self._undecided = "after"
        elif self._written == change.before:
            self._undecided = "before"
        else:
            raise ReviewConflict(
                f"{change.path} holds neither side of its change (it was edited after the changes were "
                "collected): run the tests again, then review."
            )

    @property
    def path(self) -> str:
        return self.change.path

    @property
    def undecided_side(self) -> str:
        """The side an undecided hunk keeps: the one the file held when the review began
        (``after`` for the working tree after ``--snapshot-update``, ``before`` for a report's)."""
        return self._undecided

    def _hunks(self) -> list[Hunk]:
        before, after = self.change.before, self.change.after
        if before is None or after is None:
            state = "new" if before is None else "deleted"
            return [Hunk(WHOLE, state, tuple((before or "").splitlines()), tuple((after or "").splitlines()))]
        hunks = []
        (head_before, _), (head_after, _) = _layout(before), _layout(after)
        if head_before != head_after:
            hunks.append(Hunk("header", "header", tuple(head_before), tuple(head_after)))
        for i, pair in enumerate(self.pairs):
            if pair.state != "same":
                lines = [(pair.before.line,) if pair.before else (), (pair.after.line,) if pair.after else ()]
                hunks.append(Hunk(f"row-{i}", pair.state, *lines))
        # Rows are lines of the text: if the texts do not compose back (not a table, line
        # endings of their own), the golden is decided as a whole.
        if self._compose({}, "after", hunks) != after or self._compose({}, "before", hunks) != before:
            return [Hunk(WHOLE, "changed", tuple(before.splitlines()), tuple(after.splitlines()))]
        return hunks

    def hunk(self, key: str) -> Hunk:
        for hunk in self.hunks:
            if hunk.key == key:
                return hunk
        raise KeyError(f"{self.path} has no change {key!r}; its changes are {[h.key for h in self.hunks]}")

    def _compose(self, decisions: dict[str, str], undecided: str, hunks: Sequence[Hunk]) -> str | None:
        def side(key: str) -> str:
            decision = decisions.get(key) or decisions.get(WHOLE)
            return undecided if decision is None else ("after" if decision == ACCEPT else "before")

        before, after = self.change.before, self.change.after
        if before is None or after is None or any(h.key == WHOLE for h in hunks):
            return after if side(WHOLE) == "after" else before
        head_before, head_after = _layout(before)[0], _layout(after)[0]
        lines = list(head_after if side("header") == "after" else head_before)
        for i, pair in enumerate(self.pairs):
            row = pair.after if pair.state == "same" or side(f"row-{i}") == "after" else pair.before
            if row is not None:
                lines.append(row.line)
        return _text(lines)

    def decide(self, key: str, decision: str | None) -> None:
        """Decide one hunk (or ``golden``: every hunk); ``None`` undoes a decision."""
        if decision not in (*DECISIONS, None):
            raise ValueError(f"a decision is {' or '.join(DECISIONS)} (or None to undo), not {decision!r}")
        hunks = self.hunks if key == WHOLE else [self.hunk(key)]
        if decision == ACCEPT:
            refused = [h for h in hunks if h.records_fallback]
            if refused:
                lines = "\n".join(f"  {line}" for h in refused for line in h.after if FALLBACK_PREFIX in line)
                raise FallbackRefused(
                    f"{self.path}: not accepted, the change records the mock's fallback reply, a reply nobody "
                    f"scripted:\n{lines}\nScript a step for every model call and run the tests again (a test "
                    "that allows fallbacks writes its golden with --snapshot-update)."
                )
        for hunk in hunks:
            if decision is None:
                self.decisions.pop(hunk.key, None)
            else:
                self.decisions[hunk.key] = decision

    def decided_text(self) -> str | None:
        """The golden as decided so far (``None``: no file)."""
        return self._compose(self.decisions, self._undecided, self.hunks)

    def _on_disk(self) -> str | None:
        file = self.change.file
        if file is None:
            raise ValueError(f"{self.path}: this change has no file to write to")
        return file.read_text(encoding="utf-8") if file.exists() else None

    def write(self) -> bool:
        """Write the golden as decided; whether the file changed."""
        target = self.decided_text()
        if self._on_disk() != self._written:
            raise ReviewConflict(f"{self.path} was edited during the review; not overwriting it")
        if target == self._written:
            return False
        file = self.change.file
        assert file is not None
        if target is None:
            file.unlink()
        else:
            file.parent.mkdir(parents=True, exist_ok=True)
            file.write_text(target, encoding="utf-8")
        self._written = target
        return True

    def summary(self) -> str:
        accepted = sum(1 for h in self.hunks if self.decisions.get(h.key) == ACCEPT)
        rejected = sum(1 for h in self.hunks if self.decisions.get(h.key) == REJECT)
        return f"{self.path}: {accepted} accepted, {rejected} rejected of {count(len(self.hunks), 'change')}"


def open_decisions(changes: Sequence[GoldenChange]) -> list[GoldenDecisions]:
    """A decision record per change, each checked against its file on disk."""
    return [GoldenDecisions(change) for change in changes]
