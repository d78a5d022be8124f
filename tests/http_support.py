"""HTTP clients for the harness's model clients in tests, on whichever SDK generation is installed."""

from __future__ import annotations

from typing import Any

from harness.llm import http_library, sdk_for
from mockllm import MockLLM
from mockllm._transports import HTTPX2Transport, HTTPXTransport


def sdk_http_client(protocol: str, mock: MockLLM | None = None, **kwargs: Any) -> Any:
    """An async client of the HTTP library ``protocol``'s SDK is built on (``httpx2`` for
    openai>=3 and anthropic>=1, ``httpx`` before), served in process by ``mock`` if given."""
    library = http_library(sdk_for(protocol))
    if mock is not None:
        kwargs["transport"] = (HTTPXTransport if library.__name__ == "httpx" else HTTPX2Transport)(mock)
    return library.AsyncClient(**kwargs)
