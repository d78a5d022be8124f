"""One engine, many doors: the same request gives the same status, headers and bytes
through the loopback server and every in-process transport (httpx, httpx2, httpx2 async),
across the protocols, streams long enough to be rendered as they are sent, faults and
malformed bodies."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from mockllm._engine import MockLLM
from mockllm._transports import HTTPX2Transport, HTTPXTransport
from tests.mockllm.server_support import (
    OPENAI_MODEL,
    PATHS,
    PROTOCOLS,
    encode,
    orphan_result_body,
    script,
    text,
    user_body,
)

httpx2 = pytest.importorskip("httpx2", reason="httpx2 is not installed (the httpx2 extra)")


def _door_requests() -> list[tuple[str, str, bytes]]:
    tools_chain = script(
        {
            "id": "call",
            "messages": [
                {"tool_call": [{"name": "lookup", "args": {"q": "paris"}}, {"name": "lookup", "args": {"q": "rome"}}]}
            ],
        },
        {"id": "answer", "reasoning": {"length": 5}, "messages": [{"text_message": {"length": 8}}]},
    )
    thinking = script(
        {
            "id": "think",
            "reasoning": {"length": 6},
            "messages": [{"text_message": {"length": 7}}, {"tool_call": [{"name": "lookup", "args": {"q": "x y"}}]}],
        }
    )
    plain = script(text(9), prompt="doors")
    paced = script(text(4, timing={"first_chunk_ms": 1, "chunk_ms": 1}))
    long_stream = script(
        {
            "id": "long",
            "reasoning": {"length": 700},
            "chunk_words": 2,
            "messages": [
                {"text_message": {"length": 2500}},
                {"tool_call": [{"name": "lookup", "args": {"q": "é" * 3000}}]},
            ],
        }
    )
    long_cut = script(text(3000, error={"status": 500, "after_chunks": 2000}))
    long_paced = script(text(900, timing={"first_chunk_ms": 1, "chunk_ms": 0}))
    chat_turn_1 = {
        "model": OPENAI_MODEL,
        "messages": [
            {"role": "user", "content": tools_chain},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "call_a", "type": "function", "function": {"name": "lookup", "arguments": "{}"}},
                    {"id": "call_b", "type": "function", "function": {"name": "lookup", "arguments": "{}"}},
                ],
            },
            {"role": "tool", "tool_call_id": "call_a", "content": "sunny"},
            {"role": "tool", "tool_call_id": "call_b", "content": "rainy"},
        ],
    }
    requests: list[tuple[str, str, Any]] = []
    for protocol in PROTOCOLS:
        for stream in (False, True):
            requests.append((f"{protocol}-text-{stream}", protocol, user_body(protocol, plain, stream=stream)))
            requests.append((f"{protocol}-tools-{stream}", protocol, user_body(protocol, tools_chain, stream=stream)))
            requests.append((f"{protocol}-thinking-{stream}", protocol, user_body(protocol, thinking, stream=stream)))
        requests.append((f"{protocol}-fallback", protocol, user_body(protocol, "no script here", stream=True)))
        requests.append((f"{protocol}-paced", protocol, user_body(protocol, paced, stream=True)))
        # Streams long enough to be rendered as they are sent (mockllm._mock_response).
        requests.append((f"{protocol}-long", protocol, user_body(protocol, long_stream, stream=True)))
        requests.append((f"{protocol}-long-cut", protocol, user_body(protocol, long_cut, stream=True)))
        requests.append((f"{protocol}-long-paced", protocol, user_body(protocol, long_paced, stream=True)))
        requests.append((f"{protocol}-orphan", protocol, orphan_result_body(protocol)))
        requests.append(
            (
                f"{protocol}-429",
                protocol,
                user_body(protocol, script({"id": "limit", "error": {"status": 429, "retry_after_ms": 5}})),
            )
        )
    include_usage = {**user_body("openai-chat", plain, stream=True), "stream_options": {"include_usage": True}}
    requests.append(("openai-chat-usage", "openai-chat", include_usage))
    requests.append(("openai-chat-tool-turn-1", "openai-chat", chat_turn_1))
    for stream in (False, True):
        requests.append((f"openai-chat-tool-turn-1-{stream}", "openai-chat", {**chat_turn_1, "stream": stream}))
    requests.append(("bad-json", "openai-responses", b"{"))
    return [(name, protocol, body if isinstance(body, bytes) else encode(body)) for name, protocol, body in requests]


def _visible(headers: Any) -> dict[str, str]:
    return {
        k: v
        for k, v in headers.items()
        if k.startswith("x-mockllm-") or k in ("content-type", "retry-after-ms", "x-request-id", "request-id")
    }


async def _async_door(requests: list[tuple[str, str, bytes]]) -> list[tuple[int, dict[str, str], bytes]]:
    out = []
    async with httpx2.AsyncClient(transport=HTTPX2Transport(MockLLM())) as client:
        for _, protocol, body in requests:
            async with client.stream("POST", f"http://mockllm.test{PATHS[protocol]}", content=body) as response:
                content = b"".join([chunk async for chunk in response.aiter_bytes()])
                out.append((response.status_code, _visible(response.headers), content))
    return out


def test_the_same_bytes_through_every_door(mock_server_url: str) -> None:
    requests = _door_requests()
    assert len({name for name, _, _ in requests}) == len(requests)
    doors: dict[str, list[tuple[int, dict[str, str], bytes]]] = {}

    clients: dict[str, Any] = {
        "server": (httpx2.Client(timeout=30), mock_server_url),
        "httpx2": (httpx2.Client(transport=HTTPX2Transport(MockLLM())), "http://mockllm.test"),
        "httpx": (httpx.Client(transport=HTTPXTransport(MockLLM())), "http://mockllm.test"),
    }
    try:
        for door, (client, base) in clients.items():
            results = doors.setdefault(door, [])
            for _, protocol, body in requests:
                with client.stream(
                    "POST", f"{base}{PATHS[protocol]}", content=body, headers={"content-type": "application/json"}
                ) as response:
                    content = b"".join(response.iter_bytes())
                    results.append((response.status_code, _visible(response.headers), content))
    finally:
        for client, _ in clients.values():
            client.close()
    doors["httpx2-async"] = asyncio.run(_async_door(requests))

    reference = doors.pop("server")
    statuses = {name: status for (name, _, _), (status, _, _) in zip(requests, reference, strict=False)}
    assert statuses["openai-chat-text-True"] == 200 and statuses["anthropic-messages-orphan"] == 400
    assert statuses["openai-responses-429"] == 429 and statuses["bad-json"] == 400
    assert all(status < 500 for status in statuses.values())
    for door, results in doors.items():
        for (name, _, _), expected, got in zip(requests, reference, results, strict=False):
            assert got[0] == expected[0], (door, name)
            assert got[2] == expected[2], (door, name)
            assert got[1] == expected[1], (door, name)
