"""pytest-recording's marker and flags for LLM traffic: record once from an upstream
server, then replay with it stopped; a changed prompt fails with the diff."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.mockllm.recording.support import mock_upstream

TESTS = """
import pytest
from mockllm import InstructionChain

PROMPT = InstructionChain(instruction_chain=[
    {"messages": [{"tool_call": [{"name": "lookup", "args": {"q": "x"}}]}]},
    {"messages": [{"text_message": {"text": "Found it."}}]},
]).tagged("{question}")
TOOLS = [{"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}}]

@pytest.mark.mockllm(record=True)
def test_tool_loop(mockllm):
    client = mockllm.openai()
    messages = [{"role": "user", "content": PROMPT}]
    first = client.chat.completions.create(model="gpt-rec", messages=messages, tools=TOOLS)
    call = first.choices[0].message.tool_calls[0]
    messages += [first.choices[0].message.model_dump(exclude_none=True),
                 {"role": "tool", "tool_call_id": call.id, "content": "42"}]
    with client.chat.completions.stream(model="gpt-rec", messages=messages, tools=TOOLS) as stream:
        text = "".join(e.delta for e in stream if e.type == "content.delta")
    assert text == "Found it."

@pytest.mark.mockllm(record=True)
def test_anthropic(mockllm):
    reply = mockllm.anthropic().messages.create(model="claude-rec", max_tokens=50,
        messages=[{"role": "user", "content": "{question}"}])
    assert reply.content[0].text
"""


def write_tests(project: pytest.Pytester, question: str) -> None:
    project.makepyfile(test_recorded=TESTS.replace("{question}", question))


def recordings(project: pytest.Pytester) -> list[Path]:
    return sorted((project.path / "recordings" / "test_recorded").glob("*.json"))


def test_record_once_then_replay_offline(strict_pytester: pytest.Pytester, tmp_path: Path) -> None:
    project = strict_pytester
    write_tests(project, "Where is it?")
    # Mode none with no file: the test fails saying how to record.
    missing = project.runpytest("-p", "no:cacheprovider")
    missing.assert_outcomes(failed=2, errors=2)
    missing.stdout.fnmatch_lines(
        ["*No recording file*test_tool_loop.json exists for this test*--mockllm-record-mode once*"]
    )
    with mock_upstream() as upstream:
        recorded = project.runpytest(
            "-p", "no:cacheprovider", "--mockllm-record-mode", "once", "--mockllm-upstream", upstream
        )
        recorded.assert_outcomes(passed=2)
    files = recordings(project)
    assert [p.name for p in files] == ["test_anthropic.json", "test_tool_loop.json"]
    loop = json.loads(files[1].read_text())
    assert [ex["response"]["status"] for ex in loop["exchanges"]] == [200, 200]
    assert "events" in loop["exchanges"][1]["response"]
    assert "Bearer test" not in files[1].read_text()
    # The upstream is gone: replay answers everything.
    project.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=2)
    # A changed prompt fails with the nearest recording and the field that differs.
    write_tests(project, "Where was it?")
    changed = project.runpytest("-p", "no:cacheprovider")
    changed.assert_outcomes(failed=2, errors=2)
    changed.stdout.fnmatch_lines(
        ["*No recording matches this request*test_tool_loop.json (exchange 0)*messages[[]0[]].content differs*"]
    )


def test_record_new_keeps_the_old_and_adds_the_new(strict_pytester: pytest.Pytester, tmp_path: Path) -> None:
    project = strict_pytester
    write_tests(project, "First question")
    with mock_upstream() as upstream:
        flags = ["-p", "no:cacheprovider", "--mockllm-upstream", upstream]
        project.runpytest(*flags, "--mockllm-record-mode", "once").assert_outcomes(passed=2)
        write_tests(project, "Second question")
        # The new question is recorded beside the old one; the old exchanges, which the
        # tests no longer ask for, fail them as unused (the file is written first).
        added = project.runpytest(*flags, "--mockllm-record-mode", "new")
        added.assert_outcomes(passed=2, errors=2)
        added.stdout.fnmatch_lines(["*recorded exchange test_anthropic.json#0 was never requested*"])
    anthropic = json.loads(recordings(project)[0].read_text())
    asked = [ex["request"]["body"]["messages"][0]["content"] for ex in anthropic["exchanges"]]
    assert asked == ["First question", "Second question"]
    # Replay answers the new question from the file, and still names the stale exchanges.
    stale = project.runpytest("-p", "no:cacheprovider")
    stale.assert_outcomes(passed=2, errors=2)
    stale.stdout.fnmatch_lines(["*record the file again: --mockllm-record-mode all*"])
    with mock_upstream() as upstream:
        flags = ["-p", "no:cacheprovider", "--mockllm-upstream", upstream, "--mockllm-record-mode", "all"]
        project.runpytest(*flags).assert_outcomes(passed=2)
    anthropic = json.loads(recordings(project)[0].read_text())
    assert len(anthropic["exchanges"]) == 1
    project.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=2)
