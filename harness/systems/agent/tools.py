"""Tools the agent may call: a registry of read and write tools.

Write tools (by default those whose name starts with ``create``, ``update`` or
``delete``) need approval before they run. A handler is any callable, sync or async,
taking the tool's arguments as keyword arguments; the arguments the model sends are
checked against its signature and annotations (``harness.systems.tool_calls``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from harness.exceptions import HarnessError
from harness.systems.llm import ToolSpec
from harness.systems.tool_calls import CheckedTool

__all__ = ["Tool", "ToolError", "ToolRegistry", "WRITE_PREFIXES"]

WRITE_PREFIXES = ("create", "update", "delete")


class ToolError(HarnessError):
    """A tool could not run; the message goes back to the model as a failed result."""


@dataclass
class Tool:
    name: str
    handler: Callable[..., Any]
    description: str = ""
    input_schema: dict[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})
    requires_approval: bool | None = None
    """None: decided by the name (create/update/delete need approval)."""
    _call: CheckedTool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._call = CheckedTool(self.name, self.handler)

    @property
    def needs_approval(self) -> bool:
        if self.requires_approval is not None:
            return self.requires_approval
        return self.name.lower().startswith(WRITE_PREFIXES)

    @property
    def spec(self) -> ToolSpec:
        return ToolSpec(self.name, self.description, self.input_schema)

    async def run(self, arguments: dict[str, Any]) -> str:
        """Call the handler; the result as text (JSON for anything but a string). Arguments
        that do not fit raise ``harness.systems.tool_calls.ToolArgumentsError``."""
        result = await self._call(arguments)
        return result if isinstance(result, str) else json.dumps(result, sort_keys=True)


class ToolRegistry:
    """Tools by name."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            self.add(tool)

    def add(self, tool: Tool) -> Tool:
        if tool.name in self._tools:
            raise ValueError(f"a tool named {tool.name!r} is already registered")
        self._tools[tool.name] = tool
        return tool

    def register(
        self,
        name: str | None = None,
        *,
        description: str = "",
        requires_approval: bool | None = None,
        input_schema: dict[str, Any] | None = None,
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Decorator: ``@tools.register()`` adds the function as a tool."""

        def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
            self.add(
                Tool(
                    name or fn.__name__,
                    fn,
                    description or (fn.__doc__ or "").strip(),
                    input_schema or {"type": "object", "properties": {}},
                    requires_approval,
                )
            )
            return fn

        return decorate

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    @property
    def specs(self) -> list[ToolSpec]:
        return [tool.spec for tool in self._tools.values()]

    def __len__(self) -> int:
        return len(self._tools)
