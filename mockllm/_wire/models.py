"""``GET /v1/models`` and ``GET /v1/models/{id}`` in OpenAI's and in Anthropic's shape.

Both providers serve the same path; a request that carries ``anthropic-version`` or
``x-api-key`` (what the ``anthropic`` SDKs send) gets Anthropic's shape, any other
OpenAI's. The mock answers any model name on its other routes, so ``retrieve`` of any
id describes that id; the list holds a small fixed catalogue.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mockllm._wire.encoding import dumps

__all__ = ["ANTHROPIC_MODELS", "OPENAI_MODELS", "is_anthropic_client", "model_list", "model_object"]

OPENAI_MODELS = ("gpt-mock", "gpt-mock-mini", "text-embedding-mock")
ANTHROPIC_MODELS = ("claude-mock-1", "claude-mock-haiku-1")
# 2026-01-01T00:00:00Z, as replies are dated: never the clock.
_CREATED = 1_767_225_600
_CREATED_AT = "2026-01-01T00:00:00Z"


def is_anthropic_client(headers: Mapping[str, str]) -> bool:
    """Whether the request comes from an Anthropic client (by its headers)."""
    return "anthropic-version" in headers or "x-api-key" in headers


def model_object(model_id: str, *, anthropic: bool) -> dict[str, Any]:
    """One model, as the provider describes it."""
    if anthropic:
        return {
            "type": "model",
            "id": model_id,
            "display_name": model_id,
            "created_at": _CREATED_AT,
            "lifecycle": "active",
        }
    return {"id": model_id, "object": "model", "created": _CREATED, "owned_by": "mockllm"}


def model_list(*, anthropic: bool) -> bytes:
    """The catalogue page: OpenAI's ``{"object":"list","data"}`` or Anthropic's cursor page."""
    if anthropic:
        data = [model_object(m, anthropic=True) for m in ANTHROPIC_MODELS]
        return dumps({"data": data, "has_more": False, "first_id": data[0]["id"], "last_id": data[-1]["id"]}).encode()
    return dumps({"object": "list", "data": [model_object(m, anthropic=False) for m in OPENAI_MODELS]}).encode()
