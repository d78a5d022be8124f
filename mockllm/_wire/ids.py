"""The ids the wire codecs mint from a reply's ``response_id``.

Every reply's ids derive from its plan's ``response_id`` (24 hex digits, a pure function
of the seed and the request): OpenAI Chat's ``chatcmpl-<id>``, Anthropic's ``msg_<id>``,
the Responses API's ``resp_<id>`` and its output items ``rs_<id>_<n>``, ``msg_<id>_<n>``,
``fc_<id>_<n>``, Gemini's bare ``<id>``. The codecs make them with the prefixes below, and
``mockllm._wire.minted`` (``MintedIds``) reads them back with the same prefixes: one
place knows the forms.
"""

from __future__ import annotations

__all__ = [
    "CHAT_COMPLETION_PREFIX",
    "ITEM_PREFIXES",
    "MESSAGE_PREFIX",
    "RESPONSE_PREFIX",
    "output_item_id",
]

CHAT_COMPLETION_PREFIX = "chatcmpl-"
"""OpenAI Chat's completion id: ``chatcmpl-<response_id>``."""
MESSAGE_PREFIX = "msg_"
"""Anthropic's message id (``msg_<response_id>``); a Responses message item's too."""
RESPONSE_PREFIX = "resp_"
"""The Responses API's response id: ``resp_<response_id>``."""
ITEM_PREFIXES = {"reasoning": "rs_", "message": MESSAGE_PREFIX, "function_call": "fc_"}
"""The Responses API's output items by type: ``<prefix><response_id>_<output index>``."""


def output_item_id(kind: str, response_id: str, index: int) -> str:
    """The id of a Responses output item of ``kind`` (``reasoning``, ``message``,
    ``function_call``) at ``index``: ``rs_<id>_<n>``, ``msg_<id>_<n>``, ``fc_<id>_<n>``."""
    return f"{ITEM_PREFIXES[kind]}{response_id}_{index}"
