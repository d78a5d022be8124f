"""A scenario's script that no request carried fails its item, like a step never
reached. Before, the mock counted the unused steps of the chains it saw only, so a
runner that never sent a turn's prompt (or asked the model nothing at all) passed, and
its golden froze the wrong run."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from harness.plugin.fixtures import MockLLMFixture
from harness.scenarios.model import load_scenario
from harness.scenarios.playback import check_expectations, run_scenario
from mockllm import MockLLM

RUNNERS = """
from harness import ScenarioRun, speaks

@speaks("openai-chat")
def first_only(context):
    client = context.openai()
    reply = client.chat.completions.create(
        model="gpt-mock", messages=[{"role": "user", "content": context.scenario.tagged_prompt()}]
    )
    text = reply.choices[0].message.content
    return ScenarioRun([{"type": "answer", "content": text}], True, None, text)  # the turns are forgotten

@speaks("openai-chat")
def asks_nothing(context):
    return [{"type": "answer", "content": "Hello there."}]
"""

SCENARIO = """
runner: {runner}
protocols: [openai-chat]
prompt: Hi
script: [{{messages: [{{text_message: {{text: Hello there.}}}}]}}]
{rest}
"""
TURN = 'turns: [{prompt: "And then?", script: [{messages: [{text_message: {text: Then this.}}]}]}]'


@pytest.fixture
def project(strict_pytester: pytest.Pytester) -> pytest.Pytester:
    """A project with the runners above, whose scenario files ``write`` adds."""
    strict_pytester.makepyfile(my_runners=RUNNERS)
    strict_pytester.syspathinsert()
    return strict_pytester


def write(project: pytest.Pytester, name: str, runner: str, rest: str = "") -> None:
    folder = project.path / "scenarios"
    folder.mkdir(exist_ok=True)
    (folder / f"{name}.yaml").write_text(SCENARIO.format(runner=runner, rest=rest))


def test_a_turn_never_sent_and_a_script_never_sent_fail_naming_them(project: pytest.Pytester) -> None:
    write(project, "forgets_turn", "my_runners:first_only", TURN)
    write(project, "asks_nothing", "my_runners:asks_nothing")
    result = project.runpytest("scenarios", "--snapshot-update")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(
        [
            "scenario 'asks_nothing' under openai-chat: no request to the mock carried script (prompt 'Hi', 1 step)*",
            "scenario 'forgets_turn' under openai-chat: no request to the mock carried turns[[]0[]].script "
            "(prompt 'And then?', 1 step)*",
        ]
    )
    assert not (project.path / "golden").exists()


def test_allow_unused_steps_accepts_it_and_a_runner_that_sends_every_script_passes(project: pytest.Pytester) -> None:
    write(project, "forgets_turn", "my_runners:first_only", TURN + "\nallow_unused_steps: true")
    write(project, "sends_it", "my_runners:first_only")
    project.runpytest("scenarios", "--snapshot-update").assert_outcomes(passed=2)


def test_a_turn_after_a_failed_message_is_never_sent(tmp_path: Path) -> None:
    path = tmp_path / "fails.yaml"
    path.write_text(
        "prompt: One\nscript: [{messages: [{text_message: {text: a}}]}]\n"
        "expect: {success: false, error_contains: Internal server error}\n"
        "turns:\n  - prompt: Two\n    script: [{error: {status: 500}}]\n"
        "  - prompt: Three\n    script: [{messages: [{text_message: {text: c}}]}]\n",
        encoding="utf-8",
    )
    scenario = load_scenario(path)
    run = asyncio.run(run_scenario(scenario, "openai-chat", MockLLMFixture(MockLLM())))
    problem = check_expectations(scenario, run)
    assert problem is not None
    assert "turns[1].script (prompt 'Three', 1 step)" in problem
