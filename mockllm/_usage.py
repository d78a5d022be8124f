"""The token counts the mock reports: a rule a test can compute by hand.

- A text of ``n`` characters is ``ceil(n / 4)`` tokens, and never fewer than 1.
- Input tokens: that rule over the compact JSON (``separators=(",", ":")``, non-ASCII
  kept) of an object made of the request's prompt fields, in this order, those present
  only: Chat
  Completions ``messages``, ``tools``; Anthropic Messages ``system``, ``messages``,
  ``tools``; Responses ``instructions``, ``input``, ``tools``. Transport fields
  (``stream``, ``stream_options``, ``max_tokens``…) do not count, so the streamed and
  the non-streamed forms of a request report the same input tokens, and Anthropic's
  ``count_tokens`` gives what ``messages.create`` of the same body reports. A request
  continuing a server-held conversation counts the whole rebuilt history.
- Output tokens: the rule over the reply's reasoning text, its text and each tool call's
  compact JSON arguments, concatenated.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]
from typing import Any

__all__ = ["canonical_json", "prompt_json", "prompt_tokens", "tokens_in", "tokens_in_length"]

CHARS_PER_TOKEN = 4

# ``json.dumps(obj, separators=(",", ":"), ensure_ascii=False, sort_keys=True)``, its
# encoder built once (``json.dumps`` builds one per call when given options). Sorted keys
# change no count (a text's length does not depend on its keys' order) and make the text
# the same for the same conversation however its objects were ordered: a held reply's id
# is made from it (``mockllm._held.held_reply_id``).
_canonical_encoder = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, sort_keys=True)
# Its C part built once too where there is one (``JSONEncoder.encode`` builds it per call,
# with the table that finds cycles, which a parsed body cannot have).
_c_canonical = (
    c_make_encoder(None, _canonical_encoder.default, encode_basestring, None, ":", ",", True, False, True)
    if c_make_encoder is not None
    else None
)


def canonical_json(obj: dict[str, Any]) -> str:
    """A parsed JSON object's compact JSON text, keys sorted, by the encoder built once:
    what the input tokens are counted over, and a cache key for a parsed schema."""
    if _c_canonical is None:
        return _canonical_encoder.encode(obj)
    return "".join(_c_canonical(obj, 0))


def tokens_in(text: str) -> int:
    """``ceil(len(text) / 4)``, at least 1."""
    return tokens_in_length(len(text))


def tokens_in_length(characters: int) -> int:
    """The tokens of a text of ``characters`` characters (the rule of ``tokens_in``)."""
    return max(1, -(-characters // CHARS_PER_TOKEN))


def prompt_json(body: Any, fields: Iterable[str]) -> str:
    """The compact JSON the input tokens are counted over: an object of ``body``'s
    prompt ``fields``, those present, keys sorted ("" for a body that is no object)."""
    if not isinstance(body, dict):
        return ""
    return canonical_json({name: body[name] for name in fields if name in body})


def prompt_tokens(body: Any, fields: Iterable[str]) -> int:
    """Input tokens of a request ``body`` whose prompt is in ``fields``."""
    return tokens_in(prompt_json(body, fields))
