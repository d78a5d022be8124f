"""Server-held Responses state through the official openai SDK, through both doors:
``store`` + ``previous_response_id`` in a tool loop (streamed and not), conversations,
and the errors for what the mock does not hold (unknown id, reset, ``store=False``)."""

from __future__ import annotations

from typing import Any

import openai
import pytest

from mockllm._wire.openai_responses_state import ResponseStore
from tests.mockllm.server_support import script, uid
from tests.mockllm.server_support import two_city_weather_chain as _chain

MODEL = "gpt-mock"
TOOLS = [
    {
        "type": "function",
        "name": "get_weather",
        "description": "The weather in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    }
]


def _create(client: Any, stream: bool, **kwargs: Any) -> Any:
    kwargs = {"model": MODEL, "tools": TOOLS, **kwargs}
    if not stream:
        return client.responses.create(**kwargs)
    with client.responses.stream(**kwargs) as events:
        return events.get_final_response()


def _results(response: Any) -> list[dict[str, Any]]:
    return [
        {"type": "function_call_output", "call_id": item.call_id, "output": "sunny"}
        for item in response.output
        if item.type == "function_call"
    ]


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_a_tool_loop_on_previous_response_id(door: Any, stream: bool) -> None:
    door.reset_journal()
    prompt = _chain("loop")
    with door.openai() as client:
        responses = [_create(client, stream, input=prompt, store=True)]
        while responses[-1].output[-1].type == "function_call":
            responses.append(
                _create(client, stream, input=_results(responses[-1]), previous_response_id=responses[-1].id)
            )
        assert responses[-1].output_text == "Both are sunny."
        assert [r.previous_response_id for r in responses] == [None, responses[0].id, responses[1].id]
        entries = [e for e in door.journal() if e["protocol"] == "openai-responses"]
        assert [(e["turn_index"], e["status"], e["rebuilt_from"]) for e in entries] == [
            (0, 200, None),
            (1, 200, responses[0].id),
            (2, 200, responses[1].id),
        ]

        # The same last turn with the whole history sent by the client: the same reply,
        # the same usage (the rebuilt request is the same bytes), the same id (a held
        # reply's id names its conversation: mockllm._held.held_reply_id).
        history: list[Any] = [{"role": "user", "content": prompt}]
        for response in responses[:-1]:
            history += [item.model_dump(exclude_none=True) for item in response.output] + _results(response)
        whole = _create(client, stream, input=history, store=True)
    assert whole.id == responses[-1].id and whole.output_text == "Both are sunny."
    assert whole.usage == responses[-1].usage
    assert responses[0].usage.input_tokens < responses[1].usage.input_tokens < responses[2].usage.input_tokens


def _assert_not_held(raised: pytest.ExceptionInfo[openai.BadRequestError], response_id: str) -> None:
    error = raised.value
    assert error.status_code == 400
    assert error.param == "previous_response_id"
    assert error.code == "previous_response_not_found"
    message = error.body["message"]  # type: ignore[index]
    assert message.startswith(f"Previous response with id '{response_id}' not found.")
    assert "reset" in message and "evict" in message and "store: false" in message


def test_an_unknown_previous_response_id_is_openais_400(door: Any) -> None:
    with door.openai() as client, pytest.raises(openai.BadRequestError) as raised:
        client.responses.create(model=MODEL, input="hello", previous_response_id="resp_nowhere")
    _assert_not_held(raised, "resp_nowhere")


def test_reset_forgets_the_held_responses(door: Any) -> None:
    with door.openai() as client:
        first = client.responses.create(model=MODEL, tools=TOOLS, input=_chain("reset"))
        door.reset_journal()
        with pytest.raises(openai.BadRequestError) as raised:
            client.responses.create(model=MODEL, tools=TOOLS, input=_results(first), previous_response_id=first.id)
    _assert_not_held(raised, first.id)


def test_store_false_responses_are_not_kept(door: Any) -> None:
    with door.openai() as client:
        first = client.responses.create(model=MODEL, tools=TOOLS, input=_chain("nostore"), store=False)
        assert first.store is False
        with pytest.raises(openai.BadRequestError) as raised:
            client.responses.create(model=MODEL, tools=TOOLS, input=_results(first), previous_response_id=first.id)
    _assert_not_held(raised, first.id)


def test_a_conversation_grows_by_each_response(door: Any) -> None:
    door.reset_journal()
    prompt = _chain("conv")
    with door.openai() as client:
        conversation = client.conversations.create(items=[{"role": "user", "content": prompt}])
        assert conversation.id.startswith("conv_")
        first = client.responses.create(model=MODEL, tools=TOOLS, conversation=conversation.id, input=[])
        second = client.responses.create(
            model=MODEL, tools=TOOLS, conversation={"id": conversation.id}, input=_results(first)
        )
        assert second.conversation is not None and second.conversation.id == conversation.id
        entries = [e for e in door.journal() if e["protocol"] == "openai-responses"]
        assert [(e["turn_index"], e["rebuilt_from"]) for e in entries] == [(0, conversation.id), (1, conversation.id)]
        with pytest.raises(openai.NotFoundError) as raised:
            client.responses.create(model=MODEL, input="hi", conversation="conv_nowhere")
        assert raised.value.param == "conversation" and "POST /v1/conversations" in raised.value.message
        with pytest.raises(openai.BadRequestError, match="Mutually exclusive"):
            client.responses.create(
                model=MODEL, input="hi", conversation=conversation.id, previous_response_id=second.id
            )


def test_the_oldest_responses_are_evicted_at_the_bound() -> None:
    store = ResponseStore(max_entries=2)
    for n in range(3):
        reply = f'{{"id": "resp_{n}", "output": [{{"type": "message", "role": "assistant", "content": []}}]}}'
        store.keep({"model": "m", "input": f"turn {n}"}, reply.encode())
    body, held_from, _ = store.expand({"model": "m", "input": "more", "previous_response_id": "resp_2"})
    assert held_from == "resp_2" and len(body["input"]) == 3
    with pytest.raises(Exception, match="Previous response with id 'resp_0' not found") as raised:
        store.expand({"model": "m", "input": "more", "previous_response_id": "resp_0"})
    assert "evict" in str(raised.value)


def test_the_byte_bound_evicts_too() -> None:
    store = ResponseStore(max_bytes=400)
    for n in range(3):
        store.keep({"model": "m", "input": "x" * 150}, f'{{"id": "resp_{n}", "output": []}}'.encode())
    store.expand({"model": "m", "input": [], "previous_response_id": "resp_2"})
    with pytest.raises(Exception, match="not found"):
        store.expand({"model": "m", "input": [], "previous_response_id": "resp_0"})


def test_the_journal_shows_an_anthropic_thread_rebuilt(door: Any) -> None:
    door.reset_journal()
    client = door.anthropic()
    prompt = script(
        {"id": uid("th"), "messages": [{"tool_call": [{"name": "get_weather", "args": {}}]}]},
        {"id": uid("th2"), "messages": [{"text_message": {"text": "done"}}]},
    )
    first = client.beta.messages.create(
        model="claude-mock-1",
        max_tokens=256,
        betas=["message-threads-2026-08-12"],
        messages=[{"role": "user", "content": prompt}],
        extra_body={"thread": {"type": "create"}},
    )
    client.beta.messages.create(
        model="claude-mock-1",
        max_tokens=256,
        betas=["message-threads-2026-08-12"],
        messages=[
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": first.content[0].id, "content": "sunny"}],
            }
        ],
        extra_body={"thread": {"type": "continue", "previous_message_id": first.id}},
    )
    entries = [e for e in door.journal() if e["protocol"] == "anthropic-messages"]
    assert [(e["turn_index"], e["rebuilt_from"]) for e in entries] == [(0, None), (1, first.id)]
