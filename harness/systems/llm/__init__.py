"""The harness's model client: one assistant turn at a time, streamed over HTTP.

Everything in the harness that needs an LLM (the agent runner, the chain executor's LLM
steps, the planner) talks to it through a ``ModelClient``, which drives an official SDK
(``anthropic``, ``openai`` or ``google-genai``) over HTTP, to whatever model server it is
given (in the tests, the mock: over loopback, or through an HTTP client whose transport
serves it in process). That keeps every run a real end-to-end check of the wire
protocol, streaming and parsing.

The conversation is kept provider-neutral (``UserMessage``, ``AssistantTurn``,
``ToolResults``: ``conversation``) and written in the provider's own form on each call,
by one module a protocol: ``anthropic_messages``, ``openai_chat``, ``gemini``, each a
``ModelClient`` (``client``).

The SDKs come with extras: ``anthropic`` and ``openai`` with ``agent`` (``pip install
"mockllm-harness[agent]"``), both generations: openai 2.x (on ``httpx``) and 3.x (on
``httpx2``), anthropic 0.x (``httpx``) and 1.x or later (``httpx2``); ``google-genai``
with ``gemini``. A client built without its SDK installed fails with an ``ImportError``
naming the extra (``sdks``).
"""

from __future__ import annotations

from typing import Any

from harness.systems.llm import conversation
from harness.systems.llm.anthropic_messages import AnthropicModelClient
from harness.systems.llm.client import ModelClient, ModelError
from harness.systems.llm.conversation import *  # noqa: F403
from harness.systems.llm.gemini import GeminiModelClient
from harness.systems.llm.openai_chat import OpenAIChatModelClient
from harness.systems.llm.sdks import DEFAULT_MODEL, http_library, installed_protocols, require_sdk, sdk_for

# The package's door: the neutral conversation (re-exported whole), the client base and
# its error, each protocol's client, and ``model_client`` to make one.
__all__ = [
    "DEFAULT_MODEL",
    "AnthropicModelClient",
    "GeminiModelClient",
    "ModelClient",
    "ModelError",
    "OpenAIChatModelClient",
    "http_library",
    "installed_protocols",
    "model_client",
    "require_sdk",
    "sdk_for",
]
__all__ += conversation.__all__


def model_client(
    protocol: str = "anthropic-messages",
    *,
    base_url: str | None = None,
    http_client: Any = None,
    model: str | None = None,
    api_key: str = "test",
    max_retries: int = 0,
) -> ModelClient:
    """A ``ModelClient`` for ``protocol``: ``anthropic-messages`` (the default),
    ``openai-chat`` or ``gemini``.

    ``base_url`` is the model server's root (``http://127.0.0.1:PORT``, no ``/v1``);
    without one the SDK decides, as it does for any application: its environment variable
    (``ANTHROPIC_BASE_URL``, ``OPENAI_BASE_URL``, ``GOOGLE_GEMINI_BASE_URL``), else the
    provider's API. ``http_client`` is an async client of the SDK's HTTP library
    (``http_library``) to send through, e.g. one whose transport serves requests in process.
    """
    sdk = sdk_for(protocol)
    if protocol == "anthropic-messages":
        client = sdk.AsyncAnthropic(
            api_key=api_key, base_url=base_url, http_client=http_client, max_retries=max_retries
        )
        return AnthropicModelClient(client, model or DEFAULT_MODEL[protocol])
    if protocol == "gemini":
        # Always an httpx/httpx2 client of ours: left to itself, google-genai sends over
        # aiohttp where aiohttp is installed, which no httpx transport or interception sees.
        http = http_client if http_client is not None else http_library(sdk).AsyncClient()
        retries = sdk.types.HttpRetryOptions(attempts=max_retries + 1) if max_retries else None
        options = sdk.types.HttpOptions(base_url=base_url, httpx_async_client=http, retry_options=retries)
        return GeminiModelClient(
            sdk.Client(api_key=api_key, http_options=options), http, model or DEFAULT_MODEL[protocol]
        )
    openai_url = f"{base_url.rstrip('/')}/v1" if base_url else None
    client = sdk.AsyncOpenAI(api_key=api_key, base_url=openai_url, http_client=http_client, max_retries=max_retries)
    return OpenAIChatModelClient(client, model or DEFAULT_MODEL[protocol])
