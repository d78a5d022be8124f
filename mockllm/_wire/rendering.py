"""How a codec renders a stream: batches of events, and the defaults every codec derives
from its ``render_stream`` (``StreamRenderer``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from mockllm._plan import ReplyPlan
from mockllm._wire.encoding import SSE_MEDIA_TYPE
from mockllm._wire.reading import ANY_TOOL, UNBOUNDED, ReplyContract, ToolChoice

if TYPE_CHECKING:
    from mockllm._held import HeldConversations
    from mockllm._state import State

__all__ = ["EventBatches", "StreamRenderer", "finished_with_last_delta", "first_events", "shaped_finish"]

EventBatches = Iterator[list[bytes]]
"""A streamed reply as it is rendered: lists of complete events (SSE events, NDJSON
lines, event-stream messages: each with its framing), in order."""


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

    def tool_choice(self, body: dict[str, Any]) -> ToolChoice:
        """A protocol without a tool choice lets the model call any declared tool."""
        return ANY_TOOL

    def reply_contract(self, body: dict[str, Any]) -> ReplyContract:
        """A protocol without an output limit or format holds the reply to nothing."""
        return UNBOUNDED

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


def shaped_finish(plan: ReplyPlan) -> bool:
    """Whether ``plan``'s shape sends the finish with the last delta (``finished_with_last_delta``)."""
    return plan.stream is not None and plan.stream.finish_with_last_delta


def finished_with_last_delta(batches: Iterable[list[bytes]], merge: Callable[[bytes, bytes], bytes]) -> EventBatches:
    """``batches`` with the finishing event, the first of the last batch, merged into the
    event before it: ``merge(last_delta, finishing)`` is the one event that carries both
    (the stream shape's ``finish_with_last_delta``). A stream of one batch is left as it is."""
    before: bytes | None = None  # the last event of the batches before ``held``
    held: list[bytes] | None = None
    for batch in batches:
        if not batch:
            continue
        if held is not None:
            *rest, last = held
            earlier = rest if before is None else [before, *rest]
            if earlier:
                yield earlier
            before = last
        held = batch
    if held is None:
        return
    if before is None:
        yield held
        return
    yield [merge(before, held[0]), *held[1:]]
