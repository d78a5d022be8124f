"""Names a module offers from modules it imports only when one is first used (PEP 562):
what a process that never asks for them would pay for at start-up (the MCP SDK, the
SCIM models, the chain executor) it pays for only once it does.

The names are the module's imports written ``X as X`` (PEP 484's mark of a re-export)
under ``if TYPE_CHECKING:``, the one list of them, which type checkers read as it is::

    if TYPE_CHECKING:
        from harness.systems.identity.adapter import ScimAdapter as ScimAdapter

    __getattr__ = LazyNames(__name__)

``harness/__init__`` loads its doors so too.
"""

from __future__ import annotations

import ast
import functools
import importlib
import sys
from pathlib import Path
from typing import Any

__all__ = ["LazyNames"]


class LazyNames:
    """The ``__getattr__`` of ``module``: each of its ``X as X`` imports under ``if
    TYPE_CHECKING:`` imported the first time it is asked for, and kept in ``module``;
    ``__all__``, if asked for, lists them."""

    def __init__(self, module: str) -> None:
        self.module = module

    @functools.cached_property
    def names(self) -> dict[str, str]:
        """Each name and the module it is imported from, read from the module's source."""
        path = sys.modules[self.module].__file__
        assert path is not None, self.module
        found: dict[str, str] = {}
        for node in ast.parse(Path(path).read_bytes()).body:
            if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
                for imported in node.body:
                    if isinstance(imported, ast.ImportFrom):
                        found |= {a.name: str(imported.module) for a in imported.names if a.asname == a.name}
        return found

    def __call__(self, name: str) -> Any:
        if name == "__all__":
            value: Any = sorted(self.names)
        elif name in self.names:
            value = getattr(importlib.import_module(self.names[name]), name)
        else:
            raise AttributeError(f"module {self.module!r} has no attribute {name!r}")
        setattr(sys.modules[self.module], name, value)  # later lookups find it at once
        return value
