"""Names a module offers from modules it imports only when one is first used (PEP 562):
what a process that never asks for them would pay for at start-up (the MCP SDK, the
SCIM models: a second of CPU each) it pays for only once it does."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_names"]


def lazy_names(module: str, sources: Mapping[str, str]) -> Callable[[str], Any]:
    """The ``__getattr__`` of ``module``: each name in ``sources`` imported, the first time
    it is asked for, from the module ``sources`` gives for it, and kept in ``module``."""

    def __getattr__(name: str) -> Any:
        if name not in sources:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(sources[name]), name)
        setattr(sys.modules[module], name, value)  # later lookups find it at once
        return value

    return __getattr__
