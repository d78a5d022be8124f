"""One script, three protocols: the same content whichever way a client asks.

The same instruction chain is sent through OpenAI Chat Completions, Anthropic Messages
and OpenAI Responses with the official SDKs, streamed and not, through both doors, and
each reply is reduced to a neutral form: the reasoning text, the list of parts (text,
or a tool call's name and parsed arguments) and a neutral stop reason. All the forms
must be equal, turn by turn over a three-turn tool loop too.

Chat Completions cannot interleave text and tool calls (a message has one ``content``
and then its ``tool_calls``), so the neutral form puts all text first, joined, then the
calls in order; the scripts here that mix them put text first, as a real model does.

Finally the same request twice gives byte-identical responses, and the in-process
transport gives the server's bytes.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest

from mockllm._engine import MockLLM
from mockllm._transports import HTTPX2Transport
from tests.mockllm.sdk_support import SYNC_ASYNC
from tests.mockllm.sdk_support import script as _script

httpx2 = pytest.importorskip("httpx2", reason="httpx2 is not installed (the httpx2 extra)")

OPENAI_MODEL = "gpt-mock"
ANTHROPIC_MODEL = "claude-mock-1"
PROTOCOLS = ("openai-chat", "anthropic-messages", "openai-responses")





def script(*instructions: dict[str, Any], prompt: str = "Work through this.") -> str:
    return _script(*instructions, prompt=prompt)


@dataclass(frozen=True)
class Neutral:
    """A reply reduced to what every protocol can say."""

    reasoning: str | None
    parts: tuple[tuple[Any, ...], ...]
    """("text", text) once, with all text joined, then ("tool", name, args) per call."""
    stop: str

    @staticmethod
    def of(reasoning: str | None, texts: list[str], calls: list[tuple[str, dict[str, Any]]],
           stop: str) -> Neutral:
        text = "".join(texts)
        parts: list[tuple[Any, ...]] = [("text", text)] if text else []
        parts += [("tool", name, args) for name, args in calls]
        return Neutral(reasoning or None, tuple(parts), stop)

    @property
    def calls(self) -> list[tuple[str, dict[str, Any]]]:
        return [(p[1], p[2]) for p in self.parts if p[0] == "tool"]


_CHAT_STOP = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens",
              "content_filter": "content_filter"}


def neutral_chat(completion: Any) -> Neutral:
    choice = completion.choices[0]
    message = choice.message
    calls = [(c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls or ()]
    return Neutral.of(getattr(message, "reasoning_content", None), [message.content or ""], calls,
                      _CHAT_STOP[choice.finish_reason])


def neutral_anthropic(message: Any) -> Neutral:
    thinking = [b.thinking for b in message.content if b.type == "thinking"]
    texts = [b.text for b in message.content if b.type == "text"]
    calls = [(b.name, b.input) for b in message.content if b.type == "tool_use"]
    return Neutral.of("".join(thinking), texts, calls, message.stop_reason)


def neutral_responses(response: Any) -> Neutral:
    reasoning = "".join(s.text for item in response.output if item.type == "reasoning" for s in item.summary)
    texts = [c.text for item in response.output if item.type == "message" for c in item.content]
    calls = [(item.name, json.loads(item.arguments)) for item in response.output if item.type == "function_call"]
    if response.status == "incomplete":
        stop = {"max_output_tokens": "max_tokens"}.get(response.incomplete_details.reason,
                                                       response.incomplete_details.reason)
    else:
        stop = "tool_use" if calls else "end_turn"
    return Neutral.of(reasoning, texts, calls, stop)


@dataclass
class Clients:
    openai: Any
    anthropic: Any
    is_async: bool


@contextlib.asynccontextmanager
async def clients(door: Any, is_async: bool) -> AsyncIterator[Clients]:
    if is_async:
        async with door.openai(is_async=True) as oa, door.anthropic(is_async=True) as an:
            yield Clients(oa, an, True)
    else:
        with door.openai() as oa, door.anthropic() as an:
            yield Clients(oa, an, False)


async def _maybe(value: Any) -> Any:
    return await value if asyncio.iscoroutine(value) else value


async def ask(c: Clients, protocol: str, history: list[Any], *, stream: bool,
              thinking: bool = False) -> tuple[Any, Neutral]:
    """One model call in ``protocol``; the SDK's reply object and its neutral form."""
    if protocol == "openai-chat":
        kwargs = {"model": OPENAI_MODEL, "messages": history}
        if not stream:
            completion = await _maybe(c.openai.chat.completions.create(**kwargs))
        elif c.is_async:
            async with c.openai.chat.completions.stream(**kwargs) as s:
                completion = await s.get_final_completion()
        else:
            with c.openai.chat.completions.stream(**kwargs) as s:
                completion = s.get_final_completion()
        return completion, neutral_chat(completion)
    if protocol == "anthropic-messages":
        kwargs = {"model": ANTHROPIC_MODEL, "max_tokens": 2048, "messages": history}
        if thinking:
            kwargs["thinking"] = {"type": "enabled", "budget_tokens": 1024}
        if not stream:
            message = await _maybe(c.anthropic.messages.create(**kwargs))
        elif c.is_async:
            async with c.anthropic.messages.stream(**kwargs) as s:
                message = await s.get_final_message()
        else:
            with c.anthropic.messages.stream(**kwargs) as s:
                message = s.get_final_message()
        return message, neutral_anthropic(message)
    kwargs = {"model": OPENAI_MODEL, "input": history}
    if not stream:
        response = await _maybe(c.openai.responses.create(**kwargs))
    elif c.is_async:
        async with c.openai.responses.stream(**kwargs) as s:
            response = await s.get_final_response()
    else:
        with c.openai.responses.stream(**kwargs) as s:
            response = s.get_final_response()
    return response, neutral_responses(response)


