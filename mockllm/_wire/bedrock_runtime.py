"""What Bedrock Runtime's two protocols (``Converse``, ``InvokeModel``) share as codecs.

- The routes: ``POST /model/{modelId}/{operation}``, the plain operation or its
  streaming one; the model id may be an ARN (its ``/`` and ``:`` arrive percent-encoded
  and are decoded by the server), so the operation is read from the end of the path.
- A codec is bound to the request's model id and streaming choice (``for_request``);
  the model id is the request's model (the journal's, what a script's ``match: {model}``
  compares), as the client sent it, decoded.
- A stream is the AWS event stream, cut by an exception message; errors, the request id
  header and the exception names are Bedrock's (``mockllm._wire.bedrock_errors``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from itertools import chain
from typing import Any, Self

from mockllm._plan import ReplyPlan
from mockllm._wire.bedrock_errors import (
    REQUEST_ID_HEADER,
    bedrock_error_body,
    bedrock_error_headers,
    bedrock_stream_exception,
)
from mockllm._wire.deltas import StreamItems, expanded, joined
from mockllm._wire.eventstream import EVENT_STREAM_MEDIA_TYPE
from mockllm._wire.rendering import EventBatches, StreamRenderer, first_events

__all__ = ["BEDROCK_PATH", "BedrockRuntimeCodec", "bedrock_route"]

BEDROCK_PATH = re.compile(
    r"/model/(?P<model>.+)/(?P<operation>converse|converse-stream|invoke|invoke-with-response-stream)$"
)


@functools.lru_cache(maxsize=256)  # asked two or three times a request, of the same few paths
def bedrock_route(path: str, operations: tuple[str, str]) -> tuple[str, bool] | None:
    """The model id of a Bedrock Runtime ``path`` and whether its operation is the
    streaming one (``operations``: the plain operation, then the streaming one), or None
    when ``path`` is not one of ``operations``."""
    found = BEDROCK_PATH.search(path.rstrip("/"))
    if found is None or found.group("operation") not in operations:
        return None
    return found.group("model"), found.group("operation") == operations[1]


class BedrockRuntimeCodec(StreamRenderer):
    """A Bedrock Runtime protocol on ``POST /model/{modelId}/{operation}``: bound to a
    request's model id and operation by ``for_request``; a subclass names its
    ``operations`` and renders its events (``_items``)."""

    operations: tuple[str, str]
    """The plain operation, then the streaming one (``converse``, ``converse-stream``)."""
    request_id_header = REQUEST_ID_HEADER

    def __init__(self, model: str | None = None, stream: bool = False) -> None:
        self.model = model
        self.stream = stream

    @property
    def routes(self) -> tuple[str, ...]:
        return tuple(f"POST /model/{{modelId}}/{operation}" for operation in self.operations)

    def matches(self, path: str) -> bool:
        return bedrock_route(path, self.operations) is not None

    def for_request(self, path: str, query: Mapping[str, str]) -> Self:
        route = bedrock_route(path, self.operations)
        return self if route is None else type(self)(*route)

    @property
    def stream_media_type(self) -> str:
        return EVENT_STREAM_MEDIA_TYPE

    def request_model(self, body: Any) -> str | None:
        """The path's model id (Bedrock reads no model from the body)."""
        return self.model

    def wants_stream(self, body: dict[str, Any]) -> bool:
        """Whether the path named the streaming operation."""
        return self.stream

    def render_stream(self, plan: ReplyPlan, body: dict[str, Any]) -> EventBatches:
        """The stream's events; cut after ``plan.error.after_chunks`` events by an
        exception message."""
        events = expanded(self._items(plan, body), plan)
        error = plan.error
        if error is None:
            return events
        kept = error.after_chunks or 0
        failure = self.render_stream_error(error.status, error.type, error.message, kept)
        return chain(first_events(events, kept), [[failure]])

    def render_joined(self, plan: ReplyPlan, body: dict[str, Any]) -> bytes | None:
        """``render_stream``'s bytes made at once (``mockllm._wire.deltas.joined``): each
        text's messages looked up a word at a time (``EventFramer.frame_words``)."""
        return joined(self._items(plan, body), plan)

    def _items(self, plan: ReplyPlan, body: dict[str, Any]) -> StreamItems:
        """The stream's events: batches of messages, and its texts as runs."""
        raise NotImplementedError

    def render_stream_error(self, status: int, type: str | None, message: str | None, sequence: int) -> bytes:
        """An exception message (``:message-type: exception``), what botocore raises
        ``EventStreamError`` for."""
        return bedrock_stream_exception(status, type, message)

    def render_error(self, status: int, type: str | None, message: str | None, param: str | None = None) -> bytes:
        """``{"message": ...}``; the exception's name goes in ``x-amzn-ErrorType``."""
        return bedrock_error_body(status, type, message)

    def error_headers(self, status: int, type: str | None) -> dict[str, str]:
        """``x-amzn-ErrorType``, where botocore reads the error code."""
        return bedrock_error_headers(status, type)
