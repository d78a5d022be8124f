"""What a caller of the chain service asks for: ``ChainRequest``, the body every door
(REST, WebSocket, MCP) reads, validated before anything runs."""

from __future__ import annotations

import math
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from harness.systems.chain import PlanStep
from harness.systems.service.errors import BadRequest
from harness.validation_problems import validation_problems

__all__ = ["MAX_NESTING", "ChainRequest"]


class ChainRequest(BaseModel):
    """What a caller asks for: a query, and optionally the steps (else the model plans
    them from the query as the run's first call, told of the data references)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    query: str = Field(min_length=1, alias="planQuery")
    steps: list[PlanStep] | None = None
    max_steps: int = Field(default=20, ge=1, alias="maxSteps")
    chat_config: str | None = Field(default=None, alias="chatConfigName")
    prompt_config: str | None = Field(default=None, alias="promptConfigName")
    chat_config_uri: str | None = Field(default=None, alias="chatConfigUri")
    prompt_config_uri: str | None = Field(default=None, alias="promptConfigUri")
    data_references: list[str] = Field(default_factory=list, alias="dataReferences")
    name: str = "chain"

    @classmethod
    def parse(cls, data: Any) -> ChainRequest:
        """Validate ``data``; a ``BadRequest`` names the field and the problem (nesting
        past ``MAX_NESTING``, lone surrogates and non-finite numbers too: none could be
        stored or sent back as JSON)."""
        problem = _unstorable(data)
        if problem is not None:
            raise BadRequest(f"invalid chain request: {problem}")
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            problems = "; ".join(validation_problems(exc, "body"))
            raise BadRequest(f"invalid chain request: {problems}") from exc


MAX_NESTING = 64
"""Deepest nesting of arrays and objects a chain request may use."""


_SURROGATE = re.compile("[\ud800-\udfff]")
_KEY_SHOWN = 40


def _unstorable(body: Any) -> str | None:
    """What in ``body`` could not be stored or sent back as JSON, and where: nesting past
    ``MAX_NESTING``, a lone UTF-16 surrogate (in a key or a string), a non-finite number;
    ``None`` when there is nothing. One walk, without recursion, so any depth the JSON
    parser accepted is safe."""
    stack: list[tuple[Any, str, int]] = [(body, "body", 1)]
    while stack:
        item, path, depth = stack.pop()
        if isinstance(item, (dict, list)) and depth > MAX_NESTING:
            return f"the body is nested more than {MAX_NESTING} levels deep"
        if isinstance(item, dict):
            for key, sub in item.items():
                if isinstance(key, str) and _SURROGATE.search(key):
                    return _lone_surrogate(f"{path}.{_shown_key(key)}")
                stack.append((sub, f"{path}.{key}", depth + 1))
        elif isinstance(item, list):
            stack.extend((sub, f"{path}[{i}]", depth + 1) for i, sub in enumerate(item))
        elif isinstance(item, str) and _SURROGATE.search(item):
            return _lone_surrogate(path)
        elif isinstance(item, float) and not math.isfinite(item):
            return f"{path}: is not a finite number (JSON has no Infinity or NaN)"
    return None


def _lone_surrogate(path: str) -> str:
    return f"{path}: holds a lone UTF-16 surrogate, which is not valid Unicode; send well-formed UTF-8 text"


def _shown_key(key: str) -> str:
    """A key as the error shows it: at most ``_KEY_SHOWN`` characters, encodable as UTF-8."""
    shown = key if len(key) <= _KEY_SHOWN else key[: _KEY_SHOWN - 3] + "..."
    return shown.encode("utf-8", "backslashreplace").decode("utf-8")