def append_turn(protocol: str, history: list[Any], reply: Any,
                results: dict[str, str]) -> None:
    """Append the assistant turn and the results of its calls, in the protocol's form.

    ``results`` maps a tool name to its output (the dummy tools here are pure).
    """
    if protocol == "openai-chat":
        message = reply.choices[0].message
        history.append(message.model_dump(include={"role", "content", "tool_calls"}, exclude_none=True))
        for call in message.tool_calls or ():
            history.append({"role": "tool", "tool_call_id": call.id, "content": results[call.function.name]})
    elif protocol == "anthropic-messages":
        history.append({"role": "assistant", "content": reply.content})
        answers = [{"type": "tool_result", "tool_use_id": b.id, "content": results[b.name]}
                   for b in reply.content if b.type == "tool_use"]
        if answers:
            history.append({"role": "user", "content": answers})
    else:
        history.extend(reply.output)
        history.extend({"type": "function_call_output", "call_id": item.call_id, "output": results[item.name]}
                       for item in reply.output if item.type == "function_call")


# -- one reply, three protocols ----------------------------------------------------------

SCRIPTS = {
    "text": (
        [{"messages": [{"text_message": {"length": 25}}]}],
        None,
    ),
    "reasoning-text": (
        [{"reasoning": {"text": "Consider the question, then answer briefly."},
          "messages": [{"text_message": {"text": "The answer is 42."}}]}],
        Neutral("Consider the question, then answer briefly.", (("text", "The answer is 42."),), "end_turn"),
    ),
    "text-parallel-calls": (
        [{"messages": [{"text_message": {"text": "Fetching both."}},
                       {"tool_call": [{"name": "fetch", "args": {"url": "https://a.example/x?q=1&r=2"}},
                                      {"name": "fetch", "args": {"url": "https://b.example/"}}]}]}],
        Neutral(None, (("text", "Fetching both."),
                       ("tool", "fetch", {"url": "https://a.example/x?q=1&r=2"}),
                       ("tool", "fetch", {"url": "https://b.example/"})), "tool_use"),
    ),
    "reasoning-nested-args": (
        [{"reasoning": {"length": 9}, "chunk_words": 3,
          "messages": [{"tool_call": [{"name": "plan", "args": {
              "steps": [{"n": 1, "do": "lire «le» fichier"}, {"n": 2, "do": "say \"hi\"\n"}],
              "dry_run": False, "budget": 1.5e-3, "tags": [], "owner": None}}]}]}],
        None,
    ),
    "max-tokens": (
        [{"messages": [{"text_message": {"text": "This reply was cut"}}], "stop_reason": "max_tokens"}],
        Neutral(None, (("text", "This reply was cut"),), "max_tokens"),
    ),
}


