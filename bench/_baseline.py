"""Another checkout's ``mockllm`` imported beside this one, so that a benchmark times a
change before and after in the same process (``--baseline DIR``)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

__all__ = ["import_baseline"]


def _ours() -> dict[str, ModuleType]:
    return {k: v for k, v in sys.modules.items() if k == "mockllm" or k.startswith("mockllm.")}


def import_baseline(root: Path, *modules: str) -> list[ModuleType]:
    """The ``mockllm`` package of the checkout ``root``, then each of ``modules`` (for
    instance ``mockllm._transports``) from it; this process's own ``mockllm`` is left as it
    was, and the two never share a module."""
    ours = _ours()
    for name in ours:
        del sys.modules[name]
    sys.path.insert(0, str(root))
    try:
        package = importlib.import_module("mockllm")
        if not Path(package.__file__ or "").resolve().is_relative_to(root.resolve()):
            raise SystemExit(f"--baseline {root}: no mockllm package there")
        return [package, *(importlib.import_module(name) for name in modules)]
    finally:
        sys.path.remove(str(root))
        for name in _ours():
            del sys.modules[name]
        sys.modules.update(ours)
