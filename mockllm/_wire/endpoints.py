"""The routes beside the model calls: model catalogue, token counting, embeddings.

- ``GET …/models`` and ``GET …/models/{id}``: ``mockllm._wire.models`` (OpenAI's or
  Anthropic's shape by the request's headers).
- ``POST …/messages/count_tokens``: Anthropic's ``{"input_tokens": N}``, validated as
  Messages validates (less ``max_tokens``) and counted by ``mockllm._usage``, so it equals
  what ``messages.create`` of the same body reports.
- ``POST …/embeddings``: ``mockllm._wire.embeddings``.
- Gemini's ``POST …/models/{model}:countTokens``, ``:embedContent``,
  ``:batchEmbedContents``: ``mockllm._wire.gemini_endpoints``.
- Ollama's ``GET /api/tags``, ``POST /api/show``, ``POST /api/embed``:
  ``mockllm._wire.ollama_endpoints``.

Each answers its own provider's error shape. Like the model routes, they match by
suffix under any prefix.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from mockllm._exceptions import RequestRejected
from mockllm._usage import prompt_tokens
from mockllm._wire.anthropic_messages import anthropic_messages
from mockllm._wire.embeddings import embeddings_response
from mockllm._wire.encoding import dumps
from mockllm._wire.gemini import gemini, gemini_error_body
from mockllm._wire.gemini_endpoints import gemini_endpoint_body, gemini_endpoint_method
from mockllm._wire.models import is_anthropic_client, model_list, model_object
from mockllm._wire.ollama import ollama_error_body
from mockllm._wire.ollama_endpoints import OLLAMA_ENDPOINTS, ollama_endpoint, ollama_endpoint_body
from mockllm._wire.openai_errors import openai_error_body

__all__ = ["ENDPOINT_ROUTES", "EndpointReply", "answer_endpoint"]

ENDPOINT_ROUTES = (
    "GET /v1/models",
    "GET /v1/models/{id}",
    "POST /v1/messages/count_tokens",
    "POST /v1/embeddings",
    "POST /v1beta/models/{model}:countTokens",
    "POST /v1beta/models/{model}:embedContent",
    "POST /v1beta/models/{model}:batchEmbedContents",
    *(f"{method} {route}" for route, method in OLLAMA_ENDPOINTS.items()),
)

_MODELS = re.compile(r"/models(?:/(?P<id>[^/]+))?$")


@dataclass(frozen=True)
class EndpointReply:
    """A complete JSON reply; ``flavour`` is ``openai``, ``anthropic``, ``gemini`` or ``ollama`` (whose
    request id header and error body it uses); ``error`` is the rejection message, if any."""

    status: int
    body: bytes
    flavour: str
    error: str | None = None

    @property
    def request_id_header(self) -> str:
        return "request-id" if self.flavour == "anthropic" else "x-request-id"


def _error(flavour: str, status: int, message: str, param: str | None = None) -> EndpointReply:
    if flavour == "anthropic":
        body = anthropic_messages.render_error(status, None, message)
    elif flavour == "gemini":
        body = gemini_error_body(status, None, message)
    elif flavour == "ollama":
        body = ollama_error_body(status, message)
    else:
        body = openai_error_body(status, None, message, param)
    return EndpointReply(status, body, flavour, message)


def _wrong_method(flavour: str, method: str, path: str, allowed: str) -> EndpointReply:
    return _error(flavour, 405, f"{method} is not allowed on {path}; send a {allowed} request.")


def _json(flavour: str, body: bytes) -> Any | EndpointReply:
    try:
        return json.loads(body)
    except ValueError as exc:
        return _error(
            flavour, 400, f"The request body is not valid JSON: {exc}. Send a JSON object with the request parameters."
        )


def _json_route(
    flavour: str, method: str, path: str, allowed: str, body: bytes, answer: Callable[[Any], bytes]
) -> EndpointReply:
    """A route answered in ``flavour``'s shape: a method other than ``allowed`` is a 405, a
    POST body that is not JSON a 400, and ``answer``'s ``RequestRejected`` that provider's
    error; else ``answer`` of the parsed body (None for a GET)."""
    if method != allowed:
        return _wrong_method(flavour, method, path, allowed)
    parsed = _json(flavour, body) if allowed == "POST" else None
    if isinstance(parsed, EndpointReply):
        return parsed
    try:
        return EndpointReply(200, answer(parsed), flavour)
    except RequestRejected as exc:
        return _error(flavour, exc.status, exc.message, exc.param)


def _count_tokens(body: Any, lenient: bool) -> bytes:
    anthropic_messages.read_count_request(body, lenient=lenient)
    tokens = prompt_tokens(body, anthropic_messages.prompt_fields)
    return dumps({"input_tokens": tokens}).encode()


@lru_cache(maxsize=1024)
def _route_of(path: str) -> tuple[str, str | None] | None:
    """Which of these routes ``path`` (trailing slashes cut) is, and the method, route or
    model id it names; None for any other path. Found once a path: every model call asks."""
    gemini_method = gemini_endpoint_method(path)
    if gemini_method is not None:
        return "gemini", gemini_method
    if gemini.matches(path):
        return None  # generateContent: the codec's
    ollama_route = ollama_endpoint(path)
    if ollama_route is not None:
        return "ollama", ollama_route
    models = _MODELS.search(path)
    if models is not None:
        return "models", models.group("id")
    if path.endswith("/messages/count_tokens"):
        return "count_tokens", None
    if path.endswith("/embeddings"):
        return "embeddings", None
    return None


def answer_endpoint(
    method: str, path: str, headers: Mapping[str, str], body: bytes, *, lenient: bool = False
) -> EndpointReply | None:
    """The reply for one of these routes, or None when ``path`` is none of them."""
    path = path.rstrip("/")
    route = _route_of(path)
    if route is None:
        return None
    kind, named = route
    if kind in ("gemini", "ollama"):
        assert named is not None  # the method or the route
        if kind == "gemini":
            return _json_route("gemini", method, path, "POST", body, lambda parsed: gemini_endpoint_body(named, parsed))
        allowed = OLLAMA_ENDPOINTS[named]
        return _json_route("ollama", method, path, allowed, body, lambda parsed: ollama_endpoint_body(named, parsed))
    if kind == "models":
        anthropic = is_anthropic_client(headers)
        flavour = "anthropic" if anthropic else "openai"
        if method != "GET":
            return _wrong_method(flavour, method, path, "GET")
        if named is None:
            return EndpointReply(200, model_list(anthropic=anthropic), flavour)
        return EndpointReply(200, dumps(model_object(named, anthropic=anthropic)).encode(), flavour)
    if kind == "count_tokens":
        return _json_route("anthropic", method, path, "POST", body, lambda parsed: _count_tokens(parsed, lenient))
    return _json_route("openai", method, path, "POST", body, embeddings_response)
    gemini_method = gemini_endpoint_method(path)
    if gemini_method is not None:
        return _json_route(
            "gemini", method, path, "POST", body, lambda parsed: gemini_endpoint_body(gemini_method, parsed)
        )
    if gemini.matches(path):
        return None  # generateContent: the codec's
    ollama_route = ollama_endpoint(path)
    if ollama_route is not None:
        allowed = OLLAMA_ENDPOINTS[ollama_route]
        return _json_route(
            "ollama", method, path, allowed, body, lambda parsed: ollama_endpoint_body(ollama_route, parsed)
        )
    models = _MODELS.search(path)
    if models is not None:
        anthropic = is_anthropic_client(headers)
        flavour = "anthropic" if anthropic else "openai"
        if method != "GET":
            return _wrong_method(flavour, method, path, "GET")
        model_id = models.group("id")
        if model_id is None:
            return EndpointReply(200, model_list(anthropic=anthropic), flavour)
        return EndpointReply(200, dumps(model_object(model_id, anthropic=anthropic)).encode(), flavour)
    if path.endswith("/messages/count_tokens"):
        return _json_route("anthropic", method, path, "POST", body, lambda parsed: _count_tokens(parsed, lenient))
    if path.endswith("/embeddings"):
        return _json_route("openai", method, path, "POST", body, embeddings_response)
    return None
