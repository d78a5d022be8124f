"""Optional dependencies: import one when it is first needed, or say which extra brings it.

The core install (``pip install mockllm-harness``) holds what the mock, its server and
the pytest plugin need. The rest comes with extras::

    httpx2    httpx2                        HTTPX2Transport, intercepting httpx2 clients
    golden    syrupy                        the golden fixture, scenario files' goldens
    agent     golden, openai, anthropic,    harness.systems.llm and the agent, chain and planner
              scim2-models
    service   agent, mcp, websockets        ``python -m harness serve``, MCP, SCIM
    hypothesis  hypothesis                  ``mockllm.strategies`` (stream shapes and faults)
    redis     redis                         ``serve --state redis://…`` (``mockllm._state``)

A missing one fails where it is used, with the install command in the message
(starlette's habit), never at ``import mockllm`` or at pytest's start.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from mockllm._exceptions import MockLLMError

__all__ = ["DISTRIBUTION", "MissingExtraError", "require"]

DISTRIBUTION = "mockllm-harness"


class MissingExtraError(MockLLMError, ModuleNotFoundError):
    """An optional dependency is not installed; the message names the extra that brings it
    (worded as ``harness.exceptions.MissingExtra`` words it)."""


def require(module: str, *, extra: str, feature: str) -> ModuleType:
    """``module``, imported; or a ``MissingExtraError`` saying that ``feature`` needs
    ``extra`` and how to install it."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name != module.partition(".")[0]:
            raise  # the package is there but broken: its own error says more
        raise MissingExtraError(
            f"{feature} needs the {module!r} package, which is not installed. "
            f'Install it with: pip install "{DISTRIBUTION}[{extra}]"',
            name=module,
        ) from exc
