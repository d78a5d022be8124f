"""What every wire codec provides. A codec is pure: request body in, bytes out.

A codec never knows how bytes travel: the engine (``mockllm._engine``) calls it, and
the server and the in-process transports deliver what the engine returns. What codecs
share beside this protocol: ``mockllm._wire.encoding`` (JSON, SSE),
``mockllm._wire.reading`` (query, declared tools), ``mockllm._wire.rendering``
(streams, and the defaults of ``StreamRenderer``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from mockllm._conversation import Conversation
from mockllm._plan import ReplyPlan
from mockllm._wire.reading import DeclaredTools, ReplyContract, ToolChoice
from mockllm._wire.rendering import EventBatches

if TYPE_CHECKING:
    from mockllm._held import HeldConversations
    from mockllm._state import State

__all__ = ["WireCodec"]


class WireCodec(Protocol):
    """One provider protocol, and the one owner of everything about it.

    - ``name``: the protocol's name (``openai-chat``…); ``aliases``: short names
      ``mockllm._explain`` also accepts; ``route``: the path suffix it serves
      (``/chat/completions``), under any prefix; ``routes``: the routes the 404 names.
    - ``matches(path)``: whether it serves ``path`` (by default: ends with ``route``).
    - ``for_request(path, query)``: the codec answering one request, given its path
      and query parameters. Protocols that carry the model or the streaming choice in
      the URL (Gemini, Bedrock, Azure) return a codec bound to them; others ``self``.
      The engine calls every method below on what it returns.
    - ``stream_media_type``: the ``content-type`` of a streamed reply (SSE by default;
      NDJSON, AWS event stream, a JSON array); each event carries its own framing.
    - ``request_id_header``: where the provider puts its request id
      (``x-request-id`` for OpenAI, ``request-id`` for Anthropic).
    - ``tool_call_prefix``: how the provider's tool-call ids start (``call``, ``toolu``).
    - ``prompt_fields``: the request fields holding the prompt, whose size gives the
      reported input tokens (``mockllm._usage``).
    - ``request_model(body)``: the model the request names (the journal's ``model``,
      what a script's ``match`` on ``model`` compares): the body's ``model`` by default,
      the path's where the protocol puts it there (Bedrock, Gemini); None when none.
    - ``read(body)``: the neutral conversation; never raises, skips what it cannot read.
    - ``read_request(body, lenient)``: the same reading, after raising
      ``RequestRejected`` for what the real provider rejects (missing required fields,
      and, unless lenient, bad tool-call pairing checked on that reading).
    - ``wants_stream(body)``: whether the client asked for SSE.
    - ``declared_tools(body)``: the tools the request declares, by name, each with its
      JSON schema (None when it gives none); what a scripted tool call is checked against.
    - ``tool_choice(body)``: which declared tools the request lets the model call.
    - ``reply_contract(body)``: what the request holds the reply to (``ReplyContract``:
      its output-token limit, a structured-output format); ``UNBOUNDED`` for none.
    - ``render_json(plan, body)``: the non-streaming response body.
    - ``render_stream(plan, body)``: the streamed response, rendered as it is consumed:
      batches (lists) of complete SSE events (framing included), each batch a few tens
      of KiB at most whatever the reply's length; when ``plan.error.after_chunks`` is
      K, the first K events of the normal stream followed by the protocol's error event.
      ``render_events`` (from ``StreamRenderer``) is the same events in one list.
    - ``render_joined(plan, body)``: ``render_stream``'s bytes joined, made at once (no
      object per event: ``mockllm._wire.deltas``), for a plan of the default shape
      with no error, or None when this codec cannot or the stream is long; what the
      engine sends when a stream goes out in one write.
    - ``render_stream_error(status, type, message, sequence)``: the protocol's in-stream
      error event, as the ``sequence``-th event of the stream (what ends a stream cut by
      ``after_chunks``, or one the mock fails to finish).
    - ``render_error(status, type, message, param)``: the provider's HTTP error body;
      ``type``/``message`` None means the provider's usual ones for ``status``.
    - ``held_conversations(state)``: a new store, kept in ``state`` (``mockllm._state``), of the conversations the provider holds on
      its server (Anthropic threads, OpenAI Responses state), or None when it holds
      none. The engine keeps one per mock and asks it to ``expand`` each request before
      anything reads it and to ``keep`` each reply (``mockllm._held``).
    - ``answer_held_route(method, path, body, store)``: (status, body) of a route of
      that held state (OpenAI's ``POST /v1/conversations``), or None when ``path`` is
      not one.
    - ``error_headers(status, type)``: headers the provider adds to that error reply
      (Bedrock's ``x-amzn-ErrorType``); none by default.
    """

    name: str
    aliases: tuple[str, ...]
    route: str
    request_id_header: str
    tool_call_prefix: str
    prompt_fields: tuple[str, ...]

    @property
    def routes(self) -> tuple[str, ...]: ...

    @property
    def stream_media_type(self) -> str: ...

    def matches(self, path: str) -> bool: ...

    def for_request(self, path: str, query: Mapping[str, str]) -> WireCodec: ...

    def request_model(self, body: Any) -> str | None: ...

    def read(self, body: Any) -> Conversation: ...

    def read_request(self, body: Any, *, lenient: bool) -> Conversation: ...

    def wants_stream(self, body: dict[str, Any]) -> bool: ...

    def declared_tools(self, body: dict[str, Any]) -> DeclaredTools: ...

    def tool_choice(self, body: dict[str, Any]) -> ToolChoice: ...

    def reply_contract(self, body: dict[str, Any]) -> ReplyContract: ...

    def render_json(self, plan: ReplyPlan, body: dict[str, Any]) -> bytes: ...

    def render_stream(self, plan: ReplyPlan, body: dict[str, Any]) -> EventBatches: ...

    def render_events(self, plan: ReplyPlan, body: dict[str, Any]) -> list[bytes]: ...

    def render_joined(self, plan: ReplyPlan, body: dict[str, Any]) -> bytes | None: ...

    def render_stream_error(self, status: int, type: str | None, message: str | None, sequence: int) -> bytes: ...

    def render_error(self, status: int, type: str | None, message: str | None, param: str | None = None) -> bytes: ...

    def held_conversations(self, state: State) -> HeldConversations | None: ...

    def answer_held_route(
        self, method: str, path: str, body: bytes, store: HeldConversations
    ) -> tuple[int, bytes] | None: ...
    def error_headers(self, status: int, type: str | None) -> dict[str, str]: ...
