"""Another checkout's ``mockllm`` imported beside this one, so that a benchmark times a
change before and after in the same process (``--baseline DIR``)."""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path
from types import ModuleType

__all__ = ["checkouts", "import_baseline", "rounds_baseline_docs"]

ROOT = Path(__file__).resolve().parent.parent


def rounds_baseline_docs(doc: str, rounds: int) -> argparse.Namespace:
    """The command line of a benchmark that runs processes of one checkout or two:
    ``--rounds N``, ``--baseline DIR``, ``--write-docs`` (``doc``: the script's docstring)."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=rounds)
    parser.add_argument("--baseline", type=Path, help="another checkout (git archive of main) to compare against")
    parser.add_argument("--write-docs", action="store_true")
    return parser.parse_args()


def checkouts(baseline: Path | None, marker: str) -> dict[str, Path]:
    """This checkout, then ``baseline`` when given (which must hold ``marker``), by label."""
    trees = {"this checkout": ROOT}
    if baseline is not None:
        if not (baseline / marker).exists():
            raise SystemExit(f"--baseline {baseline}: not a checkout of this repository (no {marker} there)")
        trees["baseline"] = baseline.resolve()
    return trees


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
