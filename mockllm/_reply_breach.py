"""A scripted reply no real provider could give to its request, as the journal keeps it.

A provider cuts a reply at the request's output-token limit and says so (``length``,
``max_tokens``, ``MAX_TOKENS``, ``incomplete``), and its strict structured output always
fits the request's schema. A script may say anything, so a test could exercise a branch
production never reaches (a whole reply past the limit, text the schema refuses) and
pass. ``mockllm._reply_check`` finds such a reply; the engine records it on the journal
entry (``JournalEntry.impossible_reply``), and the verdict fails on it
(``impossible_reply``, opt-out ``allow_impossible_replies``).
"""

from __future__ import annotations

from enum import Enum

from pydantic import BaseModel, ConfigDict

__all__ = ["ImpossibleReply", "ReplyBreach"]


class ReplyBreach(str, Enum):
    """How a scripted reply breaks what its request lets a provider say."""

    OVER_OUTPUT_LIMIT = "over_output_limit"
    """Longer than the request's output-token limit, and not scripted as cut there."""
    BREAKS_OUTPUT_FORMAT = "breaks_output_format"
    """Text that breaks the request's strict structured output (its JSON schema, JSON mode)."""


class ImpossibleReply(BaseModel):
    """One way a scripted reply is one no provider could give: ``breach`` says which,
    ``reason`` says it in a sentence; for a reply over the limit, ``output_tokens`` (by the
    mock's own rule, what its usage reports) and the request's ``limit``."""

    # Built on first use, not at import: a server that has answered nothing needs none.
    model_config = ConfigDict(defer_build=True)

    breach: ReplyBreach
    reason: str
    output_tokens: int | None = None
    limit: int | None = None
