"""Strict mode: a test fails when the mock answered a request nobody scripted.

The mock answers a request it has no instruction for with a 200 fallback reply (no
chain, past the end of the chain, a malformed chain, an invalid instruction) and answers
a request a real provider would refuse with a 4xx. Outside pytest that is what a client
should get; inside a test it means the test is not testing what it scripted, so the
plugin fails the test at teardown listing each such request, the way pytest-httpx fails
on "no response can be found for … amongst: …". The journal already records why each
request was answered as it was; this module only reads it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from harness.exceptions import HarnessError
from mockllm import JournalEntry

__all__ = ["UnscriptedRequestsError", "assert_all_requests_scripted", "unscripted"]


class UnscriptedRequestsError(HarnessError, AssertionError):
    """Requests got the mock's fallback reply or an unscripted 4xx."""


def unscripted(journal: Iterable[JournalEntry]) -> list[JournalEntry]:
    """The entries answered by no script: fallbacks and unscripted 4xx rejections."""
    return [
        entry
        for entry in journal
        if entry.fallback_reason is not None
        or (400 <= entry.status < 500 and not (entry.error or "").startswith("scripted"))
    ]


def _describe(entry: JournalEntry) -> str:
    turn = f", turn {entry.turn_index}" if entry.turn_index is not None else ""
    head = f"  - {entry.method} {entry.path} (request {entry.index}{turn})"
    if entry.fallback_reason is not None:
        lines = [f"{head}: fallback reply, {entry.fallback_reason}"]
        explanation = entry.explanation or ""
        lines.extend(f"      {line}" for line in explanation.splitlines())
        return "\n".join(lines)
    return f"{head}: rejected with {entry.status}: {entry.error}"


def assert_all_requests_scripted(journal: Iterable[JournalEntry], scripts: Sequence[str] = ()) -> None:
    """Fail listing every request no script answered; ``scripts`` names the registered
    scripts, shown as the candidates."""
    missed = unscripted(journal)
    if not missed:
        return
    listing = "\n".join(_describe(entry) for entry in missed)
    if scripts:
        candidates = "No registered script matched them, amongst:\n" + "\n".join(f"  - {s}" for s in scripts)
    else:
        candidates = "No script is registered (mockllm._parsing) to answer requests without instruction tags."
    raise UnscriptedRequestsError(
        f"{len(missed)} request(s) to the mock were answered by no script:\n{listing}\n{candidates}\n"
        "Script every model call the code makes (an instruction chain in a user message, or "
        "mockllm.script(chain, match=...)), or allow this with "
        "@pytest.mark.mockllm(allow_fallback=True)."
    )
