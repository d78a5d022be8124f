"""The verdict's rule at the pytest fixtures' doors (``mockllm`` in process,
``mockllm_server`` over HTTP): undeclared tool calls, a problem the journal has
forgotten, and a client that was never pointed at the mock (docs/strictness.md)."""

from __future__ import annotations

import pytest

pytest.importorskip("httpx2", reason="httpx2 is not installed (the httpx2 extra)")
pytest.importorskip("openai", minversion="3", reason="openai>=3 (built on httpx2) is not installed")
pytest.importorskip("anthropic", minversion="1", reason="anthropic>=1 (built on httpx2) is not installed")

# The inner runs' ``mockllm_server`` tests play on this session's server, each in a
# server-side session of its own (``shared_server_conftest``, tests/conftest.py).

CONFTEST = """
import socket
import pytest

REAL = socket.getaddrinfo

def _loopback_only(host, *args, **kwargs):
    if host not in ("127.0.0.1", "localhost", "::1"):
        raise AssertionError(f"the network was touched: {host}")
    return REAL(host, *args, **kwargs)

@pytest.fixture(autouse=True)
def no_network(monkeypatch):
    # A request that leaves the process would resolve its host first: fail loudly if one does.
    monkeypatch.setattr(socket, "getaddrinfo", _loopback_only)
"""

HELPERS = """
from mockllm import InstructionChain

ORDER = InstructionChain(instruction_chain=[
    {"messages": [{"tool_call": [{"name": "lookup_order", "args": {"order_id": "A-1"}}]}]},
]).tagged("Where is my order?")
WEATHER_OPENAI = {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}
WEATHER_ANTHROPIC = {"name": "get_weather", "input_schema": {"type": "object"}}
ORDER_OPENAI = {"type": "function", "function": {"name": "lookup_order", "parameters": {
    "type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}}}

def ask_openai(clients, tools):
    extra = {"tools": tools} if tools else {}
    return clients.openai().chat.completions.create(
        model="m", messages=[{"role": "user", "content": ORDER}], **extra)

def ask_anthropic(clients, tools):
    extra = {"tools": tools} if tools else {}
    return clients.anthropic().messages.create(
        model="c", max_tokens=50, messages=[{"role": "user", "content": ORDER}], **extra)
"""

TOOLS_TEST = """
import pytest
from helpers import ORDER_OPENAI, WEATHER_ANTHROPIC, WEATHER_OPENAI, ask_anthropic, ask_openai

def test_openai_no_tools(FIXTURE):
    ask_openai(FIXTURE, None)

def test_openai_other_tool(FIXTURE):
    ask_openai(FIXTURE, [WEATHER_OPENAI])

def test_anthropic_other_tool(FIXTURE):
    ask_anthropic(FIXTURE, [WEATHER_ANTHROPIC])

def test_openai_declared(FIXTURE):
    reply = ask_openai(FIXTURE, [ORDER_OPENAI])
    assert reply.choices[0].message.tool_calls[0].function.name == "lookup_order"

@pytest.mark.mockllm(allow_undeclared_tools=True)
def test_allowed(FIXTURE):
    ask_openai(FIXTURE, None)
"""


@pytest.mark.parametrize("fixture", ["mockllm", "mockllm_server"])
def test_a_tool_call_the_request_did_not_declare_fails_the_test(
    strict_pytester: pytest.Pytester, shared_server_conftest: str, fixture: str
) -> None:
    strict_pytester.makeconftest(CONFTEST + shared_server_conftest)
    strict_pytester.makepyfile(helpers=HELPERS, test_tools=TOOLS_TEST.replace("FIXTURE", fixture))
    result = strict_pytester.runpytest()
    result.assert_outcomes(passed=5, errors=3)
    out = result.stdout.str()
    for test in ("test_openai_no_tools", "test_openai_other_tool", "test_anthropic_other_tool"):
        assert f"ERROR test_tools.py::{test} - harness.plugin.strict.Unscri" in out
    result.stdout.fnmatch_lines(
        [
            "E*1 scripted tool call(s) were not allowed by the request's declared tools:",
            "E*- POST /v1/chat/completions (request 0, turn 0) (instruction '0'): tool call 'lookup_order': "
            "the request did not declare a tool named 'lookup_order' (it declared no tools)",
            "E*or allow this with @pytest.mark.mockllm(allow_undeclared_tools=True)*",
        ]
    )
    assert "(it declared 'get_weather')" in out
    assert "POST /v1/messages (request 0, turn 0)" in out


FORGOTTEN_TEST = """
from mockllm import InstructionChain

def test_one_miss_then_hits_that_fill_the_journal(FIXTURE):
    http = FIXTURE.httpx_client()
    def ask(content):
        body = {"model": "m", "messages": [{"role": "user", "content": content}]}
        assert http.post("/v1/chat/completions", json=body).status_code == 200
    ask("nobody scripted this")
    # The journal keeps 1000 entries and 8 MiB of them, a kept request body weighing twice
    # its bytes: eight scripted hits of 1 MB push the miss out, as 1000 small ones would.
    # One chain for all (each a conversation of its own): the mock parses its block once.
    chain = InstructionChain(instruction_chain=[{"messages": [{"text_message": {"text": "r"}}]}])
    scripted = chain.tagged("Go") + " " + "x" * 1_000_000
    for _ in range(8):
        ask(scripted)
    assert 0 not in [e.index for e in FIXTURE.journal]  # the journal has dropped the miss
    assert FIXTURE.journal.requests()[-1].messages[0]["role"] == "user"
"""