@SYNC_ASYNC
@pytest.mark.parametrize("name", list(SCRIPTS))
def test_one_script_gives_the_same_content_in_every_protocol(door: Any, is_async: bool, name: str) -> None:
    instructions, expected = SCRIPTS[name]
    chain = script(*instructions)

    async def main() -> None:
        forms: dict[tuple[str, bool], Neutral] = {}
        async with clients(door, is_async) as c:
            for protocol in PROTOCOLS:
                # The chat stream helper refuses a "length" finish; use plain create there.
                for stream in (False, True) if name != "max-tokens" else (False,):
                    history = [{"role": "user", "content": chain}]
                    _, forms[protocol, stream] = await ask(c, protocol, history, stream=stream,
                                                           thinking="reasoning" in name)
        reference = forms["openai-chat", False]
        different = {key: form for key, form in forms.items() if form != reference}
        assert not different, f"differs from Chat Completions {reference}: {different}"
        if expected is not None:
            assert reference == expected
        spec = instructions[0]
        if "reasoning" in spec and "length" in spec["reasoning"]:
            assert reference.reasoning is not None
            assert len(reference.reasoning.split()) == spec["reasoning"]["length"]
        if name == "text":
            assert len(reference.parts) == 1 and len(reference.parts[0][1].split()) == 25
        if name == "reasoning-nested-args":
            assert reference.calls == [("plan", instructions[0]["messages"][0]["tool_call"][0]["args"])]

    asyncio.run(main())


LOOP = script(
    {"id": "plan", "reasoning": {"length": 6},
     "messages": [{"text_message": {"text": "Looking it up."}},
                  {"tool_call": [{"name": "search", "args": {"q": "tide tables"}}]}]},
    {"id": "fetch-both", "messages": [{"tool_call": [{"name": "fetch", "args": {"id": 1}},
                                                     {"name": "fetch", "args": {"id": 2}}]}]},
    {"id": "answer", "reasoning": {"text": "Both pages agree."},
     "messages": [{"text_message": {"length": 14}}]},
)
LOOP_RESULTS = {"search": '["page 1", "page 2"]', "fetch": '{"tide": "high at 06:12"}'}


@SYNC_ASYNC
@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_a_three_turn_tool_loop_runs_turn_by_turn_alike(door: Any, is_async: bool, stream: bool) -> None:
    async def main() -> None:
        door.reset_journal()
        runs: dict[str, list[Neutral]] = {}
        async with clients(door, is_async) as c:
            for protocol in PROTOCOLS:
                history: list[Any] = [{"role": "user", "content": LOOP}]
                turns = runs[protocol] = []
                for _ in range(5):
                    reply, form = await ask(c, protocol, history, stream=stream, thinking=True)
                    turns.append(form)
                    append_turn(protocol, history, reply, LOOP_RESULTS)
                    if form.stop != "tool_use":
                        break

        chat = runs["openai-chat"]
        assert runs["anthropic-messages"] == chat
        assert runs["openai-responses"] == chat
        assert [t.stop for t in chat] == ["tool_use", "tool_use", "end_turn"]
        assert [t.calls for t in chat] == [[("search", {"q": "tide tables"})],
                                           [("fetch", {"id": 1}), ("fetch", {"id": 2})], []]
        assert chat[0].parts[0] == ("text", "Looking it up.")
        assert chat[2].reasoning == "Both pages agree."
        assert len(chat[2].parts[0][1].split()) == 14

        entries = door.journal()
        assert [(e["protocol"], e["instruction_id"], e["turn_index"], e["status"]) for e in entries] == [
            (protocol, step, turn, 200)
            for protocol in PROTOCOLS
            for turn, step in enumerate(["plan", "fetch-both", "answer"])
        ]
        assert len({e["chain_id"] for e in entries}) == 1

    asyncio.run(main())


