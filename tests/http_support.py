"""HTTP helpers for tests: clients for the harness's model clients on whichever SDK
generation is installed, and a keep-alive connection's follow-up request."""

from __future__ import annotations

import http.client
import json
from typing import Any

from harness.systems.llm import http_library, sdk_for
from mockllm import MockLLM
from mockllm._transports import HTTPX2Transport, HTTPXTransport


def sdk_http_client(protocol: str, mock: MockLLM | None = None, **kwargs: Any) -> Any:
    """An async client of the HTTP library ``protocol``'s SDK is built on (``httpx2`` for
    openai>=3 and anthropic>=1, ``httpx`` before), served in process by ``mock`` if given."""
    library = http_library(sdk_for(protocol))
    if mock is not None:
        kwargs["transport"] = (HTTPXTransport if library.__name__ == "httpx" else HTTPX2Transport)(mock)
    return library.AsyncClient(**kwargs)


def follow_up(
    connection: http.client.HTTPConnection,
    method: str,
    path: str,
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, Any]:
    """Status and JSON body of one more request on ``connection``, asserting that it went
    over the same socket: the server kept the keep-alive connection usable (no reconnect)."""
    sock = connection.sock
    connection.request(method, path, body=body, headers=headers or {})
    response = connection.getresponse()
    payload = json.loads(response.read())
    assert connection.sock is sock, "the server closed the connection; the client had to reconnect"
    return response.status, payload
