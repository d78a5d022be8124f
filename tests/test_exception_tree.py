"""The exception trees of ``mockllm`` and ``harness``: every public exception derives
from its package's root, the harness's tree is drawn in ``harness.exceptions``' docstring
as it is, and the builtin bases users catch are kept."""

from __future__ import annotations

import builtins
import importlib
import inspect
import re

import pytest

import harness
import mockllm
from harness import HarnessError
from harness.exceptions import missing_extra
from mockllm import MockLLMError
from tests.test_exported_members import _modules

EXTRA_PACKAGES = {"openai", "anthropic", "httpx2", "mcp", "mcp_types", "websockets", "scim2_models"}


def _exception_classes(package) -> dict[str, type[BaseException]]:
    """The public exception classes defined anywhere in ``package``, by qualified name."""
    found = {}
    for name in _modules(package):
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if (exc.name or "").partition(".")[0] in EXTRA_PACKAGES:
                continue  # its extra is not installed here (.ci/run's lean environment)
            raise
        for attribute, value in vars(module).items():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and value.__module__ == name
                and not attribute.startswith("_")
            ):
                found[f"{name}.{attribute}"] = value
    return found


def test_every_mockllm_exception_derives_from_mockllm_error() -> None:
    classes = _exception_classes(mockllm)
    assert "mockllm._exceptions.UnknownProtocol" in classes
    assert [name for name, cls in classes.items() if not issubclass(cls, MockLLMError)] == []


def test_every_harness_exception_derives_from_harness_error_and_is_drawn_in_the_tree() -> None:
    classes = _exception_classes(harness)
    assert "harness.systems.service.errors.NotFound" in classes
    assert [name for name, cls in classes.items() if not issubclass(cls, HarnessError)] == []
    drawn = _drawn_tree(harness.exceptions.__doc__ or "")
    assert sorted(drawn) == sorted({cls.__name__ for cls in classes.values()} | {"HarnessError"})
    for cls in classes.values():
        parent, package = drawn[cls.__name__]
        assert parent in [base.__name__ for base in cls.__bases__], f"{cls.__name__} is drawn under {parent}"
        assert cls.__module__.startswith(package), f"{cls.__name__} is drawn in {package}, lives in {cls.__module__}"


_CATEGORY = re.compile(r"^[│ ]*│   \S.*\((harness[\w.]*)(?:, …)?\)$")
_NODE = re.compile(r"^(?P<indent>[│ ]*)[├└]── (?P<name>\w+)(?:.*\((?P<package>harness[\w.]*)\))?")


def _drawn_tree(doc: str) -> dict[str, tuple[str, str]]:
    """``name -> (drawn parent, package named for it)`` from a drawing made of ``├──``
    lines under category lines ``│   words (harness.package)``."""
    drawn = {"HarnessError": ("Exception", "harness")}
    parents: list[str] = ["HarnessError"]
    package = "harness"
    for line in doc.splitlines():
        line = line.removeprefix("    ").rstrip()
        category = _CATEGORY.match(line)
        if category is not None:
            package = category.group(1)
            continue
        node = _NODE.match(line)
        if node is None:
            continue
        depth = len(node.group("indent")) // 4
        del parents[depth + 1 :]
        own = node.group("package")
        drawn[node.group("name")] = (parents[depth], own or package)
        parents.append(node.group("name"))
    return drawn


def test_the_drawing_of_the_harness_tree_is_read_as_drawn() -> None:
    drawn = _drawn_tree(harness.exceptions.__doc__ or "")
    assert drawn["NotFound"] == ("ChainServiceError", "harness.systems.service")
    assert drawn["GitError"] == ("HarnessError", "harness.golden")
    assert drawn["ToolError"] == ("HarnessError", "harness.systems")
    assert drawn["MissingExtra"] == ("HarnessError", "harness.exceptions")


def test_both_missing_extra_errors_say_the_same() -> None:
    """Two owners by necessity (the systems never import mockllm, mockllm never imports
    the harness): the user reads one sentence whichever raised it."""
    from mockllm._optional import require

    with pytest.raises(ModuleNotFoundError) as mock_side:
        require("not_a_package_here", extra="httpx2", feature="HTTPX2Transport")
    harness_side = missing_extra("not_a_package_here", needed_by="HTTPX2Transport", extra="httpx2")
    assert str(mock_side.value) == str(harness_side)
    assert mock_side.value.name == harness_side.name == "not_a_package_here"


@pytest.mark.parametrize(
    ("name", "builtin"),
    [
        ("PlanningError", "harness.systems.chain.planning:ValueError"),
        ("RoutingError", "harness.systems.chain.routing:ValueError"),
        ("PlanValidationError", "harness.systems.planner.models:ValueError"),
        ("CalculationError", "harness.systems.planner.calculator:ValueError"),
        ("ScenarioError", "harness.scenarios.model:ValueError"),
        ("RunnerNotFound", "harness.scenarios.registry:LookupError"),
        ("ToolArgumentsError", "harness.systems.tool_calls:TypeError"),
        ("FileAccessDenied", "harness.systems.agent.files:PermissionError"),
        ("GitError", "harness.golden.review.changes:RuntimeError"),
        ("InvariantError", "harness.invariants:AssertionError"),
        ("FallbackRefused", "harness.golden.refusal:AssertionError"),
        ("UnusedStepsError", "harness.plugin.fixtures:AssertionError"),
        ("UnscriptedRequestsError", "harness.plugin.strict:AssertionError"),
        ("MissingExtra", "harness.exceptions:ModuleNotFoundError"),
        ("UnknownReference", "harness.systems.chain.uris:LookupError"),
        ("CharacterError", "harness.systems.chain.characters:LookupError"),
    ],
)
def test_harness_exceptions_keep_their_builtin_base(name: str, builtin: str) -> None:
    """``except ValueError`` (and the rest) still catch what they caught before the root."""
    module, _, base = builtin.partition(":")
    cls = getattr(importlib.import_module(module), name)
    assert issubclass(cls, getattr(builtins, base))
    assert issubclass(cls, HarnessError)
