"""Scenario files load safely and a broken one is reported with file, line and field."""

from __future__ import annotations

from pathlib import Path

import pytest

import mockllm
from harness.scenarios.model import ScenarioError, load_scenario
from mockllm.testing import FileError, load_recording


def write(tmp_path: Path, text: str, name: str = "case.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_valid_scenario_loads_with_defaults(tmp_path: Path) -> None:
    scenario = load_scenario(
        write(
            tmp_path,
            """\
prompt: List all BC entities
protocols: all
script:
  - messages:
      - text_message: {text: Let me list the entities.}
      - tool_call: [{name: list_all_entities, args: {}}]
tools:
  - {name: list_all_entities, result: [Customer, Vendor]}
expect: {flow: tool_use}
""",
        )
    )
    assert scenario.name == "case"  # from the file name
    assert scenario.runner == "agent"
    assert scenario.protocol_list == list(mockllm.PROTOCOLS)
    assert scenario.tools[0].result == ["Customer", "Vendor"]
    prompt = scenario.tagged_prompt()
    assert prompt.startswith("List all BC entities\n<|instruction_start|>")
    assert '"name":"list_all_entities"' in prompt


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "prompt: hi\nscript:\n  - messages:\n      - text_message: {length: 3}\n  - messages:\n      - bogus: 1\n",
            "case.yaml:6: script[1].messages[0]: a message needs a 'text_message' or a 'tool_call' key",
        ),
        (
            "prompt: hi\nprotocols: [anthropic-messages, cohere]\n",
            "case.yaml:2: protocols[1]: 'cohere' is not a protocol the mock speaks; use one of openai-chat, "
            "anthropic-messages, openai-responses, gemini, azure-openai, ollama, bedrock-converse, bedrock-invoke (or all)",
        ),
        (
            "prompt: hi\nrunner: side ways\n",
            "case.yaml:2: runner: 'side ways' is neither a runner name (agent, chain, planner, or one a hook",
        ),
        ("prompt: hi\nscript: [\n", "case.yaml:3: not valid YAML"),
        (
            "prompt: hi\ntools:\n  - name: x\n    aproval: true\n",
            "case.yaml:4: tools[0].aproval: unknown key 'aproval'; did you mean 'approval'?",
        ),
        ("script: []\n", "case.yaml:1: prompt: Field required"),
        ("- just a list\n", "case.yaml:1: a scenario is a mapping of fields, got list"),
        (
            "prompt: hi\nscript:\n  - reasoning: {length: 2, text: both}\n",
            "case.yaml:3: script[0].reasoning: give exactly one of 'length'",
        ),
        ("prompt: hi\nexpect: {flow: sideways}\n", "case.yaml:2: expect.flow: 'sideways' is not a flow; use one of"),
    ],
)
def test_a_broken_scenario_names_file_line_and_field(tmp_path: Path, text: str, expected: str) -> None:
    with pytest.raises(ScenarioError) as info:
        load_scenario(write(tmp_path, text))
    assert str(info.value).startswith(str(tmp_path / expected.split(":")[0]) + expected[len("case.yaml") :])


def test_every_problem_is_listed_with_its_own_line(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError) as info:
        load_scenario(write(tmp_path, "prompt: hi\ntoolz: []\ntools:\n  - name: x\n    aproval: true\n"))
    lines = str(info.value).splitlines()
    assert [line.split(": ", 1)[0].rsplit(":", 1)[1] for line in lines] == ["2", "5"]


def test_yaml_is_loaded_safely(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="not valid YAML"):
        load_scenario(write(tmp_path, "prompt: !!python/object/apply:os.system ['echo hacked']\n"))


def test_a_missing_file_is_a_scenario_error(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="cannot read the file"):
        load_scenario(tmp_path / "nope.yaml")


def test_a_bad_scenario_and_a_bad_recording_are_caught_as_one_file_error(tmp_path: Path) -> None:
    """A tool reading both kinds of file catches ``mockllm.testing.FileError`` once and
    reads where each went wrong."""
    scenario = write(tmp_path, "prompt: hi\ntoolz: []\n")
    recording = tmp_path / "case.json"
    recording.write_text('{"format": "mockllm-recording", "version": 1, "exchanges": 3}', encoding="utf-8")
    caught = []
    for path, load in ((scenario, load_scenario), (recording, load_recording)):
        try:
            load(path)
        except FileError as exc:
            caught.append((type(exc).__name__, exc.path.name, exc.line, str(exc).startswith(f"{path}:{exc.line}: ")))
    assert caught == [("ScenarioError", "case.yaml", 2, True), ("RecordingError", "case.json", 1, True)]


def test_a_chain_plan_with_an_unknown_step_key_names_it(tmp_path: Path) -> None:
    path = write(tmp_path, "runner: chain\nprompt: hi\nplan:\n  steps:\n    - {toolName: x, toolname: y}\n")
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    assert str(info.value).startswith(f"{path}:4: plan: steps[0]: unknown key(s) ['toolname']")


def test_chain_scenario_documents_and_policies_are_validated(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "runner: chain\nprompt: hi\ndocuments:\n  - {uri: not-a-uri, text: t}\npolicies:\n  - {name: p, rules: []}\n",
    )
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    lines = str(info.value).splitlines()
    assert lines[0].startswith(f"{path}:4: documents[0].uri: String should match pattern")
    assert lines[1].startswith(f"{path}:6: policies[0].rules: List should have at least 1 item")
