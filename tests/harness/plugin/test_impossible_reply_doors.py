"""A scripted reply no provider could give (``impossible_reply``) at every door: the
``mockllm`` and ``mockllm_server`` fixtures with the marker, the flag and the ini option,
``intercept()``, and a scenario file's ``allow_impossible_replies`` (docs/strictness.md)."""

from __future__ import annotations

import openai
import pytest

from mockllm import InstructionChain, MockLLM, StrictnessError, intercept
from tests.conftest import PYTESTER_INI

HELPERS = """
from mockllm import InstructionChain

def said(text, **step):
    return InstructionChain(instruction_chain=[{"messages": [{"text_message": {"text": text}}], **step}]).tagged("Go")

LONG = said("This reply says far more than the eight tokens the request allows it to say.")

def ask(clients, prompt, **fields):
    return clients.anthropic().messages.create(
        model="c", max_tokens=fields.pop("max_tokens", 8), messages=[{"role": "user", "content": prompt}], **fields)
"""

INNER = """
import pytest
from helpers import LONG, ask, said

@pytest.mark.mockllm(allow_impossible_replies=True)
def test_allowed(FIXTURE):
    ask(FIXTURE, LONG)

def test_past_the_limit(FIXTURE):
    assert ask(FIXTURE, LONG).stop_reason == "end_turn"

def test_breaking_the_format(FIXTURE):
    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    ask(FIXTURE, said('{"town": "Oslo"}'), max_tokens=99,
        output_config={"format": {"type": "json_schema", "schema": schema}})

def test_cut_at_the_limit(FIXTURE):
    assert ask(FIXTURE, said("A long reply, cut where the limit falls.", stop_reason="max_tokens")).stop_reason == "max_tokens"
"""


@pytest.mark.parametrize("fixture", ["mockllm", "mockllm_server"])
def test_an_impossible_reply_fails_the_test_at_teardown(
    strict_pytester: pytest.Pytester, shared_server_conftest: str, fixture: str
) -> None:
    strict_pytester.makeconftest(shared_server_conftest)
    strict_pytester.makepyfile(helpers=HELPERS, test_inner=INNER.replace("FIXTURE", fixture))
    result = strict_pytester.runpytest()
    result.assert_outcomes(passed=4, errors=2)
    result.stdout.fnmatch_lines(
        [
            "E*1 scripted reply(ies) were ones a real provider never gives to such a request:",
            "E*- POST /v1/messages (request 0, turn 0) (instruction '0'): the reply is 19 tokens by the mock's rule*"
            "and the request allows max_tokens=8: a real provider would have cut it there and said so",
            "E*or allow this with @pytest.mark.mockllm(allow_impossible_replies=True) (or "
            "--mockllm-allow-impossible-replies, or the ini option mockllm_allow_impossible_replies).",
        ]
    )
    result.stdout.fnmatch_lines(
        ["E*the reply's text breaks the request's output_config.format's json_schema*'city' is a required property"]
    )
    assert "test_cut_at_the_limit - " not in result.stdout.str()


def test_the_flag_and_the_ini_option_allow_it(strict_pytester: pytest.Pytester) -> None:
    strict_pytester.makepyfile(helpers=HELPERS, test_inner=INNER.replace("FIXTURE", "mockllm"))
    strict_pytester.runpytest("--mockllm-allow-impossible-replies").assert_outcomes(passed=4)
    strict_pytester.makeini(PYTESTER_INI + "mockllm_allow_impossible_replies = true\n")
    strict_pytester.runpytest().assert_outcomes(passed=4)


def long_reply(mock: MockLLM) -> None:
    prompt = InstructionChain(
        instruction_chain=[{"messages": [{"text_message": {"text": "A reply longer than four tokens."}}]}]
    ).tagged("Go")
    client = openai.OpenAI(api_key="k", max_retries=0)  # its default host: intercept() serves it
    client.chat.completions.create(model="m", max_tokens=4, messages=[{"role": "user", "content": prompt}])


def test_intercept_fails_when_the_block_ends_unless_allowed() -> None:
    with pytest.raises(StrictnessError, match=r"allows max_tokens=4") as info:
        with intercept(MockLLM()) as mock:
            long_reply(mock)
    assert "intercept(..., allow_impossible_replies=True) (or MockLLM(allow_impossible_replies=True))" in str(
        info.value
    )
    with intercept(MockLLM(), allow_impossible_replies=True) as mock:
        long_reply(mock)


RUNNER = """
def short(context):
    reply = context.openai().chat.completions.create(
        model="gpt-mock", max_tokens=5, messages=[{"role": "user", "content": context.scenario.tagged_prompt()}])
    return [{"type": "answer", "content": reply.choices[0].message.content}]
"""

SCENARIO = """
runner: my_runner:short
protocols: [openai-chat]
prompt: Say hello
script:
  - messages: [{text_message: {text: Hello there; this reply is longer than five tokens.}}]
"""


def test_a_scenario_may_allow_impossible_replies(strict_pytester: pytest.Pytester) -> None:
    strict_pytester.makepyfile(my_runner=RUNNER)
    strict_pytester.syspathinsert()
    (strict_pytester.path / "scenarios").mkdir()
    scenario = strict_pytester.path / "scenarios" / "hello.yaml"
    scenario.write_text(SCENARIO)
    result = strict_pytester.runpytest("scenarios", "--snapshot-update")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*the request allows max_tokens=5*",
            "*or allow this with allow_impossible_replies: true in the scenario file*",
        ]
    )
    scenario.write_text(SCENARIO + "allow_impossible_replies: true\n")
    strict_pytester.runpytest("scenarios", "--snapshot-update").assert_outcomes(passed=1)
