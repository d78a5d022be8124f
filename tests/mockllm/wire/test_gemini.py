"""The Gemini codec's bytes and rules, through the engine: paths, streaming framings,
validation, faults, and the properties every protocol has (determinism, turn counting
from ``contents``, a fallback and never a 5xx)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from mockllm import MockLLM
from tests.mockllm.conversation_support import (
    assistant,
    chain,
    reference_reading,
    results,
    tagged,
    text_step,
    to_gemini,
    user,
)
from tests.mockllm.fuzz_strategies import json_values

GENERATE = "/v1beta/models/gemini-mock:generateContent"
STREAM = "/v1beta/models/gemini-mock:streamGenerateContent"
VERTEX = "/v1/projects/p/locations/us-central1/publishers/google/models/gemini-mock:generateContent"

SCRIPT = chain(text_step("one", length=5), text_step("two", length=3))


def _post(mock: MockLLM, path: str, body: Any, query: str = "") -> Any:
    return mock.handle("POST", path, {}, json.dumps(body).encode(), query)


def _body(*turns: Any) -> dict[str, Any]:
    return to_gemini([user(tagged(SCRIPT)), *turns])


def test_the_turn_is_counted_from_model_contents_and_function_responses_are_no_user_turn() -> None:
    mock = MockLLM()
    call = ("fc_1", "fetch", {"q": 1})
    reply = _post(mock, GENERATE, _body(assistant(None, [call]), results(("fc_1", "done"))))
    assert reply.status == 200
    assert mock.journal[-1].turn_index == 1 and mock.journal[-1].instruction_id == "two"
    assert len(json.loads(reply.body)["candidates"][0]["content"]["parts"][0]["text"].split()) == 3


def test_google_ai_and_vertex_paths_give_the_same_bytes_and_the_model_from_the_path() -> None:
    first = _post(MockLLM(), GENERATE, _body())
    again = _post(MockLLM(), VERTEX, _body())
    assert first.body == again.body
    assert json.loads(first.body)["modelVersion"] == "gemini-mock"


def test_sse_and_json_array_streams_carry_the_same_responses() -> None:
    sse = _post(MockLLM(), STREAM, _body(), "alt=sse")
    array = _post(MockLLM(), STREAM, _body())
    assert dict(sse.headers)["content-type"].startswith("text/event-stream")
    assert dict(array.headers)["content-type"].startswith("application/json")
    from_sse = [json.loads(e[len(b"data: ") :]) for e in sse.body.split(b"\r\n\r\n") if e]
    assert from_sse == json.loads(array.body)
    assert "".join(c["candidates"][0]["content"].get("parts", [{"text": ""}])[0]["text"] for c in from_sse).split()
    assert from_sse[-1]["candidates"][0]["finishReason"] == "STOP" and "usageMetadata" in from_sse[-1]


def test_after_chunks_ends_each_framing_with_the_error_object() -> None:
    script = chain(
        {"id": "cut", "messages": [{"text_message": {"length": 6}}], "error": {"status": 500, "after_chunks": 2}}
    )
    body = to_gemini([user(tagged(script))])
    array = json.loads(_post(MockLLM(), STREAM, body).body)
    assert len(array) == 3 and array[-1] == {
        "error": {"code": 500, "message": array[-1]["error"]["message"], "status": "INTERNAL"}
    }
    sse = _post(MockLLM(), STREAM, body, "alt=sse").body.split(b"\r\n\r\n")
    assert json.loads(sse[2][len(b"data: ") :])["error"]["code"] == 500


def test_validation_answers_in_geminis_error_shape() -> None:
    mock = MockLLM()
    missing = _post(mock, GENERATE, {"contents": []})
    assert missing.status == 400
    assert json.loads(missing.body) == {
        "error": {
            "code": 400,
            "message": "* GenerateContentRequest.contents: contents is not specified\n",
            "status": "INVALID_ARGUMENT",
        }
    }
    role = _post(mock, GENERATE, {"contents": [{"role": "assistant", "parts": [{"text": "x"}]}]})
    assert role.status == 400 and "valid role: user, model" in json.loads(role.body)["error"]["message"]
    unpaired = to_gemini([user("hi"), assistant(None, [("c1", "f", {})]), user("and?")])
    assert _post(mock, GENERATE, unpaired).status == 400
    assert _post(MockLLM(lenient=True), GENERATE, unpaired).status == 200


def test_unknown_gemini_methods_and_get_requests_are_client_errors() -> None:
    mock = MockLLM()
    assert mock.handle("GET", GENERATE, {}, b"").status == 405
    assert _post(mock, "/v1beta/models/m:countTokens", {"contents": "nope"}).status == 400


@settings(max_examples=60, deadline=None)
@given(body=json_values, stream=st.booleans(), sse=st.booleans())
def test_any_json_gets_a_reply_below_500_and_the_same_bytes_twice(body: Any, stream: bool, sse: bool) -> None:
    path = STREAM if stream else GENERATE
    query = "alt=sse" if sse else ""
    raw = json.dumps(body, allow_nan=False).encode() if _finite(body) else b"{}"
    first = MockLLM().handle("POST", path, {}, raw, query)
    again = MockLLM().handle("POST", path, {}, raw, query)
    assert first.status < 500 and (first.status, first.body) == (again.status, again.body)


@settings(max_examples=40, deadline=None)
@given(turns=st.integers(0, 4))
def test_each_model_turn_moves_the_index_by_one(turns: int) -> None:
    steps = [text_step(f"s{i}", length=2) for i in range(4)]
    conv = [user(tagged(chain(*steps)))]
    for i in range(turns):
        conv += [assistant(None, [(f"c{i}", "f", {})]), results((f"c{i}", "ok"))]
    reading = reference_reading(conv)
    mock = MockLLM()
    reply = _post(mock, GENERATE, to_gemini(conv))
    assert len(reading) == 1 + 2 * turns
    if turns < 4:
        assert reply.status == 200 and mock.journal[-1].instruction_id == f"s{turns}"
    else:
        assert reply.status == 200 and mock.journal[-1].fallback_reason is not None


def _finite(value: Any) -> bool:
    try:
        json.dumps(value, allow_nan=False)
        return True
    except (ValueError, TypeError):
        return False
