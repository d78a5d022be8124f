"""``mockllm.explain``: why the mock answers a request the way it does."""

from __future__ import annotations

import json
from typing import Any

from mockllm.conversation import PROTOCOLS
from mockllm.selection import Selection, select

__all__ = ["explain"]

_PROTOCOL_ALIASES = {
    "openai": "openai-chat",
    "chat": "openai-chat",
    "chat-completions": "openai-chat",
    "anthropic": "anthropic-messages",
    "messages": "anthropic-messages",
    "responses": "openai-responses",
}


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
    protocol = _PROTOCOL_ALIASES.get(protocol, protocol)
    if protocol not in PROTOCOLS:
        raise ValueError(f"unknown protocol {protocol!r}; use one of {list(PROTOCOLS)}")
    if isinstance(body, (str, bytes)):
        try:
            body = json.loads(body)
        except (ValueError, RecursionError) as exc:  # RecursionError: absurdly deep nesting
            return Selection(protocol, chain_found=False, instruction=None,
                             fallback_reason=f"the request body is not valid JSON: {exc}")
    return select(body, protocol)
