"""Strict by default: a request no script answered fails the test, with the request shown."""

from __future__ import annotations

import re
import textwrap

import pytest

HELPERS = """
from mockllm import InstructionChain

def script(*texts):
    return InstructionChain(instruction_chain=[
        {"id": f"step-{i}", "messages": [{"text_message": {"text": t}}]} for i, t in enumerate(texts)
    ]).tagged("Go")

def ask(clients, content, history=()):
    return clients.openai().chat.completions.create(
        model="gpt-mock", messages=[{"role": "user", "content": content}, *history])
"""

INNER = """
import pytest
from helpers import ask, script

def test_untagged(mockllm):
    ask(mockllm, "What is 2 + 2?")

def test_one_too_many(mockllm):
    first = ask(mockllm, script("only"))
    ask(mockllm, script("only"), [{"role": "assistant", "content": first.choices[0].message.content},
                                  {"role": "user", "content": "and again"}])

def test_rejected(mockllm):
    body = {"model": "m", "messages": [{"role": "user", "content": script("x")},
                                       {"role": "tool", "tool_call_id": "nope", "content": "x"}]}
    assert mockllm.httpx_client().post("/v1/chat/completions", json=body).status_code == 400

def test_scripted_error_is_not_a_failure(mockllm):
    from mockllm import InstructionChain
    prompt = InstructionChain(instruction_chain=[{"error": {"status": 429}}]).tagged("x")
    assert mockllm.httpx_client().post(
        "/v1/chat/completions", json={"model": "m", "messages": [{"role": "user", "content": prompt}]}
    ).status_code == 429

@pytest.mark.mockllm(allow_fallback=True)
def test_allowed(mockllm):
    ask(mockllm, "What is 2 + 2?")
"""


@pytest.fixture
def project(strict_pytester: pytest.Pytester) -> pytest.Pytester:
    strict_pytester.makepyfile(helpers=HELPERS, test_inner=INNER)
    return strict_pytester


def _error_text(output: str, test: str) -> str:
    """The message of one test's teardown error, as the test's author reads it."""
    section = output.split(f"ERROR at teardown of {test} ", 1)[1]
    section = re.split(r"ERROR at teardown of |short test summary info", section)[0]
    return textwrap.dedent("\n".join(line[1:] for line in section.splitlines() if line.startswith("E   ")))


def test_fallbacks_and_unscripted_rejections_fail_at_teardown(project: pytest.Pytester) -> None:
    result = project.runpytest()
    result.assert_outcomes(passed=5, errors=3)
    out = result.stdout.str()

    untagged = _error_text(out, "test_untagged")
    assert untagged.startswith(
        "harness.plugin.strict.UnscriptedRequestsError: "
        "1 request(s) to the mock got the fallback reply:\n"
        "  - POST /v1/chat/completions (request 0): fallback reply, "
        "no user message holds an instruction block\n"
        "      protocol: openai-chat\n"
        "      chain: none (no user message holds an instruction block)\n"
        "No script is registered to answer requests without instruction tags.\n"
        "Script every model call the code makes (an instruction chain in a user message, or "
        "mock.script(chain, match=...)), or allow this with @pytest.mark.mockllm(allow_fallback=True) "
        "(or --mockllm-allow-fallback, or the ini option mockllm_allow_fallback)."
    ), untagged

    too_many = _error_text(out, "test_one_too_many")
    assert (
        "  - POST /v1/chat/completions (request 1, turn 1): fallback reply, "
        "the script has 1 step and this is turn 2: turn index 1 is past the end of the chain of 1 instructions"
    ) in too_many
    assert "      turn index: 1 (1 assistant turns counted)" in too_many  # explain()'s report
    assert "request 0" not in too_many  # the scripted request is not listed

    rejected = _error_text(out, "test_rejected")
    assert "  - POST /v1/chat/completions (request 0): rejected with 400: Invalid parameter: " in rejected
    assert "role 'tool' must be a response to a preceeding message with 'tool_calls'" in rejected


def test_allowed_by_flag_and_by_ini(project: pytest.Pytester) -> None:
    project.runpytest("--mockllm-allow-fallback").assert_outcomes(passed=5)
    project.makeini("""
        [pytest]
        addopts = -p no:cacheprovider -p no:langsmith_plugin
        filterwarnings = error
            ignore::pytest.PytestAssertRewriteWarning
            ignore:The configuration option "asyncio_default_fixture_loop_scope" is unset:pytest.PytestDeprecationWarning
        mockllm_allow_fallback = true
    """)
    project.runpytest().assert_outcomes(passed=5)
