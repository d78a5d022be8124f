"""A scenario of several messages in one session (``turns``): seed 002's sequence
numbers are a per-session counter, so each message's numbers continue the session's,
and each message's run must pass its flow from there."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from harness.plugin.fixtures import MockLLMFixture
from harness.scenarios.contract import ScenarioRun
from harness.scenarios.model import Scenario, ScenarioError, load_scenario
from harness.scenarios.playback import check_expectations, run_scenario
from mockllm import MockLLM

ROOT = Path(__file__).resolve().parents[3]
MULTI_TURN = ROOT / "scenarios" / "multi_turn_session.yaml"


def play(scenario: Scenario, protocol: str = "anthropic-messages") -> ScenarioRun:
    return asyncio.run(run_scenario(scenario, protocol, MockLLMFixture(MockLLM())))


def renumbered(events: list[Any], shift_from: int, shift: int) -> list[dict[str, Any]]:
    """The events as dicts, sequence numbers from ``shift_from`` on moved by ``shift``."""
    out = []
    for event in events:
        record = event.to_json_dict()
        if record["sequenceNumber"] is not None and record["sequenceNumber"] >= shift_from:
            record["sequenceNumber"] += shift
        out.append(record)
    return out


@pytest.mark.parametrize("protocol", ["anthropic-messages", "openai-chat"])
def test_each_message_continues_the_sessions_numbers_and_passes_its_flow(protocol: str) -> None:
    scenario = load_scenario(MULTI_TURN)
    run = play(scenario, protocol)
    assert run.success and run.final_text == "You're welcome."
    firsts = [e.sequence_number for e in run.events if e.type == "user_message_sent"]
    assert firsts == [0, 5, 11]  # the approval request (pending) takes 8 when stored
    assert [e.sequence_number for e in run.events if e.sequence_number is not None] == [*range(8), *range(9, 13)]
    assert {e.session_id for e in run.events} == {scenario.session_id}
    assert check_expectations(scenario, run) is None


def test_a_message_that_restarts_the_numbers_breaks_the_session() -> None:
    scenario = load_scenario(MULTI_TURN)
    run = play(scenario)
    # As if each message had a fresh store: the second message starts at 0 again.
    restarted = ScenarioRun(renumbered(run.events, shift_from=5, shift=-5), True, None, run.final_text)
    problem = check_expectations(scenario, restarted)
    assert problem is not None and "consecutive per session from 0" in problem
    assert "sequenceNumber 0, expected 5" in problem


def test_a_message_that_skips_numbers_breaks_its_own_flow() -> None:
    scenario = load_scenario(MULTI_TURN)
    run = play(scenario)
    # The third message starts two numbers late: a gap the session's count shows.
    gapped = ScenarioRun(renumbered(run.events, shift_from=11, shift=2), True, None, run.final_text)
    problem = check_expectations(scenario, gapped)
    assert problem is not None and "sequenceNumber 13, expected 11" in problem


def test_each_message_is_checked_against_its_own_flow() -> None:
    scenario = load_scenario(MULTI_TURN)
    run = play(scenario)
    # The second message asks for approval: it is no simple message.
    wrong = scenario.model_copy(
        update={"turns": [scenario.turns[0].model_copy(update={"flow": "simple_message"}), scenario.turns[1]]}
    )
    problem = check_expectations(wrong, run)
    assert problem is not None and "the simple message flow emits only" in problem
    assert "tool_use" in problem


def test_a_session_missing_a_message_is_named() -> None:
    scenario = load_scenario(MULTI_TURN)
    run = play(scenario)
    cut = next(i for i, e in enumerate(run.events) if e.sequence_number == 11)
    problem = check_expectations(scenario, ScenarioRun(run.events[:cut], True, None, None))
    assert problem == (
        "the scenario's session has 3 messages, but its events hold 2 user_message_sent (one per message)"
    )


def test_a_failed_message_ends_the_session(tmp_path: Path) -> None:
    path = tmp_path / "fails.yaml"
    path.write_text(
        "prompt: One\nscript: [{messages: [{text_message: {text: a}}]}]\n"
        "expect: {success: false, error_contains: Internal server error}\nallow_unused_steps: true\n"
        "turns:\n  - prompt: Two\n    script: [{error: {status: 500}}]\n"
        "  - prompt: Three\n    script: [{messages: [{text_message: {text: c}}]}]\n",
        encoding="utf-8",
    )
    scenario = load_scenario(path)
    run = play(scenario)
    assert not run.success
    assert [e.type for e in run.events if e.type == "user_message_sent"] == ["user_message_sent"] * 2
    assert run.events[-1].type == "error" and run.events[-1].sequence_number == 3
    assert check_expectations(scenario, run) is None


def test_turns_on_a_runner_that_plays_one_message_name_the_line(tmp_path: Path) -> None:
    path = tmp_path / "chain.yaml"
    path.write_text("runner: chain\nprompt: Plan it\nturns:\n  - prompt: Again\n", encoding="utf-8")
    with pytest.raises(
        ScenarioError,
        match=r"chain\.yaml:4: turns: the chain runner plays one "
        r"message; turns are played by the agent runner",
    ):
        load_scenario(path)
