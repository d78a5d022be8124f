"""What the chain service refuses in a request body before validating it: nesting past a
limit, a lone UTF-16 surrogate, a non-finite number. None of them could be stored or
sent back as JSON.

Each check walks the value without recursion, so any depth the JSON parser accepted is
safe. (The mock applies the same checks to the bodies it receives, in its own module:
the systems know nothing of the mock.)
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

__all__ = ["nested_deeper_than", "non_finite_path", "surrogate_path"]

_SURROGATE = re.compile("[\ud800-\udfff]")
_KEY_SHOWN = 40


def _shown_key(key: Any) -> str:
    """A key as a path shows it: text that encodes as UTF-8, at most ``_KEY_SHOWN`` characters."""
    text = key if isinstance(key, str) else str(key)
    if len(text) > _KEY_SHOWN:
        text = text[: _KEY_SHOWN - 3] + "..."
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _path_of_first(value: Any, found: Callable[[Any], bool]) -> str | None:
    """The path (``a.b[2]``) of the first key or leaf in ``value`` for which ``found`` holds."""
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        item, path = stack.pop()
        if isinstance(item, dict):
            for key, sub in item.items():
                if found(key):
                    return f"{path}.{_shown_key(key)}" if path else _shown_key(key)
                stack.append((sub, f"{path}.{key}" if path else str(key)))
        elif isinstance(item, list):
            stack.extend((sub, f"{path}[{i}]") for i, sub in enumerate(item))
        elif found(item):
            return path or "(the whole value)"
    return None


def nested_deeper_than(value: Any, limit: int) -> bool:
    """Whether ``value`` nests arrays and objects more than ``limit`` levels deep."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            if depth > limit:
                return True
            stack.extend((sub, depth + 1) for sub in (item.values() if isinstance(item, dict) else item))
    return False


def surrogate_path(value: Any) -> str | None:
    """Where ``value`` holds a string with a lone UTF-16 surrogate (not encodable as UTF-8)."""
    return _path_of_first(value, lambda item: isinstance(item, str) and _SURROGATE.search(item) is not None)


def non_finite_path(value: Any) -> str | None:
    """Where ``value`` holds ``Infinity``, ``-Infinity``, ``NaN`` or an overflowing number."""
    return _path_of_first(value, lambda item: isinstance(item, float) and not math.isfinite(item))
