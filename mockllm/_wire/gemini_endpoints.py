"""Gemini's routes beside ``generateContent``: ``:countTokens``, ``:embedContent`` and
``:batchEmbedContents`` (what ``google-genai``'s ``embed_content`` calls on the Google
AI API), under ``/models/{model}`` on either path family.

``countTokens`` reports what ``generateContent`` of the same ``contents`` reports as
``promptTokenCount`` (``mockllm._usage``). Embeddings are ``mockllm._wire.embeddings``'
deterministic unit vectors of the parts' text, ``outputDimensionality`` long (768 by
default, Gemini's embedding size).
"""

from __future__ import annotations

from typing import Any

from mockllm._exceptions import RequestRejected
from mockllm._usage import prompt_tokens
from mockllm._wire.embeddings import MAX_DIMENSIONS, embed
from mockllm._wire.encoding import dumps
from mockllm._wire.gemini import GEMINI_PATH, field, gemini

__all__ = ["GEMINI_DIMENSIONS", "GEMINI_ENDPOINTS", "gemini_endpoint_body"]

GEMINI_DIMENSIONS = 768
GEMINI_ENDPOINTS = ("countTokens", "embedContent", "batchEmbedContents")


def _reject(message: str) -> RequestRejected:
    return RequestRejected(message, status=400, type="INVALID_ARGUMENT")


def gemini_endpoint_method(path: str) -> str | None:
    """The Gemini method ``path`` names, when it is one of ``GEMINI_ENDPOINTS``."""
    found = GEMINI_PATH.search(path)
    method = found.group("method") if found is not None else None
    return method if method in GEMINI_ENDPOINTS else None


def _count_tokens(body: dict[str, Any]) -> dict[str, Any]:
    request = field(body, "generateContentRequest")
    request = request if isinstance(request, dict) else body
    gemini.read_request(request, lenient=True)
    return {"totalTokens": prompt_tokens(request, gemini.prompt_fields)}


def _embedding(request: Any, where: str) -> dict[str, Any]:
    if not isinstance(request, dict):
        raise _reject(f"Invalid JSON payload received. {where}: expected an object.")
    content = request.get("content")
    parts = content.get("parts") if isinstance(content, dict) else None
    if not isinstance(parts, list) or not parts:
        raise _reject(f"* {where}.content: contents.parts must not be empty.\n")
    text = "\n".join(p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str))
    size = field(request, "outputDimensionality") or GEMINI_DIMENSIONS
    if not isinstance(size, int) or isinstance(size, bool) or not 1 <= size <= MAX_DIMENSIONS:
        raise _reject(
            f"* {where}.output_dimensionality: must be an integer from 1 to {MAX_DIMENSIONS}, got {size!r}.\n"
        )
    return {"values": embed(text, size)}


def gemini_endpoint_body(method: str, body: Any) -> bytes:
    """The reply to ``method`` (one of ``GEMINI_ENDPOINTS``); ``RequestRejected`` for
    what Gemini rejects."""
    if not isinstance(body, dict):
        raise _reject("Invalid JSON payload received. Expected an object.")
    if method == "countTokens":
        return dumps(_count_tokens(body)).encode()
    if method == "embedContent":
        return dumps({"embedding": _embedding(body, "EmbedContentRequest")}).encode()
    requests = body.get("requests")
    if not isinstance(requests, list) or not requests:
        raise _reject("* BatchEmbedContentsRequest.requests: requests is not specified\n")
    embeddings = [_embedding(r, f"BatchEmbedContentsRequest.requests[{i}]") for i, r in enumerate(requests)]
    return dumps({"embeddings": embeddings}).encode()
