"""What every wire codec provides. A codec is pure: request body in, bytes out.

A codec never knows how bytes travel: the engine (``mockllm._engine``) calls it, and
the server and the in-process transports deliver what the engine returns.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import parse_qsl

from mockllm._conversation import Conversation
from mockllm._exceptions import RequestRejected
from mockllm._plan import ReplyPlan

if TYPE_CHECKING:
    from mockllm._held import HeldConversations
    from mockllm._state import State

__all__ = [
    "SSE_MEDIA_TYPE",
    "EventBatches",
    "RequestRejected",
    "StreamRenderer",
    "WireCodec",
    "dumps",
    "first_events",
    "query_params",
    "sse_event",
]

SSE_MEDIA_TYPE = "text/event-stream; charset=utf-8"

EventBatches = Iterator[list[bytes]]
"""A streamed reply as it is rendered: lists of complete events (SSE events, NDJSON
lines, event-stream messages: each with its framing), in order."""


def query_params(query: str) -> dict[str, str]:
    """The parameters of a URL query string (the last value of a repeated name)."""
    return dict(parse_qsl(query, keep_blank_values=True))


# ``json.dumps(obj, separators=(",", ":"), ensure_ascii=False)``, its encoder built once
# (``json.dumps`` builds one per call given options; a stream dumps a few per reply),
# and its C part too where there is one (``JSONEncoder.encode`` builds that per call,
# with the table that finds cycles, which nothing the mock renders has).
_compact = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)
_c_compact = (
    c_make_encoder(None, _compact.default, encode_basestring, None, ":", ",", False, False, True)
    if c_make_encoder is not None
    else None
)


def dumps(obj: Any) -> str:
    """Compact JSON, as the providers send it (and the same bytes on every run)."""
    if _c_compact is None or isinstance(obj, str):
        return _compact.encode(obj)
    return "".join(_c_compact(obj, 0))


def sse_event(data: Any, event: str | None = None) -> bytes:
    """One server-sent event: optional ``event:`` line, one ``data:`` line, blank line."""
    payload = data if isinstance(data, str) else dumps(data)
    if event is None:
        return f"data: {payload}\n\n".encode()
    return f"event: {event}\ndata: {payload}\n\n".encode()


DeclaredTools = dict[str, Any]
"""A request's declared tools: name -> the JSON schema of its arguments (None: no schema)."""


def tools_declared(items: Any, schema_field: str, *, nested: str | None = None) -> DeclaredTools:
    """The named tools of a request's ``tools`` list: each item's ``name`` and
    ``schema_field`` (inside ``item[nested]`` when the item has that object)."""
    declared: DeclaredTools = {}
    if not isinstance(items, list):
        return declared
    for item in items:
        if not isinstance(item, dict):
            continue
        if nested is not None and isinstance(item.get(nested), dict):
            item = item[nested]
        name = item.get("name")
        if isinstance(name, str):
            schema = item.get(schema_field)
            declared[name] = schema if isinstance(schema, dict) else None
    return declared


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


class StreamRenderer:
    """What every codec derives from its ``render_stream``, and the defaults of a codec
    served on one path suffix, streaming SSE."""

    route: str

    @property
    def routes(self) -> tuple[str, ...]:
        return (f"POST /v1{self.route}",)

    @property
    def stream_media_type(self) -> str:
        return SSE_MEDIA_TYPE

    def matches(self, path: str) -> bool:
        return path.endswith(self.route)

    def for_request(self, path: str, query: Mapping[str, str]) -> Any:
        return self

    def request_model(self, body: Any) -> str | None:
        """The body's ``model``, when it is a string."""
        model = body.get("model") if isinstance(body, dict) else None
        return model if isinstance(model, str) else None

    def render_stream(self, plan: ReplyPlan, body: dict[str, Any]) -> EventBatches:
        raise NotImplementedError

    def error_headers(self, status: int, type: str | None) -> dict[str, str]:
        return {}

    def render_events(self, plan: ReplyPlan, body: dict[str, Any]) -> list[bytes]:
        """The whole stream as one list of events (tests, and callers wanting it all)."""
        return [event for batch in self.render_stream(plan, body) for event in batch]

    def render_joined(self, plan: ReplyPlan, body: dict[str, Any]) -> bytes | None:
        """None: the stream is made event by event."""
        return None

    def held_conversations(self, state: State) -> HeldConversations | None:
        """None: most providers hold no conversation between requests."""
        return None

    def answer_held_route(
        self, method: str, path: str, body: bytes, store: HeldConversations
    ) -> tuple[int, bytes] | None:
        return None


def first_events(batches: Iterable[list[Any]], count: int) -> Iterator[list[Any]]:
    """The batches of the first ``count`` items of ``batches`` (the last one cut short),
    taking no more from ``batches`` than those need."""
    if count <= 0:
        return
    for batch in batches:
        if len(batch) >= count:
            yield batch[:count]
            return
        count -= len(batch)
        yield batch
