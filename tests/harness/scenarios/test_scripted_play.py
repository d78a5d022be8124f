"""A scenario item fails when the mock served its run something nobody scripted — a step
never reached, a fallback reply, an unscripted 4xx — in process and over the server, with
the bundled runner and a user's own, and writes no golden; and a user's runner reaches
the mock with a client of its own, built from the context's URL or the environment."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.scenarios.runners import MODEL_CLIENT_PROTOCOLS

ROOT = Path(__file__).resolve().parents[3]
TOOL_USE = (ROOT / "scenarios" / "tool_use.yaml").read_text()
NEVER_REACHED = """  - id: never
    messages:
      - text_message: {text: Nobody asks for this.}
tools:"""

RUNNER = """
import socket

import httpx
import openai

def ask(client, prompt):
    reply = client.chat.completions.create(model="gpt-mock", messages=[{"role": "user", "content": prompt}])
    return [{"type": "answer", "content": reply.choices[0].message.content}]

def once(context):
    return ask(context.openai(), context.scenario.tagged_prompt())

def twice(context):
    client = context.openai()
    return ask(client, context.scenario.tagged_prompt()) + ask(client, "no script here")

def bad_request(context):
    events = once(context)
    with httpx.Client(base_url=context.openai_base_url) as client:
        status = client.post("/chat/completions", json={"model": "gpt-mock"}).status_code
    return events + [{"type": "probe", "status": status}]

def own_client(context):
    client = openai.OpenAI(base_url=context.openai_base_url, api_key="k", max_retries=0)
    try:
        return ask(client, context.scenario.tagged_prompt())
    finally:
        client.close()

def provider_host(context):
    # Aimed at the real provider, as an app that hard-codes its URL is: the item refuses it.
    # DNS is stubbed out, so that a broken refusal fails here instead of reaching the network.
    real_getaddrinfo = socket.getaddrinfo
    socket.getaddrinfo = lambda *args, **kwargs: (_ for _ in ()).throw(OSError("no network in this test"))
    client = openai.OpenAI(base_url="https://api.openai.com/v1", api_key="sk-real", max_retries=0)
    try:
        ask(client, "hello")
    except Exception:
        pass  # the app swallows the failure; the item must still fail
    finally:
        client.close()
        socket.getaddrinfo = real_getaddrinfo
    return once(context)

def from_environment(context):
    client = openai.OpenAI(max_retries=0)
    try:
        return ask(client, context.scenario.tagged_prompt())
    finally:
        client.close()
