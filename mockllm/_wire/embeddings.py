"""OpenAI ``POST /v1/embeddings`` with deterministic vectors.

The same input (text, or token ids) gives the same unit-length vector in any process:
each component comes from a generator seeded by a hash of the input. ``dimensions``
sets the length (default ``DEFAULT_DIMENSIONS``); ``encoding_format`` ``float`` sends
numbers, ``base64`` the little-endian float32 bytes (the openai SDK asks for base64 when
the caller names no format, and decodes it). Float values are float32-rounded, so both
forms carry the same numbers. Usage: ``mockllm._usage.tokens_in`` per text, one token per
token id.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import random
import struct
from typing import Any

from mockllm._exceptions import RequestRejected
from mockllm._usage import tokens_in
from mockllm._wire.encoding import dumps

__all__ = ["DEFAULT_DIMENSIONS", "MAX_DIMENSIONS", "embed", "embeddings_response"]

DEFAULT_DIMENSIONS = 1536
MAX_DIMENSIONS = 3072


def _reject(message: str, param: str) -> RequestRejected:
    return RequestRejected(message, status=400, type="invalid_request_error", param=param)


def embed(item: str | list[int], dimensions: int) -> list[float]:
    """The vector of one input: unit length, float32 values."""
    key = item if isinstance(item, str) else "tokens:" + json.dumps(item)
    rng = random.Random(hashlib.sha256(key.encode()).digest())
    raw = [rng.gauss(0.0, 1.0) for _ in range(dimensions)]
    norm = math.sqrt(sum(x * x for x in raw)) or 1.0
    packed = struct.pack(f"<{dimensions}f", *(x / norm for x in raw))
    return list(struct.unpack(f"<{dimensions}f", packed))


def _inputs(value: Any) -> list[str | list[int]]:
    def is_tokens(v: Any) -> bool:
        return isinstance(v, list) and bool(v) and all(isinstance(t, int) and not isinstance(t, bool) for t in v)

    if isinstance(value, str):
        items: list[Any] = [value]
    elif is_tokens(value):
        items = [value]
    elif isinstance(value, list) and value and all(isinstance(v, str) or is_tokens(v) for v in value):
        items = value
    else:
        raise _reject(
            "'input' must be a string, an array of strings, an array of token ids or an "
            f"array of token id arrays, and not empty; got {json.dumps(value)[:80]}.",
            "input",
        )
    for index, item in enumerate(items):
        if item == "":
            raise _reject(f"'$.input[{index}]' is invalid: an input must not be an empty string.", "input")
    return items


def embeddings_response(body: Any) -> bytes:
    """The response to an embeddings request; ``RequestRejected`` for what OpenAI rejects."""
    if not isinstance(body, dict):
        raise _reject("The request body must be a JSON object.", "body")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise _reject("you must provide a model parameter", "model")
    if "input" not in body:
        raise _reject("'input' is a required property", "input")
    items = _inputs(body["input"])
    dimensions = body.get("dimensions", DEFAULT_DIMENSIONS)
    if not isinstance(dimensions, int) or isinstance(dimensions, bool) or not 1 <= dimensions <= MAX_DIMENSIONS:
        raise _reject(f"'dimensions' must be an integer from 1 to {MAX_DIMENSIONS}, got {dimensions!r}.", "dimensions")
    encoding = body.get("encoding_format", "float")
    if encoding not in ("float", "base64"):
        raise _reject(f"'encoding_format' must be 'float' or 'base64', got {encoding!r}.", "encoding_format")
    data = []
    for index, item in enumerate(items):
        vector = embed(item, dimensions)
        value: Any = vector
        if encoding == "base64":
            value = base64.b64encode(struct.pack(f"<{dimensions}f", *vector)).decode()
        data.append({"object": "embedding", "index": index, "embedding": value})
    tokens = sum(tokens_in(item) if isinstance(item, str) else len(item) for item in items)
    return dumps(
        {"object": "list", "data": data, "model": model, "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}
    ).encode()
