"""Which runner a scenario's ``runner:`` names.

Looked up in this order:

1. runners from ``pytest_mockllm_runners`` hooks (a conftest or a plugin returns
   ``{"name": runner}``), given to ``resolve_runner`` as ``extra``;
2. runners registered in this process with ``register_runner``;
3. the bundled ones: ``agent``, ``chain``, ``planner``;
4. entry points in the ``mockllm_harness.runners`` group (``name = "pkg.mod:function"``);
5. ``package.module:function``, imported.
"""

from __future__ import annotations

import importlib
import importlib.metadata
from collections.abc import Mapping
from typing import Any

from harness.exceptions import HarnessError
from harness.scenarios.contract import ScenarioRunner

__all__ = ["BUNDLED_RUNNERS", "ENTRY_POINT_GROUP", "RunnerNotFound", "register_runner", "resolve_runner"]

ENTRY_POINT_GROUP = "mockllm_harness.runners"
BUNDLED_RUNNERS = {
    "agent": "harness.scenarios.runners:run_agent_scenario",
    "chain": "harness.scenarios.runners:run_chain_scenario",
    "planner": "harness.scenarios.runners:run_planner_scenario",
}
_REGISTERED: dict[str, ScenarioRunner] = {}


class RunnerNotFound(HarnessError, LookupError):
    """A scenario names a runner nobody provides; the message lists the known ones."""


def register_runner(name: str, runner: ScenarioRunner) -> None:
    """Make ``runner`` play the scenarios whose ``runner`` field is ``name``."""
    if not callable(runner):
        raise TypeError(f"register_runner({name!r}, ...) needs a callable runner, got {runner!r}")
    _REGISTERED[name] = runner


def _entry_points() -> dict[str, importlib.metadata.EntryPoint]:
    return {ep.name: ep for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)}


def _import(reference: str) -> Any:
    module_name, _, attribute = reference.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise RunnerNotFound(
            f"runner {reference!r}: cannot import {module_name}: {exc}. Is its folder on "
            "sys.path (pytest's pythonpath ini option, or an installed package)?"
        ) from exc
    try:
        runner = getattr(module, attribute)
    except AttributeError:
        raise RunnerNotFound(f"runner {reference!r}: {module_name} has no {attribute!r}") from None
    if not callable(runner):
        raise RunnerNotFound(f"runner {reference!r} is a {type(runner).__name__}, not a function")
    return runner


def resolve_runner(reference: str, extra: Mapping[str, ScenarioRunner] | None = None) -> ScenarioRunner:
    """The runner ``reference`` names (see the module docstring), or ``RunnerNotFound``."""
    extra = extra or {}
    if reference in extra:
        return extra[reference]
    if reference in _REGISTERED:
        return _REGISTERED[reference]
    if reference in BUNDLED_RUNNERS:
        return _import(BUNDLED_RUNNERS[reference])
    entry_points = _entry_points()
    if reference in entry_points:
        return entry_points[reference].load()
    if ":" in reference:
        return _import(reference)
    known = sorted({*extra, *_REGISTERED, *BUNDLED_RUNNERS, *entry_points})
    raise RunnerNotFound(
        f"no runner named {reference!r}; known: {', '.join(known)}. Give a function as package.module:function, "
        f"or name one in a pytest_mockllm_runners hook or an entry point in the {ENTRY_POINT_GROUP!r} group."
    )