# -- the same bytes ----------------------------------------------------------------------

CHAIN = script({"reasoning": {"length": 5},
                "messages": [{"text_message": {"length": 8}},
                             {"tool_call": [{"name": "lookup", "args": {"key": "a b", "n": 3}}]}]})

REQUESTS = {
    "openai-chat": ("/v1/chat/completions",
                    {"model": OPENAI_MODEL, "messages": [{"role": "user", "content": CHAIN}],
                     "stream_options": {"include_usage": True}}),
    "anthropic-messages": ("/v1/messages",
                           {"model": ANTHROPIC_MODEL, "max_tokens": 2048,
                            "messages": [{"role": "user", "content": CHAIN}]}),
    "openai-responses": ("/v1/responses", {"model": OPENAI_MODEL, "input": CHAIN}),
}


def _request(protocol: str, stream: bool) -> tuple[str, dict[str, Any]]:
    path, body = REQUESTS[protocol]
    body = {**body, "stream": stream}
    if not stream:
        body.pop("stream_options", None)
    return path, body


def _post(client: httpx2.Client, url: str, body: dict[str, Any]) -> httpx2.Response:
    response = client.post(url, json=body, headers={"anthropic-version": "2023-06-01"})
    assert response.status_code == 200, response.text
    return response


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_the_same_request_twice_gives_the_same_bytes(door: Any, protocol: str, stream: bool) -> None:
    path, body = _request(protocol, stream)
    if door.mock is not None:
        client = httpx2.Client(transport=HTTPX2Transport(door.mock), base_url=door.base_url)
    else:
        client = httpx2.Client(base_url=door.base_url)
    with client:
        first, second = _post(client, path, body), _post(client, path, body)
    assert first.content == second.content
    assert len(first.content) > 200
    mock_headers = [(k, v) for k, v in first.headers.items() if k.startswith("x-mockllm-")]
    assert mock_headers == [(k, v) for k, v in second.headers.items() if k.startswith("x-mockllm-")]
    assert first.headers["content-type"].startswith("text/event-stream" if stream else "application/json")


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_in_process_and_server_give_the_same_bytes(mock_server_url: str, protocol: str, stream: bool) -> None:
    path, body = _request(protocol, stream)
    with httpx2.Client(transport=HTTPX2Transport(MockLLM()), base_url="http://mockllm.test") as local, \
            httpx2.Client(base_url=mock_server_url) as remote:
        in_process, served = _post(local, path, body), _post(remote, path, body)
    assert in_process.content == served.content
    for name in ("content-type", "x-mockllm-chain", "x-mockllm-turn", "x-mockllm-instruction", "x-mockllm-protocol"):
        assert in_process.headers[name] == served.headers[name], name


@SYNC_ASYNC
def test_sdk_replies_are_identical_when_asked_twice(door: Any, is_async: bool) -> None:
    """Ids, timestamps and words are all derived from the script: nothing drifts."""

    async def main() -> None:
        async with clients(door, is_async) as c:
            for protocol in PROTOCOLS:
                first, _ = await ask(c, protocol, [{"role": "user", "content": CHAIN}], stream=False, thinking=True)
                second, _ = await ask(c, protocol, [{"role": "user", "content": CHAIN}], stream=False, thinking=True)
                assert first.model_dump() == second.model_dump(), protocol

    asyncio.run(main())
