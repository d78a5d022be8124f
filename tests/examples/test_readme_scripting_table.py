"""Every message and reasoning form the README's scripting table shows works everywhere
the table says: in an instruction chain in a prompt, in a scenario file's ``script``
and in ``script()`` — each answered by its step, never by the fallback reply."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from harness.plugin.fixtures import MockLLMFixture
from harness.scenarios.model import load_scenario
from mockllm import InstructionChain
from mockllm._engine import MockLLM

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")


def _row(field: str) -> str:
    return next(line for line in README.splitlines() if line.startswith(f"| `{field}` |"))


def _forms(field: str) -> list[dict]:
    """The row's JSON forms, with their placeholders filled in."""
    forms = []
    for snippet in re.findall(r"`(\{.*?\})`", _row(field)):
        text = snippet.replace("N", "3").replace('"..."', '"Verbatim."').replace("{...}", '{"city": "Oslo"}')
        forms.append(json.loads(text))
    return forms


MESSAGES = _forms("messages")
REASONING = _forms("reasoning")
STEPS = [{"messages": [m]} for m in MESSAGES] + [
    {"reasoning": r, "messages": [{"text_message": {"length": 2}}]} for r in REASONING
]


def test_the_table_shows_each_form() -> None:
    assert len(MESSAGES) == 3 and len(REASONING) == 2


@pytest.mark.parametrize("step", STEPS, ids=[json.dumps(s) for s in STEPS])
def test_a_form_of_the_table_works_in_a_chain_a_scenario_file_and_script(step: dict, tmp_path: Path) -> None:
    chain = InstructionChain(instruction_chain=[step])
    scenario = tmp_path / "form.yaml"
    scenario.write_text(yaml.safe_dump({"prompt": "hi", "script": [step]}))
    mock = MockLLMFixture(MockLLM())
    try:
        mock.script([step], match="registered")
        for prompt in (chain.tagged("hi"), load_scenario(scenario).tagged_prompt(), "registered"):
            mock.anthropic().messages.create(model="m", max_tokens=256, messages=[{"role": "user", "content": prompt}])
        assert [e.fallback_reason for e in mock.journal] == [None, None, None]
    finally:
        mock.close()