"""

USER_SCENARIO = """
runner: my_runner:{runner}
protocols: [openai-chat]
prompt: Say hello
script:
  - messages: [{{text_message: {{text: Hello.}}}}]
{steps}
{extra}
"""

MODES = [pytest.param([], id="in-process"), pytest.param(["--mockllm-replay-server"], id="server")]


@pytest.fixture
def project(strict_pytester: pytest.Pytester, shared_server_conftest: str) -> pytest.Pytester:
    # The items over the server play on this session's server (tests/conftest.py).
    strict_pytester.makeconftest(shared_server_conftest)
    strict_pytester.makepyfile(my_runner=RUNNER)
    strict_pytester.syspathinsert()
    (strict_pytester.path / "scenarios").mkdir()
    return strict_pytester


def user_scenario(project: pytest.Pytester, runner: str, *script: str, extra: str = "") -> None:
    steps = "".join(f"  - {step}\n" for step in script)
    text = USER_SCENARIO.format(runner=runner, steps=steps, extra=extra)
    (project.path / "scenarios" / "hello.yaml").write_text(text)


def goldens(project: pytest.Pytester) -> list[str]:
    return sorted(p.name for p in (project.path / "golden").rglob("*.golden"))


@pytest.mark.parametrize("mode", MODES)
def test_a_step_the_bundled_runner_never_reaches_fails_and_writes_no_golden(
    project: pytest.Pytester, mode: list[str]
) -> None:
    (project.path / "scenarios" / "tool_use.yaml").write_text(TOOL_USE.replace("tools:", NEVER_REACHED, 1))
    result = project.runpytest("scenarios", "--snapshot-update", *mode)
    result.assert_outcomes(failed=len(MODEL_CLIENT_PROTOCOLS))  # tool_use says ``protocols: all``
    result.stdout.fnmatch_lines(["*1 scripted instruction step(s) were never used:*", "*step 2 ('never')*"])
    assert goldens(project) == []


@pytest.mark.parametrize("mode", MODES)
def test_a_step_a_users_runner_never_reaches_fails(project: pytest.Pytester, mode: list[str]) -> None:
    user_scenario(project, "once", "{id: later, messages: [{text_message: {text: Later.}}]}")
    result = project.runpytest("scenarios", "--snapshot-update", *mode)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*step 1 ('later')*", "*allow_unused_steps: true*"])
    assert goldens(project) == []


@pytest.mark.parametrize("mode", MODES)
def test_a_fallback_reply_fails_the_item(project: pytest.Pytester, mode: list[str]) -> None:
    user_scenario(project, "twice")
    result = project.runpytest("scenarios", "--snapshot-update", *mode)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*1 request(s) to the mock got the fallback reply:*", "*fallback reply*"])
    assert goldens(project) == []


@pytest.mark.parametrize("mode", MODES)
def test_an_unscripted_4xx_fails_the_item(project: pytest.Pytester, mode: list[str]) -> None:
    user_scenario(project, "bad_request")
    result = project.runpytest("scenarios", "--snapshot-update", *mode)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*rejected with a 4xx no script asked for:*", "*rejected with 400*"])
    assert goldens(project) == []


def test_a_scenario_may_allow_fallbacks_and_unused_steps(project: pytest.Pytester) -> None:
    later = "{id: later, messages: [{text_message: {text: Later.}}]}"
    user_scenario(project, "twice", later, extra="allow_unused_steps: true")
    project.runpytest("scenarios").assert_outcomes(failed=1)  # the fallback still fails it
    user_scenario(project, "twice", later, extra="allow_unused_steps: true\nallow_fallback: true")
    project.runpytest("scenarios", "--snapshot-update").assert_outcomes(passed=1)
    assert "mockllm fallback reply" in (project.path / "golden" / "scenarios" / "hello.golden").read_text()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("runner", ["own_client", "from_environment"])
def test_a_users_own_client_reaches_the_mock(project: pytest.Pytester, mode: list[str], runner: str) -> None:
    user_scenario(project, runner)
    result = project.runpytest("scenarios", "--snapshot-update", *mode)
    result.assert_outcomes(passed=1)
    assert 'content="Hello."' in (project.path / "golden" / "scenarios" / "hello.golden").read_text()


@pytest.mark.parametrize("mode", MODES)
def test_a_runner_aimed_at_a_real_provider_fails_the_item(project: pytest.Pytester, mode: list[str]) -> None:
    user_scenario(project, "provider_host")
    result = project.runpytest("scenarios", "--snapshot-update", *mode)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*went to hosts the mock does not serve:*", "*POST https://api.openai.com/v1/chat/completions*"]
    )
    assert goldens(project) == []


def test_a_tool_call_the_runner_never_declared_fails_the_item_with_a_sentence_that_says_what_to_fix(
    project: pytest.Pytester,
) -> None:
    # A scenario file has no field that allows undeclared tool calls, so the failure ends
    # with the fix alone; it once read "or allow this with no scenario field allows this".
    (project.path / "scenarios" / "hello.yaml").write_text(
        "runner: my_runner:once\nprotocols: [openai-chat]\nprompt: Say hello\n"
        "script:\n  - messages: [{tool_call: [{name: weather, args: {city: Oslo}}]}]\n"
    )
    advice = (
        "A real provider only calls a tool the request declares and its tool choice allows, with arguments that "
        "fit its schema. Declare the tool in the request's tools, or fix the script's tool calls or the request's "
        "tool_choice."
    )
    result = project.runpytest("scenarios")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*tool call 'weather': the request did not declare a tool named 'weather' (it declared no tools)", advice]
    )
    assert "allow this with" not in result.stdout.str()
