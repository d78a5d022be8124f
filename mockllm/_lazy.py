"""A package's names loaded on first use (PEP 562), listed once.

The list is the package's ``from m import X as X`` imports under ``if _TYPE_CHECKING:``
(PEP 484's mark of a re-export), which type checkers and editors read as they are; the
runtime reads it from the package's source the first time a name is asked for, and
imports the name's module then. Used by ``mockllm`` and ``mockllm.testing``, so that a
process imports only what it uses (``python -m mockllm serve`` no httpx or recording
modules; the pytest plugin's fixtures no server).
"""

from __future__ import annotations

import functools
import importlib
import sys
from pathlib import Path
from typing import Any

__all__ = ["door", "doors"]


@functools.cache
def doors(package: str) -> dict[str, str]:
    """Each name of ``package`` and the module that defines it, as the package's ``if
    _TYPE_CHECKING:`` imports name them."""
    import ast

    path = sys.modules[package].__file__
    assert path is not None, package
    tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    block = next(node for node in tree.body if isinstance(node, ast.If) and ast.unparse(node.test) == "_TYPE_CHECKING")
    return {node.names[0].name: str(node.module) for node in block.body if isinstance(node, ast.ImportFrom)}


def door(package: str, name: str) -> Any:
    """``package``'s ``name`` (``__all__``: every name, sorted), kept in the package so that
    later lookups find it at once; ``AttributeError`` for a name it does not have."""
    if name == "__all__":
        value: Any = sorted(doors(package))
    elif name in doors(package):
        value = getattr(importlib.import_module(doors(package)[name]), name)
    else:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    setattr(sys.modules[package], name, value)
    return value
