"""Every exception the harness raises derives from ``HarnessError``::

    HarnessError
    ├── MissingExtra               an optional package is not installed; the message
    │                              names the extra that brings it (also ModuleNotFoundError)
    ├── ModelError                 a model call failed: HTTP status, stream error event,
    │                              or a reply the harness cannot use      (harness.systems.llm)
    ├── ToolError                  a tool could not run; the agent hands the message to
    │                              the model as a failed result           (harness.systems.agent)
    ├── FileAccessDenied           a file the user may not use  (also PermissionError)
    ├── ToolArgumentsError         arguments that do not fit a tool  (also TypeError)
    ├── PlanExecutionError         a chain step failed; ``plan`` as it stood (harness.systems.chain)
    ├── PlanningError              the model's plan is unusable      (also ValueError)
    ├── RoutingError               the routing answer is not routing JSON  (also ValueError)
    ├── UnknownReference           a name or am7:// URI the organization does not see
    │                              (a 404; also LookupError)
    ├── CharacterError             a character record not found (404) or forbidden (403)
    │                              (also LookupError)
    ├── StepError                  a planner step could not run        (harness.systems.planner)
    ├── PlanValidationError        a plan the task executor cannot run  (also ValueError)
    ├── CalculationError           not plain arithmetic, or too big  (also ValueError)
    ├── DuplicateName              a ``userName`` the organization has  (harness.systems.identity)
    ├── IdentityToolError          an identity operation SCIM refused, with its status
    ├── ChainServiceError          a request the chain service answers with ``status``
    │   ├── BadRequest             400                                 (harness.systems.service)
    │   ├── Unauthorized           401
    │   ├── Forbidden              403
    │   └── NotFound               404
    ├── ScenarioError              a scenario file that cannot be used  (also ValueError)
    ├── RunnerNotFound             a ``runner:`` nobody provides     (also LookupError)
    ├── GitError                   git could not say what changed    (also RuntimeError)
    ├── InvariantError             an event-sequence invariant broke (also AssertionError)
    ├── FallbackRefused            a golden would record a mock fallback reply (also
    │                              AssertionError)
    ├── UnusedStepsError           scripted steps no request reached (also AssertionError,
    │                              mockllm.StrictnessError)
    └── UnscriptedRequestsError    requests no script answered, undeclared tool calls,
                                   refused provider hosts (also AssertionError,
                                   mockllm.StrictnessError)

Each class is defined beside the code that raises it (so a module keeps working without
the optional packages others need) and is exported from ``harness``. The second base
keeps ``except ValueError`` and friends working; the errors that mean "a test's
expectation failed" are also ``AssertionError``, so pytest reports them as failures.

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
