"""What the SDK end-to-end test files share: the script builder and parametrisations."""

from __future__ import annotations

from typing import Any

import pytest

from mockllm import InstructionChain

SYNC_ASYNC = pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
"""Run a test with the sync and with the async client."""

MODES = ("json", "sse", "helper")
ALL_MODES = pytest.mark.parametrize("mode", MODES)
"""``create``, ``create(stream=True)`` accumulated by the test, and the SDK's stream helper."""


def script(*instructions: dict[str, Any], prompt: str = "Help me plan the day.") -> str:
    """A user message carrying ``instructions`` as an instruction chain."""
    return InstructionChain.model_validate({"instruction_chain": list(instructions)}).tagged(prompt)