@pytest.mark.parametrize("fixture", ["mockllm", "mockllm_server"])
def test_a_miss_the_journal_forgot_still_fails_the_test(
    strict_pytester: pytest.Pytester, shared_server_conftest: str, fixture: str
) -> None:
    strict_pytester.makeconftest(shared_server_conftest)
    strict_pytester.makepyfile(test_forgotten=FORGOTTEN_TEST.replace("FIXTURE", fixture))
    result = strict_pytester.runpytest()
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(
        [
            "E*1 request(s) to the mock got the fallback reply:",
            "E*- POST /v1/chat/completions (request 0): fallback reply, no user message holds an instruction block",
        ]
    )


UNPOINTED_TEST = """
import openai
import pytest
from mockllm import UnmockedRequestError, intercept

def refusal(exc):
    # openai lets the refusal through; anthropic wraps it in an APIConnectionError.
    return exc if isinstance(exc, UnmockedRequestError) else exc.__cause__

def app():
    # The app builds its own client from a real-looking key: nobody pointed it at the mock.
    client = openai.OpenAI(api_key="sk-live-not-a-real-key", max_retries=0)
    try:
        return client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    except Exception as exc:
        assert isinstance(refusal(exc), UnmockedRequestError)  # refused in process, before any socket
        return None  # an app that swallows the error: the test must fail all the same

def test_forgot_to_point_the_client(FIXTURE):
    assert app() is None

def test_anthropic_too(FIXTURE):
    import anthropic
    with pytest.raises(Exception) as info:
        anthropic.Anthropic(api_key="sk-ant-live", max_retries=0).models.list()
    assert str(refusal(info.value)).startswith("mockllm refused GET https://api.anthropic.com/v1/models")

@pytest.mark.mockllm(allow_fallback=True)
def test_served_by_an_intercept_inside_the_test(mockllm):
    with intercept(mockllm):
        assert app().choices[0].message.content.startswith("mockllm fallback reply:")

@pytest.mark.mockllm(allow_real_providers=True)
def test_allowed_goes_through(FIXTURE):
    # Not refused: it goes on to the network (which this run's conftest stops at DNS).
    with pytest.raises(AssertionError, match="the network was touched: api.openai.com"):
        openai.OpenAI(api_key="k", max_retries=0).models.list()
"""


def refused_run(
    pytester: pytest.Pytester, conftest: str, tests: str, *, passed: int, errors: int, allowed_test: str
) -> pytest.RunResult:
    """Run ``tests`` with the network stopped at DNS (``CONFTEST``): they end as counted,
    and none before ``allowed_test`` (the one allowed real providers) touched the network."""
    pytester.makeconftest(CONFTEST + conftest)
    pytester.makepyfile(test_refused=tests)
    result = pytester.runpytest()
    result.assert_outcomes(passed=passed, errors=errors)
    assert "the network was touched" not in result.stdout.str().split(allowed_test)[0]
    return result


@pytest.mark.parametrize("fixture", ["mockllm", "mockllm_server"])
def test_a_client_not_pointed_at_the_mock_is_refused_and_fails_the_test(
    strict_pytester: pytest.Pytester, shared_server_conftest: str, fixture: str
) -> None:
    tests = UNPOINTED_TEST.replace("FIXTURE", fixture)
    result = refused_run(
        strict_pytester, shared_server_conftest, tests, passed=4, errors=2, allowed_test="test_allowed_goes_through"
    )
    out = result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            "E*1 request(s) went to hosts the mock does not serve:",
            "E*- POST https://api.openai.com/v1/chat/completions",
            "E*or allow this with @pytest.mark.mockllm(allow_real_providers=True)*",
        ]
    )
    assert "E             - GET https://api.anthropic.com/v1/models" in out


INTERCEPT_FIXTURE_TEST = """
import openai
import pytest
from mockllm import StrictnessError, intercept

def ask():
    return openai.OpenAI(api_key="k", max_retries=0).chat.completions.create(
        model="m", messages=[{"role": "user", "content": "hi"}])

def test_intercept_the_fixture_fails_on_a_miss(mockllm):
    with pytest.raises(StrictnessError, match="got the fallback reply"):
        with intercept(mockllm):
            ask()
    mockllm.mock.reset()  # reported already

@pytest.mark.mockllm(allow_fallback=True)
def test_the_marker_opt_out_reaches_intercept(mockllm):
    with intercept(mockllm):
        ask()
"""


def test_intercept_takes_the_fixture_and_its_marker(strict_pytester: pytest.Pytester) -> None:
    strict_pytester.makepyfile(test_intercept_fixture=INTERCEPT_FIXTURE_TEST)
    strict_pytester.runpytest().assert_outcomes(passed=2)
