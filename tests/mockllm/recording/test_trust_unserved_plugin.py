"""A replayed test whose app makes fewer model calls than were recorded fails, as a
scripted one does (``unused_step``): a tool loop that stops sending the tool result back
to the model would otherwise pass in replay, its first call answered from the file."""

from __future__ import annotations

import pytest

from tests.mockllm.recording.support import mock_upstream

TESTS = """
import pytest
from mockllm import InstructionChain

PROMPT = InstructionChain(instruction_chain=[
    {"messages": [{"tool_call": [{"name": "lookup", "args": {"q": "x"}}]}]},
    {"messages": [{"text_message": {"text": "Found it."}}]},
]).tagged("Where is it?")
TOOLS = [{"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}}]
SEND_RESULT = True

def tool_loop(client):
    messages = [{"role": "user", "content": PROMPT}]
    first = client.chat.completions.create(model="gpt-rec", messages=messages, tools=TOOLS)
    call = first.choices[0].message.tool_calls[0]
    assert call.function.name == "lookup"
    if SEND_RESULT:
        messages += [first.choices[0].message.model_dump(exclude_none=True),
                     {"role": "tool", "tool_call_id": call.id, "content": "42"}]
        second = client.chat.completions.create(model="gpt-rec", messages=messages, tools=TOOLS)
        assert second.choices[0].message.content == "Found it."

@pytest.mark.mockllm(record=True{options})
def test_in_process(mockllm):
    tool_loop(mockllm.openai())

@pytest.mark.mockllm(record=True{options})
def test_over_http(mockllm_server):
    tool_loop(mockllm_server.openai())
"""


def write_tests(project: pytest.Pytester, *, send_result: bool, options: str = "") -> None:
    source = TESTS.replace("{options}", options)
    project.makepyfile(test_loop=source.replace("SEND_RESULT = True", f"SEND_RESULT = {send_result}"))


def test_a_replayed_tool_loop_that_stops_short_fails(strict_pytester: pytest.Pytester) -> None:
    project = strict_pytester
    write_tests(project, send_result=True)
    with mock_upstream() as upstream:
        recorded = project.runpytest(
            "-p", "no:cacheprovider", "--mockllm-record-mode", "once", "--mockllm-upstream", upstream
        )
        recorded.assert_outcomes(passed=2)
    # The whole loop replays green with the upstream gone.
    project.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=2)
    # The app no longer sends the tool result back: its one call is answered from the file,
    # and the exchange it never asked for fails the test at teardown, on both doors.
    write_tests(project, send_result=False)
    short = project.runpytest("-p", "no:cacheprovider")
    short.assert_outcomes(passed=2, errors=2)
    short.stdout.fnmatch_lines(
        [
            "*1 scripted instruction step(s) were never used:*",
            "*recorded exchange test_in_process.json#1 was never requested*",
            "*made fewer model calls than its recording holds*--mockllm-record-mode all*",
        ]
    )
    short.stdout.fnmatch_lines(["*recorded exchange test_over_http.json#1 was never requested*"])
    # Meant: the test says so with the unused-steps opt-out.
    write_tests(project, send_result=False, options=", allow_unused_steps=True")
    project.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=2)


ONE_CALL = """
import pytest

CALLS = 1

@pytest.mark.mockllm(record=True)
def test_asks_once(mockllm):
    client = mockllm.openai()
    for _ in range(CALLS):
        reply = client.chat.completions.create(model="gpt-rec", messages=[{"role": "user", "content": "Hi"}])
        assert reply.choices[0].message.content
"""


def test_a_replayed_call_sent_more_often_than_recorded_fails(strict_pytester: pytest.Pytester) -> None:
    project = strict_pytester
    project.makepyfile(test_once=ONE_CALL)
    with mock_upstream() as upstream:
        flags = ["-p", "no:cacheprovider", "--mockllm-upstream", upstream]
        project.runpytest(*flags, "--mockllm-record-mode", "once").assert_outcomes(passed=1)
        project.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)
        # The app now sends the same call twice: the second is not the first's reply again.
        project.makepyfile(test_once=ONE_CALL.replace("CALLS = 1", "CALLS = 2"))
        twice = project.runpytest("-p", "no:cacheprovider")
        twice.assert_outcomes(failed=1, errors=1)
        twice.stdout.fnmatch_lines(
            ["*is recorded 1 time(s), last as *test_asks_once.json (exchange 0), and the test sent it once more*"]
        )
        # Meant: record mode new appends the extra call, and replay answers both.
        project.runpytest(*flags, "--mockllm-record-mode", "new").assert_outcomes(passed=1)
    project.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)
