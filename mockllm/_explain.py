"""``mockllm._explain``: why the mock answers a request the way it does.

``read_conversation`` and ``select`` are the steps ``explain`` and the engine take: the
protocol's codec reads the body into the neutral conversation, and selection scans it.
"""

from __future__ import annotations

import json
from typing import Any

from mockllm._conversation import Conversation
from mockllm._selection import Selection, select_in_conversation
from mockllm._wire.registry import codec_named

__all__ = ["explain", "read_conversation", "select"]


def read_conversation(body: Any, protocol: str) -> Conversation:
    """The neutral conversation of a parsed request ``body`` written in ``protocol``."""
    return codec_named(protocol).read(body)


def select(body: Any, protocol: str) -> Selection:
    """Select the instruction for a parsed request ``body`` written in ``protocol``.

    Never raises on malformed bodies; an unknown ``protocol`` is a ``ValueError``.
    """
    codec = codec_named(protocol)
    return select_in_conversation(codec.read(body), codec.name)


def explain(body: dict[str, Any] | str | bytes, protocol: str = "openai-chat") -> Selection:
    """Which instruction a request would run, and why.

    ``body`` is the request body (a dict, or its JSON text); ``protocol`` is one of
    ``openai-chat``, ``anthropic-messages``, ``openai-responses`` (or the short names
    ``openai``, ``anthropic``, ``responses``). The result prints as a short report::

        >>> print(mockllm.explain(request_body, "anthropic"))
        protocol: anthropic-messages
        chain: chain of 3 [1f0c9a2e] in message 0
        turn index: 1 (1 assistant turns counted)
        runs: instruction 'fetch'
    """
    codec = codec_named(protocol)
    if isinstance(body, (str, bytes)):
        try:
            body = json.loads(body)
        except (ValueError, RecursionError) as exc:  # RecursionError: absurdly deep nesting
            return Selection(
                codec.name,
                chain_found=False,
                instruction=None,
                fallback_reason=f"the request body is not valid JSON: {exc}",
            )
    return select_in_conversation(codec.read(body), codec.name)
