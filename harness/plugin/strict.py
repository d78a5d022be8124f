"""Strict mode: the verdict's rule (``mockllm._verdict``) at the plugin's doors.

The mock answers a request it has no instruction for with a 200 fallback reply and a
request a real provider would refuse with a 4xx; a script may call a tool the app never
declared, or say what no provider would (past the request's output-token limit, breaking
its structured output); the app may make fewer calls than scripted. Outside pytest that is what a
client should get; inside a test it means the test is not testing what it scripted, so
the fixtures fail the test at teardown listing each problem, the way pytest-httpx fails
on "no response can be found for … amongst: …". The rule lives in mockllm, read from
typed journal fields and counted apart from the journal; this module only chooses the
error class and says the opt-outs in pytest's words (marker, flag, ini option).
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.exceptions import HarnessError
from harness.plugin.config import Settings
from mockllm import Allowances, Findings, Problem, ProblemKind, StrictnessError, verify_findings
from mockllm.testing import failures

__all__ = [
    "UnscriptedRequestsError",
    "UnusedStepsError",
    "allowances_of",
    "pytest_opt_out",
    "verify_test",
]


class UnscriptedRequestsError(HarnessError, StrictnessError):
    """Requests got the mock's fallback reply or an unscripted 4xx, a scripted tool call
    was not declared, or a request went to a provider host (with whatever else failed)."""


class UnusedStepsError(HarnessError, StrictnessError):
    """Scripted instructions were never reached by any request (and nothing else failed)."""


def pytest_opt_out(name: str) -> str:
    """An opt-out as a pytest user sets it: the marker, the flag, the ini option."""
    flag = "--mockllm-" + name.replace("_", "-")
    return f"@pytest.mark.mockllm({name}=True) (or {flag}, or the ini option mockllm_{name})"


def allowances_of(settings: Settings) -> Allowances:
    """The rule's opt-outs from a test's settings."""
    return Allowances(
        allow_fallback=settings.allow_fallback,
        allow_unused_steps=settings.allow_unused_steps,
        allow_undeclared_tools=settings.allow_undeclared_tools,
        allow_real_providers=settings.allow_real_providers,
        allow_impossible_replies=settings.allow_impossible_replies,
    )


def verify_test(findings: Findings, settings: Settings, refused: Sequence[str] = ()) -> None:
    """Fail the test on every problem of ``findings`` (and each request to a provider
    host the fixture ``refused``) that ``settings`` does not allow."""
    __tracebackhide__ = True
    findings = findings.plus(Problem(kind=ProblemKind.UNMOCKED_HOST, summary=shown) for shown in refused)
    allowances = allowances_of(settings)
    failing = failures(findings, allowances)
    error = UnusedStepsError if set(failing) == {ProblemKind.UNUSED_STEP} else UnscriptedRequestsError
    verify_findings(findings, allowances, opt_out=pytest_opt_out, error=error)
