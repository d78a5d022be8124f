"""Request parameters of the wrong JSON type, as the providers refuse them.

The SDKs never send ``"stream": "yes"`` or ``"max_tokens": "ten"``; a raw HTTP client
can, and the real APIs answer it with a 400 naming the parameter. Each codec lists the
parameters its provider checks and words the refusal its provider's way (OpenAI:
``Invalid type for 'stream': expected a boolean, but got a string instead.``; Anthropic:
``stream: Input should be a valid boolean``). ``null`` is the parameter left out.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

__all__ = ["Kind", "json_type", "wrong_type"]

Kind = Literal["boolean", "integer", "decimal"]
"""What a parameter holds: a JSON boolean, an integer, or any number."""


def _fits(kind: Kind, value: Any) -> bool:
    if isinstance(value, bool):
        return kind == "boolean"
    if kind == "integer":
        return isinstance(value, int)
    return kind == "decimal" and isinstance(value, (int, float))


def wrong_type(body: Mapping[str, Any], expected: Mapping[str, Kind]) -> tuple[str, Kind, Any] | None:
    """The first parameter of ``expected`` (in its order) that ``body`` gives with a
    value of another type: ``(name, kind expected, value)``; None when all fit."""
    for name, kind in expected.items():
        value = body.get(name)
        if value is not None and not _fits(kind, value):
            return name, kind, value
    return None


def json_type(value: Any) -> str:
    """The JSON type name OpenAI uses in its "Invalid type" messages (``a string``)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a decimal"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"
