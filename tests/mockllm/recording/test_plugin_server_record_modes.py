"""The record modes with the ``mockllm_server`` fixture: a test's clients reach a real
URL (the official SDKs, and a subprocess client that is not httpx), which records from
an upstream server, then replays from the test's file with it stopped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.mockllm.recording.support import mock_upstream

TESTS = """
import json, os, subprocess, sys
from pathlib import Path
import pytest
from mockllm import InstructionChain

SEEN = Path(os.environ["SEEN_DIR"])
PROMPT = InstructionChain(instruction_chain=[
    {"messages": [{"text_message": {"length": 12}}, {"tool_call": [{"name": "lookup", "args": {"q": "x"}}]}]},
    {"messages": [{"text_message": {"text": "Found it."}}]},
]).tagged("{question}")
TOOLS = [{"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}}]
CLAUDE_TOOLS = [{"name": "lookup", "input_schema": {"type": "object"}}]

def keep(name, value):
    SEEN.mkdir(parents=True, exist_ok=True)
    (SEEN / f"{name}.json").write_text(json.dumps(value, sort_keys=True, default=str))

@pytest.mark.mockllm(record=True)
def test_openai(mockllm_server):
    client = mockllm_server.openai()
    messages = [{"role": "user", "content": PROMPT}]
    first = client.chat.completions.create(model="gpt-rec", messages=messages, tools=TOOLS)
    call = first.choices[0].message.tool_calls[0]
    messages += [first.choices[0].message.model_dump(exclude_none=True),
                 {"role": "tool", "tool_call_id": call.id, "content": "42"}]
    stream = client.chat.completions.create(model="gpt-rec", messages=messages, tools=TOOLS, stream=True)
    chunks = [chunk.model_dump() for chunk in stream]
    assert "".join(c["choices"][0]["delta"]["content"] or "" for c in chunks if c["choices"]) == "Found it."
    keep("openai", {"first": first.model_dump(), "chunks": chunks})

@pytest.mark.mockllm(record=True)
def test_anthropic(mockllm_server):
    client = mockllm_server.anthropic()
    with client.messages.stream(model="claude-rec", max_tokens=100, tools=CLAUDE_TOOLS,
                                messages=[{"role": "user", "content": PROMPT}]) as stream:
        events = [event.model_dump() for event in stream]
    assert any(e["type"] == "content_block_start" and e["content_block"]["type"] == "tool_use" for e in events)
    plain = client.messages.create(model="claude-rec", max_tokens=100, tools=CLAUDE_TOOLS,
                                   messages=[{"role": "user", "content": PROMPT}])
    keep("anthropic", {"events": events, "plain": plain.model_dump()})

CLIENT = '''
import json, sys, urllib.request
body = json.dumps({"model": "gpt-rec", "stream": True, "messages": [{"role": "user", "content": sys.argv[2]}]})
request = urllib.request.Request(sys.argv[1] + "/v1/chat/completions", data=body.encode(),
                                 headers={"content-type": "application/json", "authorization": "Bearer test"})
with urllib.request.urlopen(request, timeout=30) as reply:
    sys.stdout.write(reply.read().decode())
'''

@pytest.mark.mockllm(record=True)
def test_subprocess_client(mockllm_server):
    done = subprocess.run([sys.executable, "-c", CLIENT, mockllm_server.base_url, PROMPT],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.endswith("data: [DONE]\\n\\n")
    keep("subprocess", done.stdout)
"""


def write_tests(project: pytest.Pytester, question: str) -> None:
    project.makepyfile(test_recorded=TESTS.replace("{question}", question))


def run(project: pytest.Pytester, seen: Path, monkeypatch: pytest.MonkeyPatch, *flags: str) -> pytest.RunResult:
    monkeypatch.setenv("SEEN_DIR", str(seen))
    return project.runpytest("-p", "no:cacheprovider", *flags)


def seen(folder: Path) -> dict[str, object]:
    return {path.stem: json.loads(path.read_text()) for path in sorted(folder.glob("*.json"))}


def test_mockllm_server_records_then_replays_offline(
    strict_pytester: pytest.Pytester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = strict_pytester
    write_tests(project, "Where is it?")
    # Mode none with no file: each test fails saying how to record.
    missing = run(project, tmp_path / "missing", monkeypatch)
    missing.assert_outcomes(failed=3, errors=3)
    missing.stdout.fnmatch_lines(
        ["*No recording file*test_openai.json exists for this test*--mockllm-record-mode once*"]
    )
    with mock_upstream() as upstream:
        recorded = run(
            project, tmp_path / "recorded", monkeypatch, "--mockllm-record-mode", "once", "--mockllm-upstream", upstream
        )
        recorded.assert_outcomes(passed=3)
    files = sorted((project.path / "recordings" / "test_recorded").glob("*.json"))
    assert [p.name for p in files] == ["test_anthropic.json", "test_openai.json", "test_subprocess_client.json"]
    openai_file = json.loads(files[1].read_text())
    assert [ex["request"]["body"].get("stream", False) for ex in openai_file["exchanges"]] == [False, True]
    assert "events" in openai_file["exchanges"][1]["response"]
    # The upstream is gone: every client gets from the server what it got while recording,
    # chunk for chunk (the same content, tool calls and event boundaries).
    run(project, tmp_path / "replayed", monkeypatch).assert_outcomes(passed=3)
    assert seen(tmp_path / "replayed") == seen(tmp_path / "recorded")
    assert len(seen(tmp_path / "recorded")["openai"]["chunks"]) > 3
    # A changed prompt fails with the nearest recording and the field that differs.
    write_tests(project, "Where was it?")
    changed = run(project, tmp_path / "changed", monkeypatch)
    changed.assert_outcomes(failed=3, errors=3)
    changed.stdout.fnmatch_lines(
        ["*No recording matches this request*test_openai.json (exchange 0)*messages[[]0[]].content differs*"]
    )
