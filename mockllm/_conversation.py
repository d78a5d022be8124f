"""The provider-neutral conversation: what selection and validation read of a request.

Each wire codec (``mockllm._wire``) is the one reader of its protocol's request body into
this shape; the core never sees a protocol's own fields. Only what selection and
validation need is kept: each message's role, the text of user messages (where
discovery looks for the instruction block), the tool-call ids an assistant message makes
and the tool-call ids a tool message answers, and where the message sits in the
request's own list. Readers never raise on odd shapes: what they cannot read is skipped,
because a malformed conversation must still get a (fallback) reply.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, Literal, NamedTuple

__all__ = [
    "Conversation",
    "Message",
    "MessageReader",
    "Row",
    "chat_messages",
    "listed_conversation",
    "text_of",
    "user_turn",
]

Role = Literal["system", "user", "assistant", "tool"]


class Message(NamedTuple):
    """One message of the neutral conversation.

    ``role="tool"`` carries tool results (``tool_results`` holds the call ids they
    answer): an Anthropic user message made of ``tool_result`` blocks is a tool message,
    not a user message. ``text`` is read for user messages only. ``position`` is the
    index of the message in the request's own list (None for a system prompt given
    outside it); one request item may give two messages (results, then text).
    """

    role: Role
    text: str = ""
    tool_calls: tuple[str, ...] = ()
    tool_results: tuple[str, ...] = ()
    position: int | None = None


Row = tuple[str, str, tuple[str, ...], tuple[str, ...], "int | None"]
"""A message as a plain tuple in ``Message``'s field order: what readers build. A long
agent loop is thousands of messages per request; a plain tuple costs a third less to
make than a ``Message``, and selection only unpacks it."""


class Conversation:
    """A request's messages, oldest first, as its codec read them.

    ``rows`` are the messages as plain tuples (``Row``); ``messages`` names their fields.
    """

    __slots__ = ("rows",)

    def __init__(self, rows: Iterable[Row | Message]) -> None:
        self.rows: tuple[Row, ...] = tuple(rows)

    @property
    def messages(self) -> tuple[Message, ...]:
        return tuple(Message._make(row) for row in self.rows)

    def __len__(self) -> int:
        return len(self.rows)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Conversation) and self.rows == other.rows

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Conversation({list(self.messages)!r})"


def text_of(content: Any, text_types: tuple[str, ...]) -> str:
    """Text of a content value: a string, or a list of strings and typed parts whose
    ``type`` is one of ``text_types``, joined by newlines."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for part in content:
            if isinstance(part, dict) and part.get("type") in text_types:
                text = part.get("text")
                if isinstance(text, str):
                    texts.append(text)
            elif isinstance(part, str):
                texts.append(part)
        return "\n".join(texts)
    return ""


def chat_messages(items: Any) -> Iterator[tuple[int, dict[str, Any], Any]]:
    """``(position, message, role)`` of each object of a chat ``messages`` list (OpenAI
    Chat's, Ollama's): nothing where ``items`` is no list; what is no object is passed
    over, keeping the others' positions."""
    if not isinstance(items, list):
        return
    for position, m in enumerate(items):
        if isinstance(m, dict):
            yield position, m, m.get("role")


MessageReader = Callable[[int, dict[str, Any], list[Row]], None]
"""Appends to a list the rows of one request message, given its position and itself."""


def listed_conversation(system: bool, items: Any, read_message: MessageReader) -> Conversation:
    """The conversation of a request whose system prompt stands apart (``system``: it
    gives one) and whose messages are the objects of the list ``items`` (Anthropic's and
    Bedrock's ``messages``, Gemini's ``contents``), each read by ``read_message``; what
    is no list, or no object, is passed over, keeping the others' positions."""
    out: list[Row] = [("system", "", (), (), None)] if system else []
    if isinstance(items, list):
        for position, item in enumerate(items):
            if isinstance(item, dict):
                read_message(position, item, out)
    return Conversation(tuple(out))


def user_turn(out: list[Row], position: int, results: tuple[str, ...], parts: list[dict[str, Any]]) -> None:
    """Append a user message made of parts (Bedrock's content blocks, Gemini's parts):
    a tool message answering ``results``, if any, then a user message of the parts'
    ``text`` (or of none, when it answers nothing), both at ``position``."""
    texts = [part["text"] for part in parts if isinstance(part.get("text"), str)]
    if results:
        out.append(("tool", "", (), results, position))
    if texts or not results:
        out.append(("user", "\n".join(texts), (), (), position))
