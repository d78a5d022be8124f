"""Bedrock Runtime ``InvokeModel`` and ``InvokeModelWithResponseStream`` for Anthropic
models: ``POST /model/{modelId}/invoke`` and ``…/invoke-with-response-stream``.

The body is an Anthropic Messages body without ``model`` (the path names the model)
and with ``anthropic_version: "bedrock-2023-05-31"``; the reply is the Anthropic
``Message`` (``mockllm._wire.anthropic_messages`` reads and renders both). The stream is
the AWS event stream: one ``chunk`` event per Anthropic stream event, its JSON
base64-encoded in ``{"bytes": ...}`` (no ``ping``: Bedrock sends none); the last,
``message_stop``, carries ``amazon-bedrock-invocationMetrics``. Errors are Bedrock's
(``mockllm._wire.bedrock_errors``). Other model families' bodies (Titan, Llama, …) are
not built: a body without ``anthropic_version`` is a ``ValidationException`` saying so.
"""

from __future__ import annotations

import base64
import json
from binascii import b2a_base64
from json.encoder import encode_basestring as encode_string
from typing import Any

from mockllm._conversation import Conversation
from mockllm._exceptions import RequestRejected
from mockllm._plan import ReplyPlan
from mockllm._wire.anthropic_messages import SSEFraming, anthropic_messages, stream_events
from mockllm._wire.bedrock_errors import reject
from mockllm._wire.bedrock_runtime import BedrockRuntimeCodec
from mockllm._wire.deltas import StreamItems
from mockllm._wire.encoding import dumps
from mockllm._wire.eventstream import FramedRun, framer
from mockllm._wire.reading import DeclaredTools, ReplyContract, ToolChoice

__all__ = ["BedrockInvokeCodec", "bedrock_invoke", "decode_chunk"]

_EXTRANEOUS = ("model", "stream")
_CHUNK = framer("chunk")
_KEPT_KINDS = ("content_block_start", "content_block_stop")


class _ChunkFraming(SSEFraming):
    """The Anthropic stream's events as ``chunk`` messages: each event's JSON, base64'd
    in ``{"bytes": ...}``; no ``ping``; ``message_stop`` carrying the invocation metrics.
    A delta's message depends only on its block's head and its piece, which repeat (the
    words come from a small vocabulary), so deltas are framed by ``EventFramer.frame_kept``
    (bounded tables) and a repeated one costs a lookup."""

    def __init__(self, plan: ReplyPlan) -> None:
        self.ping = ()
        self.plan = plan

    def event(self, kind: str, data: str) -> bytes:
        if kind == "message_stop":
            data = dumps({"type": kind, "amazon-bedrock-invocationMetrics": _metrics(self.plan)})
        elif kind in _KEPT_KINDS:  # the same for every reply (but a tool call's start)
            return _CHUNK.frame_kept(kind, [data], _framed_text)[0]
        return _CHUNK.message(_framed_text(data))

    def deltas(self, head: str, pieces: list[str]) -> list[bytes]:
        return _CHUNK.frame_kept(head, pieces, lambda piece: _framed_text(head + encode_string(piece) + "}}"))

    def text_deltas(self, head: str, text: str, plan: ReplyPlan) -> StreamItems:
        return [FramedRun(_CHUNK, head, lambda piece: _framed_text(head + encode_string(piece) + "}}"), text)]


def _framed_text(data: str) -> bytes:
    """The ``chunk`` payload carrying the event JSON ``data``."""
    return b'{"bytes":"' + b2a_base64(data.encode(), newline=False) + b'"}'


def _malformed(reason: str) -> RequestRejected:
    return reject(f"Malformed input request: #: {reason}, please reformat your input and try again.")


def _metrics(plan: ReplyPlan) -> dict[str, int]:
    """Fixed rates (as ``Converse``'s ``latencyMs``): never the clock."""
    return {
        "inputTokenCount": plan.usage.input_tokens,
        "outputTokenCount": plan.usage.output_tokens,
        "invocationLatency": 100 + 10 * plan.usage.output_tokens,
        "firstByteLatency": 100,
    }


class BedrockInvokeCodec(BedrockRuntimeCodec):
    """``InvokeModel`` with an Anthropic Messages body, as ``boto3``'s ``invoke_model``
    and ``anthropic.AnthropicBedrock`` send it; bound to the model and the operation by
    ``for_request``."""

    name = "bedrock-invoke"
    aliases: tuple[str, ...] = ("invoke-model", "bedrock-anthropic")
    route = "/invoke"
    operations = ("invoke", "invoke-with-response-stream")
    tool_call_prefix = anthropic_messages.tool_call_prefix
    prompt_fields = anthropic_messages.prompt_fields
    shape_knobs: tuple[str, ...] = ("arguments", "usage_chunk")

    def _with_model(self, body: dict[str, Any]) -> dict[str, Any]:
        return {**body, "model": self.model or ""}

    def read(self, body: Any) -> Conversation:
        """Anthropic Messages' reading."""
        return anthropic_messages.read(body)

    def read_request(self, body: Any, *, lenient: bool) -> Conversation:
        """Bedrock's own rules (``anthropic_version`` required, no ``model`` or ``stream``),
        then Anthropic Messages' checks, each a ``ValidationException``."""
        if not isinstance(body, dict):
            raise _malformed("expected type: JSONObject")
        if "anthropic_version" not in body:
            raise _malformed(
                "required key [anthropic_version] not found (the mock serves InvokeModel for Anthropic models: "
                'send "anthropic_version": "bedrock-2023-05-31")'
            )
        for key in _EXTRANEOUS:
            if key in body:
                raise _malformed(f"extraneous key [{key}] is not permitted")
        try:
            return anthropic_messages.read_request(self._with_model(body), lenient=lenient)
        except RequestRejected as exc:
            raise reject(exc.message, exc.status) from None

    def declared_tools(self, body: dict[str, Any]) -> DeclaredTools:
        return anthropic_messages.declared_tools(body)

    def tool_choice(self, body: dict[str, Any]) -> ToolChoice:
        return anthropic_messages.tool_choice(body)

    def reply_contract(self, body: dict[str, Any]) -> ReplyContract:
        return anthropic_messages.reply_contract(body)

    def render_json(self, plan: ReplyPlan, body: dict[str, Any]) -> bytes:
        """The Anthropic ``Message``, its ``model`` the path's model id."""
        return anthropic_messages.render_json(plan, self._with_model(body))

    def _items(self, plan: ReplyPlan, body: dict[str, Any]) -> StreamItems:
        """``chunk`` events, one an Anthropic stream event."""
        return stream_events(plan, self._with_model(body), _ChunkFraming(plan))


def decode_chunk(payload: bytes) -> Any:
    """The Anthropic event a ``chunk`` payload carries (tests and recording read it)."""
    return json.loads(base64.b64decode(json.loads(payload)["bytes"]))


bedrock_invoke = BedrockInvokeCodec()
