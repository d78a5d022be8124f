"""What a test that replays recordings is told when a request has none: re-record (the
plugin's own flags), not "fix the request the code sends" as for a provider's 4xx."""

from __future__ import annotations

import json

import pytest

ASK = {"model": "gpt-rec", "messages": [{"role": "user", "content": "Where is it?"}]}
REPLY = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 1,
    "model": "gpt-rec",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "Here."}, "finish_reason": "stop"}],
}
TESTS = """
import pytest

@pytest.mark.mockllm(record=True)
def test_recorded(mockllm):
    mockllm.httpx_client().post("/v1/chat/completions",
                                json={"model": "gpt-rec", "messages": [{"role": "user", "content": "Where was it?"}]})

@pytest.mark.mockllm(record=True)
def test_never_recorded(mockllm):
    mockllm.httpx_client().post("/v1/chat/completions", json={"model": "gpt-rec", "messages": []})
"""


def test_a_replay_miss_advises_re_recording_with_the_plugins_flags(strict_pytester: pytest.Pytester) -> None:
    project = strict_pytester
    project.makepyfile(test_replayed=TESTS)
    folder = project.path / "recordings" / "test_replayed"
    folder.mkdir(parents=True)
    recording = {
        "format": "mockllm-recording",
        "version": 1,
        "exchanges": [
            {"request": {"path": "/v1/chat/completions", "body": ASK}, "response": {"status": 200, "body": REPLY}}
        ],
    }
    (folder / "test_recorded.json").write_text(json.dumps(recording))

    result = project.runpytest("-p", "no:cacheprovider", "-k", "test_recorded")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(
        [
            "*1 request(s) to the mock were rejected with a 4xx no script asked for:",
            "*No recording matches this request*messages[[]0[]].content differs*",
            "*Re-record the test's file: run pytest with --mockllm-record-mode new*or all*--mockllm-upstream URL*",
        ]
    )
    assert "Fix the request the code sends" not in result.stdout.str()

    result = project.runpytest("-p", "no:cacheprovider", "-k", "test_never_recorded")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*Record the test's file: run pytest with --mockllm-record-mode once*"])
    assert "Fix the request the code sends" not in result.stdout.str()
