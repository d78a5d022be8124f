"""The Ollama codec's bytes and rules, through the engine: routes, NDJSON streams by
default, the ``done`` record, validation, faults, and the properties every protocol has
(determinism, turn counting from assistant messages, a fallback and never a 5xx)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from mockllm import MockLLM
from tests.mockllm.conversation_support import assistant, chain, results, tagged, text_step, to_ollama, user
from tests.mockllm.fuzz_strategies import json_values

CHAT, GENERATE = "/api/chat", "/api/generate"
SCRIPT = chain(text_step("one", length=5), text_step("two", length=3))


def _post(mock: MockLLM, path: str, body: Any) -> Any:
    return mock.handle("POST", path, {}, json.dumps(body).encode())


def _lines(reply: Any) -> list[dict[str, Any]]:
    return [json.loads(line) for line in reply.body.splitlines()]


def test_tool_results_are_no_user_turn_and_the_assistant_message_is_the_turn() -> None:
    mock = MockLLM()
    body = to_ollama(
        [user(tagged(SCRIPT)), assistant(None, [("call_1", "fetch", {"q": 1})]), results(("call_1", "ok"))]
    )
    reply = _post(mock, CHAT, body)
    assert reply.status == 200 and mock.journal[-1].turn_index == 1 and mock.journal[-1].instruction_id == "two"
    assert len(json.loads(reply.body)["message"]["content"].split()) == 3


def test_a_stream_unless_stream_is_false_and_its_last_line_is_the_done_record() -> None:
    body = {"model": "llama-mock", "messages": [{"role": "user", "content": tagged(SCRIPT)}]}
    streamed = _post(MockLLM(), CHAT, body)
    assert streamed.streaming and dict(streamed.headers)["content-type"] == "application/x-ndjson"
    lines = _lines(streamed)
    whole = json.loads(_post(MockLLM(), CHAT, {**body, "stream": False}).body)
    assert [line["done"] for line in lines] == [False] * 5 + [True]
    assert "".join(line["message"]["content"] for line in lines) == whole["message"]["content"]
    timing = ("total_duration", "load_duration", "prompt_eval_count", "prompt_eval_duration", "eval_count")
    assert {name: lines[-1][name] for name in timing} == {name: whole[name] for name in timing}
    assert lines[-1]["done_reason"] == whole["done_reason"] == "stop"


def test_generate_reads_the_prompt_and_answers_response() -> None:
    reply = _post(MockLLM(), GENERATE, {"model": "m", "prompt": tagged(SCRIPT), "stream": False})
    answer = json.loads(reply.body)
    assert reply.status == 200 and len(answer["response"].split()) == 5 and answer["done"] is True


def test_tool_calls_carry_object_arguments_in_the_stream_and_not() -> None:
    script = chain({"id": "call", "messages": [{"tool_call": [{"name": "f", "args": {"x": [1, 2]}}]}]})
    body = {"model": "m", "messages": [{"role": "user", "content": tagged(script)}]}
    whole = json.loads(_post(MockLLM(), CHAT, {**body, "stream": False}).body)
    streamed = [c for line in _lines(_post(MockLLM(), CHAT, body)) for c in line["message"].get("tool_calls", [])]
    assert [c["function"]["arguments"] for c in whole["message"]["tool_calls"]] == [{"x": [1, 2]}]
    assert streamed == whole["message"]["tool_calls"] and streamed[0]["id"].startswith("call")


def test_thinking_needs_think() -> None:
    script = chain({"id": "t", "reasoning": {"length": 4}, "messages": [{"text_message": {"length": 2}}]})
    body = {"model": "m", "stream": False, "messages": [{"role": "user", "content": tagged(script)}]}
    assert "thinking" not in json.loads(_post(MockLLM(), CHAT, body).body)["message"]
    for think in (True, "high"):
        message = json.loads(_post(MockLLM(), CHAT, {**body, "think": think}).body)["message"]
        assert len(message["thinking"].split()) == 4


def test_after_chunks_cuts_the_stream_with_an_error_line() -> None:
    script = chain(
        {"id": "cut", "messages": [{"text_message": {"length": 9}}], "error": {"status": 500, "after_chunks": 2}}
    )
    lines = _lines(_post(MockLLM(), CHAT, {"model": "m", "messages": [{"role": "user", "content": tagged(script)}]}))
    assert len(lines) == 3 and set(lines[-1]) == {"error"}


def test_invalid_requests_are_400s_in_ollamas_shape() -> None:
    cases = [
        ({"messages": []}, "model is required"),
        (
            {"model": "m", "stream": "yes"},
            "cannot unmarshal string into Go struct field ChatRequest.stream of type bool",
        ),
        ({"model": "m", "messages": [{"role": "robot"}]}, 'invalid role "robot" in messages[0]'),
        ({"model": "m", "think": "very"}, "invalid think value"),
    ]
    for body, words in cases:
        reply = _post(MockLLM(), CHAT, body)
        assert reply.status == 400 and words in json.loads(reply.body)["error"], (body, reply.body)


def test_a_scripted_error_is_an_error_body_with_the_status() -> None:
    script = chain({"id": "e", "error": {"status": 503}})
    reply = _post(MockLLM(), CHAT, {"model": "m", "messages": [{"role": "user", "content": tagged(script)}]})
    assert reply.status == 503 and list(json.loads(reply.body)) == ["error"]


@settings(max_examples=60, deadline=None)
@given(st.sampled_from([CHAT, GENERATE]), json_values)
def test_any_body_is_a_reply_or_a_4xx_never_a_5xx_and_the_same_twice(path: str, body: Any) -> None:
    first, again = _post(MockLLM(), path, body), _post(MockLLM(), path, body)
    assert first.status < 500 and first.body == again.body
