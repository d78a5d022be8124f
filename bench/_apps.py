"""Minimal reference servers for ``bench/bench_wire.py``: no logic, pre-rendered bytes.

    python bench/_apps.py plain BODIES.json   # (d) Starlette, whole body in one write
    python bench/_apps.py sse BODIES.json     # (e) sse-starlette, one write per event

``BODIES.json`` (written by the benchmark) maps a scenario name to its replies, one per
turn, exactly as ``MockLLM().handle`` rendered them::

    {"text": {"headers": [[name, value], ...],
              "turns": [{"headers": [...], "events": ["data: ...\\n\\n", ...]}, ...]}}

Events are stored as latin-1 text so every byte round-trips. A request is answered by
its scenario (the first path segment: ``/text/v1/chat/completions``) and its turn, the
number of assistant messages in the body — a byte count, no JSON parsing.

Both apps run on uvicorn with the mock server's settings (log_level warning, no access
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


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in ("plain", "sse"):
        print("usage: python bench/_apps.py plain|sse BODIES.json", file=sys.stderr)
        return 2
    app = plain_app(argv[1]) if argv[0] == "plain" else sse_app(argv[1])
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
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
