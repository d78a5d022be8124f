"""What tells recordings apart, the normalisers, and the diff a miss shows."""

from __future__ import annotations

import json
from pathlib import Path

from mockllm import MockLLM
from mockllm._recording.format import Exchange, Recording
from mockllm._recording.matching import RequestMatcher, field_diff
from mockllm._recording.replay import RecordingLibrary

PATH = "/v1/chat/completions"


def body(**changes: object) -> dict[str, object]:
    base: dict[str, object] = {
        "model": "gpt-4o",
        "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}],
        "tools": [{"type": "function", "function": {"name": "a", "parameters": {}}}],
    }
    return {**base, **changes}


def library(*bodies: dict[str, object], matcher: RequestMatcher | None = None) -> RecordingLibrary:
    exchanges = [
        Exchange.model_validate(
            {"request": {"path": PATH, "body": b}, "response": {"status": 200, "body": {"answer": i}}}
        )
        for i, b in enumerate(bodies)
    ]
    return RecordingLibrary([(Path("rec.json"), Recording(exchanges=exchanges))], matcher=matcher)


def ask(lib: RecordingLibrary, sent: dict[str, object]) -> tuple[int, dict[str, object]]:
    reply = MockLLM(recordings=lib).handle("POST", PATH, {}, json.dumps(sent).encode())
    return reply.status, json.loads(reply.body)


def test_system_prompt_tools_and_model_tell_recordings_apart() -> None:
    other_system = body(messages=[{"role": "system", "content": "Be long."}, {"role": "user", "content": "Hi"}])
    other_tools = body(tools=[{"type": "function", "function": {"name": "b", "parameters": {}}}])
    lib = library(body(), other_system, other_tools, body(model="gpt-4o-mini"))
    assert [ask(lib, b)[1] for b in (body(), other_system, other_tools, body(model="gpt-4o-mini"))] == [
        {"answer": 0},
        {"answer": 1},
        {"answer": 2},
        {"answer": 3},
    ]


def test_identical_requests_get_the_recorded_exchanges_in_order() -> None:
    lib = library(body(), body())
    assert [ask(lib, body())[1] for _ in range(3)] == [{"answer": 0}, {"answer": 1}, {"answer": 1}]


def test_default_normalisers_ignore_caller_identity_and_custom_ones_volatile_text() -> None:
    assert ask(library(body()), body(user="u-1", metadata={"run": "7"}))[0] == 200
    dated = body(messages=[{"role": "user", "content": "Today is 2026-11-25."}])
    matcher = RequestMatcher(replace=[(r"\d{4}-\d{2}-\d{2}", "<date>")], ignore=("temperature",))
    later = body(messages=[{"role": "user", "content": "Today is 2027-01-02."}], temperature=0.3)
    assert ask(library(dated, matcher=matcher), later)[0] == 200
    assert ask(library(dated), later)[0] == 404


def test_a_miss_names_the_nearest_recording_and_each_changed_field() -> None:
    lib = library(body(), body(model="other", tools=[]))
    sent = body(messages=[{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hello"}], top_p=1)
    status, error = ask(lib, sent)
    assert status == 404
    message = error["error"]["message"]  # type: ignore[index]
    assert "Nearest recording: rec.json (exchange 0)" in message
    assert 'messages[1].content differs (sent: "Hello", recorded: "Hi")' in message
    assert "top_p is new (sent: 1)" in message


def test_field_diff_lists_missing_and_new_items() -> None:
    assert field_diff({"m": [1, 2]}, {"m": [1, 3, 4]}) == [
        "m[1] differs (sent: 2, recorded: 3)",
        "m[2] is missing (recorded: 4)",
    ]


def test_a_miss_off_the_provider_routes_is_left_to_the_engine() -> None:
    reply = MockLLM(recordings=library(body())).handle("GET", "/v1/models", {}, b"")
    assert reply.status == 200
