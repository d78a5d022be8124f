"""Quoting a user's words into a system's own prompts.

Text fenced by a pair of special tokens, ``<|name_start|>`` … ``<|name_end|>``, is
control markup addressed to the model that received it (chat templates spell their
control tokens this way), not words to repeat. A system that quotes a user's query into
a prompt of its own — a planner re-sending it, a routing prompt citing it, a chat
history export showing it — drops such spans first, so a quoted copy never carries
another party's control markup to a second model call.

This is prompt hygiene that any LLM application needs; it names no token in particular.
"""

from __future__ import annotations

import re

__all__ = ["quotable"]

_CONTROL_SPAN = re.compile(r"<\|(\w+)_start\|>.*?<\|\1_end\|>", re.S)


def quotable(text: str) -> str:
    """``text`` without its control-markup spans, stripped of surrounding whitespace."""
    return _CONTROL_SPAN.sub("", text).strip()
