"""Two mocks over one SQLite file act as one mock: what ``serve --workers`` relies on,
tested in one process (each ``MockLLM`` stands for a worker)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from mockllm import MockLLM
from mockllm._state import State, open_state

CHAT = "/v1/chat/completions"
HEADERS = {"content-type": "application/json"}


@pytest.fixture
def workers(tmp_path: Path) -> Iterator[tuple[MockLLM, MockLLM]]:
    states: list[State] = [open_state(f"sqlite://{tmp_path}/state.db") for _ in range(2)]
    try:
        yield MockLLM(state=states[0]), MockLLM(state=states[1])
    finally:
        for state in states:
            state.close()


def chat(mock: MockLLM, text: str, **headers: str) -> tuple[int, dict]:
    body = json.dumps({"model": "gpt-4o", "messages": [{"role": "user", "content": text}]}).encode()
    reply = mock.handle("POST", CHAT, {**HEADERS, **headers}, body)
    return reply.status, json.loads(reply.body)


def test_a_script_registered_through_one_is_served_by_the_other(workers: tuple[MockLLM, MockLLM]) -> None:
    first, second = workers
    first.script([{"id": "hello", "messages": [{"text_message": {"text": "Shared hello."}}]}], match="greet")
    status, body = chat(second, "please greet me")
    assert status == 200 and body["choices"][0]["message"]["content"] == "Shared hello."
    assert [e.script_id for e in first.journal] == ["script-1"]
    assert first.unused_steps() == [] and second.findings().counts == {}
    second.scripts.remove("script-1")
    assert not first.scripts


def test_the_attempt_count_is_one_count_across_them(workers: tuple[MockLLM, MockLLM]) -> None:
    first, second = workers
    first.script(
        [{"id": "flaky", "error": {"status": 503, "times": 1}, "messages": [{"text_message": {"text": "Back."}}]}]
    )
    assert chat(first, "retry me")[0] == 503
    status, body = chat(second, "retry me")
    assert status == 200 and body["choices"][0]["message"]["content"] == "Back."
    assert [(e.attempt, e.attempt_rule) for e in second.journal] == [(0, "repeat"), (1, "repeat")]


def test_a_responses_conversation_continues_on_the_other(workers: tuple[MockLLM, MockLLM]) -> None:
    first, second = workers
    first.script(
        [
            {"id": "one", "messages": [{"text_message": {"text": "First."}}]},
            {"id": "two", "messages": [{"text_message": {"text": "Second."}}]},
        ]
    )
    opened = first.handle("POST", "/v1/responses", HEADERS, json.dumps({"model": "m", "input": "hi"}).encode())
    previous = json.loads(opened.body)["id"]
    follow = {"model": "m", "input": "and then?", "previous_response_id": previous}
    reply = second.handle("POST", "/v1/responses", HEADERS, json.dumps(follow).encode())
    assert reply.status == 200, reply.body
    assert json.loads(reply.body)["output"][0]["content"][0]["text"] == "Second."
    assert second.journal[-1].rebuilt_from == previous


def test_reset_through_one_resets_both_and_findings_are_counted_once(workers: tuple[MockLLM, MockLLM]) -> None:
    first, second = workers
    assert chat(first, "nothing scripts this")[0] == 200
    assert chat(second, "nor this")[0] == 200
    assert second.findings().counts == {"fallback": 2}
    assert [e.index for e in first.journal] == [0, 1]
    first.reset()
    assert second.journal == [] and second.findings().counts == {}
