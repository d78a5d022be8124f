"""A bundled runner refuses an option it does not read, naming it and its options.
Before, the chain runner ignored a misspelt option (``rooting: false`` ran with routing
on, so the scenario passed as a run it does not describe), and the agent and planner
runners failed with a bare ``TypeError`` from a constructor."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from harness.plugin.fixtures import MockLLMFixture
from harness.scenarios.model import load_scenario
from harness.scenarios.playback import run_scenario
from mockllm import MockLLM


def play(tmp_path: Path, runner: str, options: str) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(
        f"runner: {runner}\nprompt: Hi\noptions: {options}\nscript: [{{messages: [{{text_message: {{text: a}}}}]}}]\n"
    )
    asyncio.run(run_scenario(load_scenario(path), "openai-chat", MockLLMFixture(MockLLM())))


@pytest.mark.parametrize(
    ("runner", "options", "message"),
    [
        (
            "chain",
            "{rooting: false}",
            "options.rooting: the chain runner has no option 'rooting'; did you mean 'routing'?",
        ),
        (
            "agent",
            "{max_turn: 3}",
            "options.max_turn: the agent runner has no option 'max_turn'; did you mean 'max_turns'?",
        ),
        ("planner", "{retries: 2}", "options.retries: the planner runner has no option 'retries'"),
    ],
)
def test_a_misspelt_option_is_named_with_the_runners_options(
    tmp_path: Path, runner: str, options: str, message: str
) -> None:
    with pytest.raises(ValueError, match="Its options: ") as raised:
        play(tmp_path, runner, options)
    assert str(raised.value).startswith(message)


def test_known_options_still_run(tmp_path: Path) -> None:
    play(tmp_path, "agent", "{max_turns: 3, enable_thinking: false}")
