"""The refusal to freeze a mock fallback reply, apart from syrupy: what the ``golden``
assertion (``harness.golden.assertion``) and the review (``harness.golden.review``) raise
when a run got the mock's fallback reply. The mock's findings (``mockllm._verdict``,
counted apart from the journal) and each journal entry's typed ``outcome`` say so; no
reply text is searched for a prefix. This module imports no syrupy, so that a review
that refuses a golden does not load it (nor pytest).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from harness.exceptions import HarnessError
from mockllm import Findings, JournalEntry, Outcome, ProblemKind

__all__ = ["FallbackRefusal", "FallbackRefused", "fallback_evidence"]

Journal = Callable[[], Sequence[JournalEntry]]
FindingsSource = Callable[[], "Findings | None"]


class FallbackRefused(HarnessError, AssertionError):
    """A golden would have recorded a mock fallback reply."""


def fallback_evidence(journal: Sequence[JournalEntry] = (), findings: Findings | None = None) -> list[str]:
    """Which requests got the fallback reply: from ``findings`` (which never forget)
    when given, else from the ``journal`` entries' outcome."""
    if findings is not None:
        shown = [p for p in findings.problems if p.kind is ProblemKind.FALLBACK]
        evidence = [f"  {p.summary}" for p in shown]
        hidden = findings.counts.get(ProblemKind.FALLBACK, 0) - len(shown)
        if hidden > 0:
            evidence.append(f"  ... and {hidden} more")
        return evidence
    return [
        f"  request {e.index} ({e.method} {e.path}): fallback reply, {e.fallback_reason}"
        for e in journal
        if e.outcome is Outcome.FALLBACK
    ]


@dataclass(frozen=True)
class FallbackRefusal:
    """Whether a golden may freeze a run that got the mock's fallback reply, and where the
    evidence is read: the mock's ``findings`` (which never forget), else its ``journal``."""

    journal: Journal | None = None
    findings: FindingsSource | None = None
    allow_fallback: bool = False

    def check(self) -> None:
        """``FallbackRefused``, naming the requests, if the run got the fallback reply and
        fallbacks are not allowed."""
        if self.allow_fallback:
            return
        found = self.findings() if self.findings else None
        evidence = fallback_evidence(self.journal() if self.journal else (), found)
        if evidence:
            raise FallbackRefused(
                "golden refused: the run got the mock's fallback reply, so the golden would freeze a reply "
                "nobody scripted:\n" + "\n".join(evidence) + "\nScript a step for every model call (see the "
                "reason above), or allow fallbacks with @pytest.mark.mockllm(allow_fallback=True) "
                "(allow_fallback: true in a scenario file)."
            )
