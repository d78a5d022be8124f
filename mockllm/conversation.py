"""The provider-neutral conversation, and readers from each protocol's request body.

Only what selection and validation need is kept: each message's role, its text, the
tool-call ids an assistant message makes and the tool-call ids a tool message answers.
Readers never raise on odd shapes: anything they cannot read is skipped, because a
malformed conversation must still get a (fallback) reply, never an exception. The wire
layer rejects requests a real provider would reject before selection runs.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

__all__ = [
    "Conversation",
    "Message",
    "PROTOCOLS",
    "conversation_from_anthropic_messages",
    "conversation_from_chat_completions",
    "conversation_from_responses",
    "read_conversation",
]

Role = Literal["system", "user", "assistant", "tool"]

PROTOCOLS = ("openai-chat", "anthropic-messages", "openai-responses")


@dataclass(frozen=True)
class Message:
    """One message of the neutral conversation.

    ``role="tool"`` carries tool results (``tool_results`` holds the call ids they
    answer). An Anthropic user message made only of ``tool_result`` blocks becomes a
    tool message, not a user message.
    """

    role: Role
    text: str = ""
    tool_calls: tuple[str, ...] = ()
    tool_results: tuple[str, ...] = ()


@dataclass(frozen=True)
class Conversation:
    messages: tuple[Message, ...]

    def __len__(self) -> int:
        return len(self.messages)


def _text_of(content: Any, text_types: tuple[str, ...]) -> str:
    """Text of a content value: a string, or a list of typed parts."""
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


def _ids(items: Any, key: str) -> tuple[str, ...]:
    if not isinstance(items, list):
        return ()
    return tuple(str(item[key]) for item in items if isinstance(item, dict) and key in item)


def _messages(body: Any, key: str) -> Iterable[dict[str, Any]]:
    items = body.get(key) if isinstance(body, dict) else None
    if not isinstance(items, list):
        return ()
    return (m for m in items if isinstance(m, dict))


def conversation_from_chat_completions(body: Any) -> Conversation:
    """Read an OpenAI Chat Completions request body."""
    out: list[Message] = []
    for m in _messages(body, "messages"):
        role = m.get("role")
        if role in ("system", "developer"):
            out.append(Message("system", _text_of(m.get("content"), ("text",))))
        elif role == "user":
            out.append(Message("user", _text_of(m.get("content"), ("text",))))
        elif role == "assistant":
            out.append(
                Message(
                    "assistant",
                    _text_of(m.get("content"), ("text", "refusal")),
                    tool_calls=_ids(m.get("tool_calls"), "id"),
                )
            )
        elif role in ("tool", "function"):
            call_id = m.get("tool_call_id")
            results = (str(call_id),) if call_id is not None else ()
            out.append(Message("tool", _text_of(m.get("content"), ("text",)), tool_results=results))
    return Conversation(tuple(out))


def conversation_from_anthropic_messages(body: Any) -> Conversation:
    """Read an Anthropic Messages request body.

    Tool results arrive as ``role="user"`` messages made of ``tool_result`` blocks;
    those become tool messages. A user message that also has text becomes a tool
    message (its results) followed by a user message (its text).
    """
    out: list[Message] = []
    system = body.get("system") if isinstance(body, dict) else None
    if system:
        out.append(Message("system", _text_of(system, ("text",))))
    for m in _messages(body, "messages"):
        role = m.get("role")
        content = m.get("content")
        blocks = content if isinstance(content, list) else []
        if role == "user":
            results = tuple(
                str(b.get("tool_use_id"))
                for b in blocks
                if isinstance(b, dict) and b.get("type") == "tool_result"
            )
            if results:
                out.append(Message("tool", tool_results=results))
            has_text = isinstance(content, str) or any(
                isinstance(b, dict) and b.get("type") == "text" for b in blocks
            )
            if has_text or not results:
                out.append(Message("user", _text_of(content, ("text",))))
        elif role == "assistant":
            calls = tuple(
                str(b.get("id")) for b in blocks if isinstance(b, dict) and b.get("type") == "tool_use"
            )
            out.append(Message("assistant", _text_of(content, ("text",)), tool_calls=calls))
    return Conversation(tuple(out))


_RESPONSES_OUTPUT_ITEMS = {"function_call", "reasoning", "web_search_call", "file_search_call",
                           "computer_call", "custom_tool_call", "mcp_call", "image_generation_call",
                           "code_interpreter_call"}


def conversation_from_responses(body: Any) -> Conversation:
    """Read an OpenAI Responses request body (``instructions`` and ``input``).

    Model-output items (assistant messages, function calls, reasoning) become
    assistant messages; consecutive ones form one turn when counted.
    """
    out: list[Message] = []
    if not isinstance(body, dict):
        return Conversation(())
    instructions = body.get("instructions")
    if isinstance(instructions, str) and instructions:
        out.append(Message("system", instructions))
    items = body.get("input")
    if isinstance(items, str):
        out.append(Message("user", items))
        return Conversation(tuple(out))
    for item in _messages(body, "input"):
        kind = item.get("type", "message")
        if not isinstance(kind, str):  # e.g. a list: not hashable, so not a set member
            continue
        if kind == "message":
            role = item.get("role")
            text = _text_of(item.get("content"), ("input_text", "output_text", "text", "refusal"))
            if role in ("system", "developer"):
                out.append(Message("system", text))
            elif role == "user":
                out.append(Message("user", text))
            elif role == "assistant":
                out.append(Message("assistant", text))
        elif kind == "function_call":
            call_id = item.get("call_id")
            out.append(Message("assistant", tool_calls=(str(call_id),) if call_id is not None else ()))
        elif kind in ("function_call_output", "custom_tool_call_output"):
            call_id = item.get("call_id")
            out.append(Message("tool", tool_results=(str(call_id),) if call_id is not None else ()))
        elif kind in _RESPONSES_OUTPUT_ITEMS:
            out.append(Message("assistant"))
    return Conversation(tuple(out))


_READERS = {
    "openai-chat": conversation_from_chat_completions,
    "anthropic-messages": conversation_from_anthropic_messages,
    "openai-responses": conversation_from_responses,
}


def read_conversation(body: Any, protocol: str) -> Conversation:
    """Read ``body`` written in ``protocol`` (one of ``PROTOCOLS``)."""
    try:
        reader = _READERS[protocol]
    except KeyError:
        raise ValueError(f"unknown protocol {protocol!r}; use one of {list(PROTOCOLS)}") from None
    return reader(body)
