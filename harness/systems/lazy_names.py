"""Names a module offers from modules it imports only when one is first used (PEP 562):
what a process that never asks for them would pay for at start-up (the MCP SDK, the
SCIM models, the chain executor) it pays for only once it does.

The names are the module's imports written ``X as X`` (PEP 484's mark of a re-export)
under ``if TYPE_CHECKING:``, the one list of them, which type checkers read as it is::

    if TYPE_CHECKING:
        from harness.systems.identity.adapter import ScimAdapter as ScimAdapter

    __getattr__ = lazy_names(__name__)
"""

from __future__ import annotations

import ast
import functools
import importlib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["lazy_names"]


def lazy_names(module: str) -> Callable[[str], Any]:
    """The ``__getattr__`` of ``module``: each of its ``X as X`` imports under ``if
    TYPE_CHECKING:`` imported the first time it is asked for, and kept in ``module``;
    ``__all__``, if asked for, lists them."""

    @functools.cache
    def sources() -> dict[str, str]:
        path = sys.modules[module].__file__
        assert path is not None, module
        found: dict[str, str] = {}
        for node in ast.parse(Path(path).read_bytes()).body:
            if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
                for imported in node.body:
                    if isinstance(imported, ast.ImportFrom):
                        found |= {a.name: str(imported.module) for a in imported.names if a.asname == a.name}
        return found

    def __getattr__(name: str) -> Any:
        if name == "__all__":
            value: Any = sorted(sources())
        elif name in sources():
            value = getattr(importlib.import_module(sources()[name]), name)
        else:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        setattr(sys.modules[module], name, value)  # later lookups find it at once
        return value

    return __getattr__
