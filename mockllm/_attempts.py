"""Which attempt of a request this is, for an instruction's ``error.times``.

Two rules, in order:

- ``header``: the SDKs (openai, anthropic, LangChain on top of them) number every
  attempt in ``x-stainless-retry-count`` (0, 1, …). When the header is there, it wins.
- ``repeat``: clients that retry on their own (plain httpx loops, the Vercel AI SDK,
  LiteLLM's Anthropic provider) send no such header; the Nth identical request (same
  path, same body bytes) answered by a scripted error is attempt N-1.

The ``repeat`` counts live in the mock's state (bounded, oldest forgotten first in
memory; cleared by ``MockLLM.reset``): the workers of ``serve --workers`` and replicas
on one Redis count together (``mockllm._state``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Literal

from mockllm._state import MemoryState, State

__all__ = ["AttemptCounter", "AttemptRule", "RETRY_COUNT_HEADER"]

RETRY_COUNT_HEADER = "x-stainless-retry-count"
AttemptRule = Literal["header", "repeat"]


def _header_attempt(headers: Mapping[str, str]) -> int | None:
    value = headers.get(RETRY_COUNT_HEADER)
    if value is None:
        return None
    try:
        return max(0, int(value))
    except ValueError:
        return None


class AttemptCounter:
    """Counts identical requests that met a scripted error; at most ``size`` distinct ones."""

    def __init__(self, size: int = 1000, *, state: State | None = None) -> None:
        where = state if state is not None else MemoryState()
        self._seen = where.counters("attempts", max_keys=size)

    def attempt(
        self, path: str, headers: Mapping[str, str], body: bytes, *, scripted_error: bool
    ) -> tuple[int, AttemptRule | None]:
        """This request's attempt number and the rule that gave it (None: no header and
        no scripted error, so attempt 0 and nothing counted).

        Only requests answered by an instruction with an ``error`` are counted: a
        request that no fault answers has nothing to retry.
        """
        from_header = _header_attempt(headers)
        if from_header is not None:
            return from_header, "header"
        if not scripted_error:
            return 0, None
        key = hashlib.blake2b(path.encode() + b"\0" + body, digest_size=16).hexdigest()
        return self._seen.incr(key) - 1, "repeat"

    def clear(self) -> None:
        self._seen.clear()
