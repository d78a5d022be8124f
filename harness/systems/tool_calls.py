"""Calling a tool with the arguments a model or a plan chose: the one way the agent
runner and the chain executor do it.

The arguments must fit the tool's signature, and — for a plain function — its
annotations (checked by pydantic; unannotated parameters take anything). A misfit is a
``ToolArgumentsError`` naming the tool, the arguments and what is wrong; whatever the
tool itself raises propagates as it is. A tool may be sync or async.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import PydanticUserError, ValidationError, validate_call

from harness.events import settled
from harness.exceptions import HarnessError
from harness.validation_problems import validation_problems

__all__ = ["CheckedTool", "ToolArgumentsError"]


class ToolArgumentsError(HarnessError, TypeError):
    """The arguments do not fit the tool; the message says which and why."""


class CheckedTool:
    """``handler`` under the name ``name``, its arguments checked before each call."""

    def __init__(self, name: str, handler: Callable[..., Any]) -> None:
        self.name = name
        self.handler = handler
        try:
            self._checked = validate_call(config={"arbitrary_types_allowed": True})(handler)
        except (TypeError, PydanticUserError):  # not a plain function (a builtin, say): call it as it is
            self._checked = handler

    async def __call__(self, arguments: Mapping[str, Any]) -> Any:
        """The tool's result for ``arguments`` (awaited when the tool is async)."""
        try:
            inspect.signature(self.handler).bind(**arguments)
        except TypeError as exc:
            raise ToolArgumentsError(
                f"tool {self.name!r} cannot take the arguments {sorted(arguments)}: {exc}"
            ) from exc
        except ValueError:  # no signature to read (some builtins): the call itself will say
            pass
        try:
            result = self._checked(**arguments)
        except ValidationError as exc:
            problems = "; ".join(validation_problems(exc, "arguments", show_input=True))
            raise ToolArgumentsError(f"tool {self.name!r}: {problems}") from exc
        return await settled(result)
