"""Minimal reference servers for ``bench/bench_wire.py``: pre-rendered bytes, or only the
work a reply cannot do without.

    python bench/_apps.py plain BODIES.json   # (d) Starlette, whole body in one write
    python bench/_apps.py sse BODIES.json     # (e) sse-starlette, one write per event
    python bench/_apps.py work BODIES.json    # (f) (d) plus the text reply's own work

``BODIES.json`` (written by the benchmark) maps a scenario name to its replies, one per
turn, exactly as ``MockLLM().handle`` rendered them::

    {"text": {"headers": [[name, value], ...],
              "turns": [{"headers": [...], "events": ["data: ...\\n\\n", ...]}, ...]}}

Events are stored as latin-1 text so every byte round-trips. A request is answered by
its scenario (the first path segment: ``/text/v1/chat/completions``) and its turn, the
number of assistant messages in the body — a byte count, no JSON parsing ((d), (e)).

The apps run on uvicorn with the mock server's settings (log_level warning, no access
log, lifespan off) on a socket bound to 127.0.0.1 port 0. The first line printed is
``serving on http://127.0.0.1:PORT``. SIGTERM stops them.
"""

from __future__ import annotations

import json
import socket
import sys

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

_ASSISTANT = b'"role":"assistant"'


def _load(path: str) -> dict[str, list[tuple[list[tuple[str, str]], list[bytes]]]]:
    with open(path, encoding="utf-8") as handle:
        raw = json.load(handle)
    return {
        scenario: [
            ([(k, v) for k, v in turn["headers"]], [e.encode("latin-1") for e in turn["events"]])
            for turn in spec["turns"]
        ]
        for scenario, spec in raw.items()
    }


def plain_app(path: str) -> Starlette:
    """(d): the pre-rendered body, whole, with the mock's headers."""
    replies = {
        scenario: [(dict(headers), b"".join(events)) for headers, events in turns]
        for scenario, turns in _load(path).items()
    }

    async def reply(request: Request) -> Response:
        body = await request.body()
        headers, content = replies[request.path_params["scenario"]][body.count(_ASSISTANT)]
        return Response(content, headers=headers)

    return Starlette(routes=[Route("/{scenario}/v1/chat/completions", reply, methods=["POST"])])


def sse_app(path: str) -> Starlette:
    """(e): the same events, one ``send`` each, through sse-starlette."""
    from sse_starlette.sse import EventSourceResponse

    replies = {
        scenario: [
            ({k: v for k, v in headers if k not in ("content-type", "cache-control")}, events)
            for headers, events in turns
        ]
        for scenario, turns in _load(path).items()
    }

    async def reply(request: Request) -> Response:
        body = await request.body()
        headers, events = replies[request.path_params["scenario"]][body.count(_ASSISTANT)]

        async def stream():  # type: ignore[no-untyped-def]
            for event in events:
                yield event  # bytes go out as they are

        return EventSourceResponse(stream(), headers=headers)

    return Starlette(routes=[Route("/{scenario}/v1/chat/completions", reply, methods=["POST"])])


def work_app(path: str) -> Starlette:
    """(f): (d), plus only the work that any mock must do to answer a scripted text reply:
    parse the body, find and parse its instruction chain, fingerprint it, count the turn,
    generate the words (``mockllm._generation.generate_words``, the mock's own, at its
    floor) and render the Chat stream at once (one quote of the words, one replace of their
    spaces: ``mockllm._wire.deltas``' fast path). No routing, selection objects, plan,
    journal, checks or metrics. A tool call's turn is answered with (d)'s bytes after the
    same parsing; the text turn's bytes are made here, and the benchmark checks them
    against the mock's before measuring."""
    # The mock's own owners of each step, so that (f) is the same work done directly.
    from mockllm._generation import generate_words, stable_hex
    from mockllm._parsing import _fingerprint, extract_block
    from mockllm._plan_builder import CREATED_EPOCH
    from mockllm._wire.openai_chat_chunks import SYSTEM_FINGERPRINT

    replies = {
        scenario: [(dict(headers), b"".join(events)) for headers, events in turns]
        for scenario, turns in _load(path).items()
    }

    async def reply(request: Request) -> Response:
        body = await request.body()
        sent = json.loads(body)
        messages = sent["messages"]
        turn = sum(1 for message in messages if message.get("role") == "assistant")
        block = extract_block(messages[0]["content"])
        assert isinstance(block, str), "every benchmark request carries its chain"
        chain = json.loads(block)["instruction_chain"]
        step = chain[turn]["messages"][0]
        headers, content = replies[request.path_params["scenario"]][turn]
        if "text_message" in step:
            fingerprint = _fingerprint(chain)
            words = generate_words(step["text_message"]["length"], 0, fingerprint, turn, "text", 0)
            reply_id = stable_hex(0, fingerprint, turn, "response")
            content = _chat_stream(reply_id, CREATED_EPOCH + turn, sent["model"], SYSTEM_FINGERPRINT, words)
        return Response(content, headers=headers)

    return Starlette(routes=[Route("/{scenario}/v1/chat/completions", reply, methods=["POST"])])


def _chat_stream(reply_id: str, created: int, model: str, system_fingerprint: str, words: str) -> bytes:
    """The Chat Completions stream of ``words``, a word a chunk, as the mock renders it."""
    head = (
        f'data: {{"id":"chatcmpl-{reply_id}","object":"chat.completion.chunk","created":{created},'
        f'"model":{json.dumps(model)},"system_fingerprint":"{system_fingerprint}","choices":[{{"index":0,"delta":'
    )
    after = '},"logprobs":null,"finish_reason":null}]}\n\n'
    first = f'{head}{{"role":"assistant","content":"","refusal":null{after}'
    last = f'{head}{{}},"logprobs":null,"finish_reason":"stop"}}]}}\n\ndata: [DONE]\n\n'
    between = f' "{after}{head}{{"content":"'.encode()
    run = f'"{words}"'.encode().replace(b" ", between)
    return b"".join((first.encode(), f'{head}{{"content":'.encode(), run, after.encode(), last.encode()))


APPS = {"plain": plain_app, "sse": sse_app, "work": work_app}


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in APPS:
        print("usage: python bench/_apps.py plain|sse|work BODIES.json", file=sys.stderr)
        return 2
    app = APPS[argv[0]](argv[1])
    # IPPROTO_TCP, as the mock's own ``bind_socket``: asyncio sets TCP_NODELAY only on a
    # socket that says it is TCP, and without it each reply (headers, then body) waits
    # ~40 ms for the client's delayed ACK.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(2048)
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off", timeout_graceful_shutdown=2)
    print(f"serving on http://127.0.0.1:{sock.getsockname()[1]}", flush=True)
    try:
        uvicorn.Server(config).run(sockets=[sock])
    except KeyboardInterrupt:
        pass
    finally:
        sock.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
