"""A registered script no request answered fails as unused, even when another script (or
a tagged prompt) with the same chain answered: its steps were never reached *by it*.

Steps were once counted per chain, so ``script(S, match="Oslo")`` and
``script(S, match="Rome")`` shared one row, and an app that never asked about Rome passed.
"""

from __future__ import annotations

import httpx
import pytest

from mockllm import HTTPXTransport, InstructionChain, MockLLM, StrictnessError

STEP = [{"messages": [{"text_message": {"text": "Sunny."}}]}]


def _ask(mock: MockLLM, content: str) -> None:
    with httpx.Client(transport=HTTPXTransport(mock), base_url="http://mock") as client:
        body = {"model": "m", "messages": [{"role": "user", "content": content}]}
        assert client.post("/v1/chat/completions", json=body).status_code == 200


def test_the_same_chain_for_another_match_that_nobody_asked_is_unused() -> None:
    mock = MockLLM()
    mock.script(STEP, match="Oslo")
    rome = mock.script(STEP, match="Rome")
    _ask(mock, "Weather in Oslo?")
    (unused,) = mock.unused_steps()
    assert unused.script_id == rome.id
    with pytest.raises(StrictnessError, match=rf"1 scripted instruction step\(s\) were never used:\n.*of {rome.id}"):
        mock.verify()


def test_a_tagged_prompt_does_not_use_a_registered_script_of_the_same_chain() -> None:
    mock = MockLLM()
    mock.script(STEP)
    _ask(mock, InstructionChain(instruction_chain=STEP).tagged("Weather in Oslo?"))
    assert [step.script_id for step in mock.unused_steps()] == ["script-1"]


def test_each_script_that_answered_is_used() -> None:
    mock = MockLLM()
    mock.script(STEP, match="Oslo")
    mock.script(STEP, match="Rome")
    mock.script(STEP, match="Oslo")  # the same chain and match again: the same script
    _ask(mock, "Weather in Oslo?")
    _ask(mock, "Weather in Rome?")
    assert mock.unused_steps() == []
    mock.verify()
