"""Every exception the harness raises derives from ``HarnessError``, drawn here by
category (the tooling first, then the systems it is proved on)::

    HarnessError
    ├── MissingExtra              an optional package is missing; names the extra   (harness.exceptions)
    │                             (also ModuleNotFoundError)
    │   scenario files                                                              (harness.scenarios)
    ├── ScenarioError             a file that cannot be used, as ``path:line: reason``
    │                             (also mockllm.testing.FileError, a ValueError)
    ├── RunnerNotFound            a ``runner:`` nobody provides (also LookupError)
    │   goldens and the checks of a run: also AssertionError, but GitError      (harness.golden, …)
    ├── InvariantError            an event-sequence invariant broke                 (harness.invariants)
    ├── FallbackRefused           a golden would record a mock fallback reply       (harness.golden)
    ├── GitError                  git could not say what changed (also RuntimeError) (harness.golden)
    ├── ReviewConflict            a golden edited during its review (also RuntimeError) (harness.golden)
    ├── ReportError               a review report that cannot be read (also ValueError) (harness.golden)
    ├── UnusedStepsError          scripted steps no request reached (also           (harness.plugin)
    │                             mockllm.StrictnessError)
    ├── UnscriptedRequestsError   requests no script answered, undeclared tool      (harness.plugin)
    │                             calls, refused provider hosts (also mockllm.StrictnessError)
    │   chain: the executor of seeds 000/001                                  (harness.systems.chain)
    ├── PlanExecutionError        a step failed; ``plan`` as it stood
    ├── PlanningError             the model's plan is unusable (also ValueError)
    ├── RoutingError              the routing answer is not routing JSON (also ValueError)
    ├── UnknownReference          a name or am7:// URI the organization does not see: a 404
    │                             (also LookupError)
    ├── CharacterError            a character not found (404) or forbidden (403) (also LookupError)
    │   planner: seed 004                                                   (harness.systems.planner)
    ├── StepError                 a planner step could not run
    ├── PlanValidationError       a plan the task executor cannot run (also ValueError)
    ├── CalculationError          not plain arithmetic, or too big (also ValueError)
    │   service: REST, WebSocket, MCP                                       (harness.systems.service)
    ├── ChainServiceError         a request the chain service answers with ``status``
    │   ├── BadRequest            400
    │   ├── Unauthorized          401
    │   ├── Forbidden             403
    │   └── NotFound              404
    │   identity: SCIM                                                     (harness.systems.identity)
    ├── DuplicateName             a ``userName`` the organization has
    ├── IdentityToolError         an identity operation SCIM refused, with its status
    │   agent and model client: seed 002                                           (harness.systems)
    ├── ModelError                a model call failed: HTTP status, stream error event, or a
    │                             reply the harness cannot use
    ├── ToolError                 a tool could not run; the agent tells the model
    ├── FileAccessDenied          a file the user may not use (also PermissionError)
    └── ToolArgumentsError        arguments that do not fit a tool (also TypeError)

Each class is defined beside the code that raises it (so a module keeps working without
the optional packages others need) and is exported from ``harness``;
``tests/test_exported_members.py`` checks that this drawing names every one under its
real base, in the package its category (or its own line) names. The second base keeps
``except ValueError`` and friends working; the errors that mean "a test's expectation
failed" are also ``AssertionError``, so pytest reports them as failures.

``MissingExtra`` words its message as mockllm's ``MissingExtraError`` does, and both
stay: the systems under ``harness.systems`` raise it and never import mockllm, and
mockllm never imports the harness (a test checks that both say the same).

This module imports nothing but the standard library: every other harness module may
import it.
"""

from __future__ import annotations

import importlib.util
import sys

__all__ = ["EXTRAS", "HarnessError", "MissingExtra", "missing_extra", "not_installed"]

EXTRAS = {
    "syrupy": "golden",
    "openai": "agent",
    "anthropic": "agent",
    "mcp": "service",
    "websockets": "service",
}
"""The optional packages, by import name, and the extra of ``mockllm-harness`` that
installs each."""


class HarnessError(Exception):
    """The root of the harness's exceptions."""


class MissingExtra(HarnessError, ModuleNotFoundError):
    """An optional package is not installed; the message says which extra installs it."""


def missing_extra(package: str, *, needed_by: str, extra: str | None = None) -> MissingExtra:
    """The error for ``needed_by`` lacking ``package``: names the extra to install.

    ``extra`` defaults to the one ``EXTRAS`` lists for the package (``all`` for a package
    it does not list). Raise it from the ``ModuleNotFoundError`` it replaces::

        try:
            import openai
        except ModuleNotFoundError as exc:
            raise missing_extra("openai", needed_by="the OpenAI model client") from exc
    """
    top = package.partition(".")[0]
    extra = extra or EXTRAS.get(top, "all")
    return MissingExtra(
        f"{needed_by} needs the {top!r} package, which is not installed. "
        f'Install it with: pip install "mockllm-harness[{extra}]"',
        name=top,
    )


def not_installed(exc: ModuleNotFoundError) -> str | None:
    """The top-level package whose absence ``exc`` reports, or None when that package is
    installed (a missing submodule of an installed package is a version problem, better
    shown as Python reports it). ``None`` in ``sys.modules`` blocks a package, as a test
    or an embedding application may do, and counts as not installed."""
    package = (exc.name or "").partition(".")[0]
    if not package:
        return None
    if package in sys.modules:
        return None if sys.modules[package] is not None else package
    return None if importlib.util.find_spec(package) is not None else package
