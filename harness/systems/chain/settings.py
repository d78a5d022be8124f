"""What a chain run and its steps read from the executor that started them.

``ChainExecutor`` holds the settings; ``ChainRun`` (``harness.systems.chain.run``) and
the step kinds (``harness.systems.chain.steps``) read them through this protocol, so the
modules depend one way — executor → run → steps → settings — and none imports back.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from harness.systems.chain.access import Permissions
from harness.systems.chain.models import PromptConfig
from harness.systems.chain.policy import Policy
from harness.systems.chain.store import PlanStore
from harness.systems.chain.vectors import VectorStore
from harness.systems.llm import ModelClient
from harness.systems.tool_calls import CheckedTool

__all__ = ["ChainSettings"]


class ChainSettings(Protocol):
    """The executor as its runs see it (``ChainExecutor``'s attributes)."""

    client: ModelClient | None
    tools: dict[str, Callable[..., Any]]
    prompt_configs: dict[str, PromptConfig]
    chat_configs: dict[str, ModelClient]
    policies: dict[str, Policy]
    vector_store: VectorStore
    store: PlanStore | None
    organization: str
    routing: bool
    permissions: Permissions

    def tool(self, name: str) -> CheckedTool | None:
        """The registered tool ``name``, its arguments checked; ``None`` if unknown."""
        ...
