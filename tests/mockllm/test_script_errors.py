"""A script built in Python with bad fields says what is wrong as a scenario file does:
one line per problem, the path written once, the nearest key for a misspelt one, and
none of pydantic's decorations (``Value error,``, ``[type=…]``, the documentation URL)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from harness.plugin.fixtures import MockLLMFixture, MockLLMServer
from harness.scenarios.model import ScenarioError, load_scenario
from mockllm import Instruction, InstructionChain, MockLLM, ScriptValidationError, TimingSpec

MISSPELT = [
    {"messages": [{"text_mesage": {"text": "x"}}]},
    {"messages": [{"text_message": {"lenght": 3}}]},
    {"messages": [{"text_message": {"text": "x"}}], "stop_reasn": "end_turn"},
    {"mesages": [{"text_message": {"text": "x"}}], "chunk_words": 0},
]
PROBLEMS = [
    "instruction_chain[0].messages[0]: a message needs a 'text_message' or a 'tool_call' key "
    "(unknown key 'text_mesage'; did you mean 'text_message'?)",
    "instruction_chain[1].messages[0].text_message: give exactly one of 'length' (a number of words) or "
    "'text' (unknown key 'lenght'; did you mean 'length'?)",
    "instruction_chain[3].chunk_words: Input should be greater than or equal to 1",
]


def _assert_clean(message: str) -> None:
    assert "errors.pydantic.dev" not in message
    assert "Value error," not in message and "[type=" not in message
    assert "text_message.text_message" not in message


def test_an_instruction_chain_reports_each_problem_on_its_own_line() -> None:
    with pytest.raises(ScriptValidationError) as info:
        InstructionChain(instruction_chain=MISSPELT)
    message = str(info.value)
    _assert_clean(message)
    assert message.splitlines() == ["invalid InstructionChain (3 problems):", *(f"  {p}" for p in PROBLEMS)]
    # Still pydantic's error: ``except ValidationError`` and ``errors()`` keep working.
    assert isinstance(info.value, ValidationError) and info.value.error_count() == 3


def test_unknown_keys_of_a_valid_chain_are_one_line_each() -> None:
    with pytest.raises(ScriptValidationError) as info:
        InstructionChain(instruction_chain=[MISSPELT[2], {"reasoning": {"text": "hm", "lenth": 1}}])
    assert str(info.value).splitlines()[1:] == [
        "  instruction_chain[0].stop_reasn: unknown key 'stop_reasn'; did you mean 'stop_reason'?",
        "  instruction_chain[1].reasoning.lenth: unknown key 'lenth'; did you mean 'length'?",
    ]


@pytest.mark.parametrize(
    ("build", "line"),
    [
        (lambda: Instruction(reasoning={"length": 1}, stop_reason="done"), "(top level): unknown stop_reason 'done'"),
        (lambda: TimingSpec(chunk_ms="slow"), "chunk_ms: Input should be a valid number"),
        (lambda: InstructionChain.model_validate({"instruction_chain": "x"}), "instruction_chain: Input should be"),
    ],
)
def test_every_scripting_model_reports_alike(build: Any, line: str) -> None:
    with pytest.raises(ScriptValidationError) as info:
        build()
    _assert_clean(str(info.value))
    assert str(info.value).splitlines()[1].startswith(f"  {line}")


@pytest.mark.parametrize("door", ["MockLLM.script", "fixture", "server fixture"])
def test_script_reports_a_bad_chain_and_a_bad_match_alike(door: str) -> None:
    mock = MockLLM()
    script = {
        "MockLLM.script": mock.script,
        "fixture": MockLLMFixture(mock).script,
        # The server fixture checks the chain before it sends it: no server needed.
        "server fixture": MockLLMServer("http://127.0.0.1:9").script,
    }[door]
    with pytest.raises(ScriptValidationError) as info:
        script(MISSPELT)
    _assert_clean(str(info.value))
    assert str(info.value).splitlines()[1:] == [f"  {p}" for p in PROBLEMS]
    with pytest.raises(ScriptValidationError) as info:
        script([{"messages": [{"text_message": {"text": "x"}}]}], {"modle": "gpt-4o"})
    assert str(info.value).splitlines()[1:] == ["  modle: unknown key 'modle'; did you mean 'model'?"]


def test_a_scenario_file_reports_the_same_problems(tmp_path: Path) -> None:
    lines = ["prompt: hi", "script:"]
    lines += ["  - messages: [{text_mesage: {text: x}}]", "  - messages: [{text_message: {lenght: 3}}]"]
    lines += ["  - {messages: [{text_message: {text: x}}], stop_reasn: end_turn}"]
    lines += ["  - {mesages: [{text_message: {text: x}}], chunk_words: 0}", "expect: {sucess: true}"]
    path = tmp_path / "typos.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    _assert_clean(str(info.value))
    # The keys are checked once the entries validate, as InstructionChain checks them.
    path.write_text("prompt: hi\nscript:\n" + lines[4] + "\n", encoding="utf-8")
    with pytest.raises(ScenarioError, match=r"typos.yaml:3: script\[0\].stop_reasn: unknown key 'stop_reasn'; did"):
        load_scenario(path)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    assert [line.split(": ", 1)[1] for line in str(info.value).splitlines()] == [
        *(p.replace("instruction_chain", "script") for p in PROBLEMS),
        "expect.sucess: unknown key 'sucess'; did you mean 'success'?",
    ]
