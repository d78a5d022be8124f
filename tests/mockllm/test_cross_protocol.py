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
from types import ModuleType
from typing import Any

import pytest

from mockllm._engine import MockLLM
from mockllm._transports import HTTPX2Transport, HTTPXTransport
from tests.mockllm.sdk_adapters_support import ADAPTERS
from tests.mockllm.sdk_support import SYNC_ASYNC, Neutral, SDKAdapter, Turn
from tests.mockllm.sdk_support import script as _script

PROTOCOLS = tuple(ADAPTERS)


def script(*instructions: dict[str, Any], prompt: str = "Work through this.") -> str:
    return _script(*instructions, prompt=prompt)


async def ask(sdk: SDKAdapter, client: Any, history: list[Any], *, stream: bool, thinking: bool = False) -> Turn:
    """One model call in ``sdk``'s protocol (``stream``: through the SDK's stream helper)."""
    return await sdk.turn(
        client, "helper" if stream else "json", history, **(sdk.reasoning_options if thinking else {})
    )


# -- one reply, three protocols ----------------------------------------------------------

SCRIPTS = {
    "text": (
        [{"messages": [{"text_message": {"length": 25}}]}],
        None,
    ),
    "reasoning-text": (
        [
            {
                "reasoning": {"text": "Consider the question, then answer briefly."},
                "messages": [{"text_message": {"text": "The answer is 42."}}],
            }
        ],
        Neutral("Consider the question, then answer briefly.", (("text", "The answer is 42."),), "end_turn"),
    ),
    "text-parallel-calls": (
        [
            {
                "messages": [
                    {"text_message": {"text": "Fetching both."}},
                    {
                        "tool_call": [
                            {"name": "fetch", "args": {"url": "https://a.example/x?q=1&r=2"}},
                            {"name": "fetch", "args": {"url": "https://b.example/"}},
                        ]
                    },
                ]
            }
        ],
        Neutral(
            None,
            (
                ("text", "Fetching both."),
                ("tool", "fetch", {"url": "https://a.example/x?q=1&r=2"}),
                ("tool", "fetch", {"url": "https://b.example/"}),
            ),
            "tool_use",
        ),
    ),
    "reasoning-nested-args": (
        [
            {
                "reasoning": {"length": 9},
                "chunk_words": 3,
                "messages": [
                    {
                        "tool_call": [
                            {
                                "name": "plan",
                                "args": {
                                    "steps": [{"n": 1, "do": "lire «le» fichier"}, {"n": 2, "do": 'say "hi"\n'}],
                                    "dry_run": False,
                                    "budget": 1.5e-3,
                                    "tags": [],
                                    "owner": None,
                                },
                            }
                        ]
                    }
                ],
            }
        ],
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
        for protocol, sdk in ADAPTERS.items():
            async with sdk.client(door, is_async) as client:
                # The chat stream helper refuses a "length" finish; use plain create there.
                for stream in (False, True) if name != "max-tokens" else (False,):
                    turn = await ask(sdk, client, sdk.start(chain)[0], stream=stream, thinking="reasoning" in name)
                    forms[protocol, stream] = turn.neutral()
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
    {
        "id": "plan",
        "reasoning": {"length": 6},
        "messages": [
            {"text_message": {"text": "Looking it up."}},
            {"tool_call": [{"name": "search", "args": {"q": "tide tables"}}]},
        ],
    },
    {
        "id": "fetch-both",
        "messages": [{"tool_call": [{"name": "fetch", "args": {"id": 1}}, {"name": "fetch", "args": {"id": 2}}]}],
    },
    {"id": "answer", "reasoning": {"text": "Both pages agree."}, "messages": [{"text_message": {"length": 14}}]},
)
LOOP_RESULTS = {"search": '["page 1", "page 2"]', "fetch": '{"tide": "high at 06:12"}'}


@SYNC_ASYNC
@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_a_three_turn_tool_loop_runs_turn_by_turn_alike(door: Any, is_async: bool, stream: bool) -> None:
    async def main() -> None:
        door.reset_journal()
        runs: dict[str, list[Neutral]] = {}
        for protocol, sdk in ADAPTERS.items():
            async with sdk.client(door, is_async) as client:
                history, _ = sdk.start(LOOP)
                forms = runs[protocol] = []
                for _ in range(5):
                    turn = await ask(sdk, client, history, stream=stream, thinking=True)
                    forms.append(turn.neutral())
                    sdk.append(history, turn, [(c.id, LOOP_RESULTS[c.name]) for c in turn.calls])
                    if turn.stop != "tool_use":
                        break

        chat = runs["openai-chat"]
        assert runs["anthropic-messages"] == chat
        assert runs["openai-responses"] == chat
        assert [t.stop for t in chat] == ["tool_use", "tool_use", "end_turn"]
        assert [t.calls for t in chat] == [
            [("search", {"q": "tide tables"})],
            [("fetch", {"id": 1}), ("fetch", {"id": 2})],
            [],
        ]
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

CHAIN = script(
    {
        "reasoning": {"length": 5},
        "messages": [
            {"text_message": {"length": 8}},
            {"tool_call": [{"name": "lookup", "args": {"key": "a b", "n": 3}}]},
        ],
    }
)

REQUESTS = {
    "openai-chat": (
        "/v1/chat/completions",
        {
            "model": ADAPTERS["openai-chat"].model,
            "messages": [{"role": "user", "content": CHAIN}],
            "stream_options": {"include_usage": True},
        },
    ),
    "anthropic-messages": (
        "/v1/messages",
        {
            "model": ADAPTERS["anthropic-messages"].model,
            "max_tokens": 2048,
            "messages": [{"role": "user", "content": CHAIN}],
        },
    ),
    "openai-responses": ("/v1/responses", {"model": ADAPTERS["openai-responses"].model, "input": CHAIN}),
}


def _request(protocol: str, stream: bool) -> tuple[str, dict[str, Any]]:
    path, body = REQUESTS[protocol]
    body = {**body, "stream": stream}
    if not stream:
        body.pop("stream_options", None)
    return path, body


LIBRARIES = ["httpx", "httpx2"]


def _library(name: str) -> tuple[ModuleType, type]:
    """The client library and its in-process transport; httpx2 is optional (its extra)."""
    if name == "httpx":
        return pytest.importorskip("httpx"), HTTPXTransport
    return pytest.importorskip("httpx2", reason="httpx2 is not installed (the httpx2 extra)"), HTTPX2Transport


def _post(client: Any, url: str, body: dict[str, Any]) -> Any:
    response = client.post(url, json=body, headers={"anthropic-version": "2023-06-01"})
    assert response.status_code == 200, response.text
    return response


@pytest.mark.parametrize("library", LIBRARIES)
@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_the_same_request_twice_gives_the_same_bytes(door: Any, protocol: str, stream: bool, library: str) -> None:
    module, transport = _library(library)
    path, body = _request(protocol, stream)
    if door.mock is not None:
        client = module.Client(transport=transport(door.mock), base_url=door.base_url)
    else:
        client = module.Client(base_url=door.base_url)
    with client:
        first, second = _post(client, path, body), _post(client, path, body)
    assert first.content == second.content
    assert len(first.content) > 200
    mock_headers = [(k, v) for k, v in first.headers.items() if k.startswith("x-mockllm-")]
    assert mock_headers == [(k, v) for k, v in second.headers.items() if k.startswith("x-mockllm-")]
    assert first.headers["content-type"].startswith("text/event-stream" if stream else "application/json")


@pytest.mark.parametrize("library", LIBRARIES)
@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_in_process_and_server_give_the_same_bytes(
    mock_server_url: str, protocol: str, stream: bool, library: str
) -> None:
    module, transport = _library(library)
    path, body = _request(protocol, stream)
    with (
        module.Client(transport=transport(MockLLM()), base_url="http://mockllm.test") as local,
        module.Client(base_url=mock_server_url) as remote,
    ):
        in_process, served = _post(local, path, body), _post(remote, path, body)
    assert in_process.content == served.content
    for name in ("content-type", "x-mockllm-chain", "x-mockllm-turn", "x-mockllm-instruction", "x-mockllm-protocol"):
        assert in_process.headers[name] == served.headers[name], name


@SYNC_ASYNC
def test_sdk_replies_are_identical_when_asked_twice(door: Any, is_async: bool) -> None:
    """Ids, timestamps and words are all derived from the script: nothing drifts."""

    async def main() -> None:
        for protocol, sdk in ADAPTERS.items():
            async with sdk.client(door, is_async) as client:
                first = await ask(sdk, client, sdk.start(CHAIN)[0], stream=False, thinking=True)
                second = await ask(sdk, client, sdk.start(CHAIN)[0], stream=False, thinking=True)
            assert first.raw.model_dump() == second.raw.model_dump(), protocol

    asyncio.run(main())
