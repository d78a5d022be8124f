"""Discovery and counting: which instruction answers this request, and why.

The scan walks the request's messages from newest to oldest and stops at the first
user message holding ``<|instruction_start|>``: the last tagged user message wins.
On the way it counts assistant turns — a run of consecutive assistant items (an
assistant message, a client's split of one, Responses-API output items) is one turn;
tool results never count and are not user messages, even when Anthropic carries them
in a ``role="user"`` message. The turn index selects the instruction.

The scan reads the raw request body (no neutral conversation is built), so its cost
is a fraction of parsing the body's JSON; ``select_in_conversation`` runs the same
scan over a neutral ``Conversation`` and is what the property tests compare against.

Placement by tool-call id: ids the mock makes encode their chain and turn (see
``mockllm.generation``). If the newest mock-made id in the history says turn ``t`` of
this chain and ``k`` assistant turns follow it, the index is at least ``t + 1 + k`` — a
client that trims assistant messages from its history is still placed correctly.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from mockllm.conversation import PROTOCOLS, Conversation, Message, _text_of
from mockllm.generation import TOOL_CALL_ID, turn_of_tool_call_id
from mockllm.instructions import INSTRUCTION_START, Instruction
from mockllm.script import InvalidInstruction, Script, ScriptFailure, extract_block, parse_script

__all__ = ["Selection", "select", "select_in_conversation"]

_USER, _ASSISTANT, _TOOL, _OTHER = "user", "assistant", "tool", "other"
# An item the neutral readers drop (not a message they know): it neither counts nor
# separates two assistant items.
_SKIP = "skip"


@dataclass(frozen=True)
class Selection:
    """Which instruction answers a request, and why.

    ``instruction`` is None when the reply is the fallback; ``fallback_reason`` then
    says why. ``turn_index`` is None only when no chain was found.
    """

    protocol: str
    chain_found: bool
    instruction: Instruction | None
    fallback_reason: str | None
    turn_index: int | None = None
    chain_length: int = 0
    chain_id: str | None = None
    legacy: bool = False
    message_index: int | None = None
    """Index of the tagged message in the request's own message list."""
    counted_turns: int = 0
    placed_by_tool_call_id: bool = False
    warnings: tuple[str, ...] = field(default=())
    step_labels: tuple[str, ...] = field(default=())
    """Each instruction's id (or position) in chain order, to report unused steps."""

    @property
    def instruction_id(self) -> str | None:
        """The instruction's ``id``, or its position when it has none."""
        if self.instruction is None:
            return None
        return self.instruction.id if self.instruction.id is not None else str(self.turn_index)

    def describe(self) -> str:
        """A few lines a person can read to see why this reply was chosen."""
        lines = [f"protocol: {self.protocol}"]
        if not self.chain_found:
            lines.append(f"chain: none ({self.fallback_reason})")
        elif self.chain_id is None:
            lines.append(f"chain: unusable instruction block in message {self.message_index}")
            lines.append(f"runs: fallback ({self.fallback_reason})")
        else:
            kind = "legacy single instruction" if self.legacy else f"chain of {self.chain_length}"
            lines.append(f"chain: {kind} [{self.chain_id}] in message {self.message_index}")
            placed = " (placed by a tool-call id)" if self.placed_by_tool_call_id else ""
            lines.append(
                f"turn index: {self.turn_index} ({self.counted_turns} assistant turns counted){placed}"
            )
            if self.instruction is not None:
                lines.append(f"runs: instruction {self.instruction_id!r}")
            else:
                lines.append(f"runs: fallback ({self.fallback_reason})")
        lines.extend(f"warning: {w}" for w in self.warnings)
        return "\n".join(lines)

    __str__ = describe


# -- per-protocol classification of raw items ------------------------------------------
# Each returns (kind, text) where text is only computed for user messages.

def _chat_kind(m: Any) -> tuple[str, str]:
    if not isinstance(m, dict):
        return _SKIP, ""
    role = m.get("role")
    if role == "assistant":
        return _ASSISTANT, ""
    if role == "user":
        content = m.get("content")
        return _USER, content if isinstance(content, str) else _text_of(content, ("text",))
    if role in ("tool", "function"):
        return _TOOL, ""
    if role in ("system", "developer"):
        return _OTHER, ""
    return _SKIP, ""


def _chat_ids(m: dict[str, Any]) -> list[str]:
    role = m.get("role")
    if role == "assistant":
        calls = m.get("tool_calls")
        return [str(c.get("id")) for c in calls if isinstance(c, dict)] if isinstance(calls, list) else []
    return [str(m.get("tool_call_id"))] if role in ("tool", "function") else []


def _anthropic_kind(m: Any) -> tuple[str, str]:
    if not isinstance(m, dict):
        return _SKIP, ""
    role = m.get("role")
    if role == "assistant":
        return _ASSISTANT, ""
    if role != "user":
        return _SKIP, ""
    content = m.get("content")
    if isinstance(content, str):
        return _USER, content
    if isinstance(content, list):
        has_text = has_result = False
        for block in content:
            if isinstance(block, dict):
                kind = block.get("type")
                has_text = has_text or kind == "text"
                has_result = has_result or kind == "tool_result"
        if has_result and not has_text:
            return _TOOL, ""
    return _USER, _text_of(content, ("text",))


def _anthropic_ids(m: dict[str, Any]) -> list[str]:
    content = m.get("content")
    if not isinstance(content, list):
        return []
    key, block_type = ("id", "tool_use") if m.get("role") == "assistant" else ("tool_use_id", "tool_result")
    return [str(b.get(key)) for b in content
            if isinstance(b, dict) and b.get("type") == block_type and key in b]


_RESPONSES_MODEL_ITEMS = frozenset(
    {"function_call", "reasoning", "web_search_call", "file_search_call", "computer_call",
     "custom_tool_call", "mcp_call", "image_generation_call", "code_interpreter_call"}
)


_RESPONSES_ID_ITEMS = frozenset({"function_call", "function_call_output", "custom_tool_call_output"})


def _responses_kind(item: Any) -> tuple[str, str]:
    if not isinstance(item, dict):
        return _SKIP, ""
    kind = item.get("type", "message")
    if not isinstance(kind, str):  # e.g. a list: not hashable, so not a set member
        return _SKIP, ""
    if kind == "message":
        role = item.get("role")
        if role == "assistant":
            return _ASSISTANT, ""
        if role == "user":
            return _USER, _text_of(item.get("content"), ("input_text", "output_text", "text", "refusal"))
        if role in ("system", "developer"):
            return _OTHER, ""
        return _SKIP, ""
    if kind in _RESPONSES_MODEL_ITEMS:
        return _ASSISTANT, ""
    if kind in ("function_call_output", "custom_tool_call_output"):
        return _TOOL, ""
    return _SKIP, ""


def _responses_ids(item: dict[str, Any]) -> list[str]:
    call_id = item.get("call_id")
    return [str(call_id)] if call_id is not None and item.get("type") in _RESPONSES_ID_ITEMS else []


def _neutral_kind(m: Message) -> tuple[str, str]:
    return m.role if m.role != "system" else _OTHER, m.text


def _neutral_ids(m: Message) -> list[str]:
    return list(m.tool_calls or m.tool_results)


_CLASSIFIERS: dict[str, tuple[Callable[[Any], tuple[str, str]], Callable[[Any], list[str]]]] = {
    "openai-chat": (_chat_kind, _chat_ids),
    "anthropic-messages": (_anthropic_kind, _anthropic_ids),
    "openai-responses": (_responses_kind, _responses_ids),
}


def _items(body: Any, protocol: str) -> Sequence[Any]:
    if not isinstance(body, dict):
        return ()
    if protocol == "openai-responses":
        items = body.get("input")
        if isinstance(items, str):
            return ({"role": "user", "content": items},)
    else:
        items = body.get("messages")
    return items if isinstance(items, list) else ()


def _scan(
    items: Sequence[Any],
    kind_of: Callable[[Any], tuple[str, str]],
    ids_of: Callable[[Any], list[str]],
    protocol: str,
) -> Selection:
    turns = 0
    in_run = False
    # The newest mock-made id, and how many assistant turns were counted after its turn.
    newest_mock: tuple[str, int] | None = None
    for index in range(len(items) - 1, -1, -1):
        item = items[index]
        kind, text = kind_of(item)
        if kind == _SKIP:
            continue
        if kind == _ASSISTANT:
            if not in_run:
                turns += 1
                in_run = True
        else:
            in_run = False
            if kind == _USER and INSTRUCTION_START in text:
                return _resolve(protocol, text, index, turns, newest_mock)
        # User items too: an Anthropic user message may carry tool results next to text.
        if newest_mock is None and kind != _OTHER:
            for call_id in ids_of(item):
                if "_mk" in call_id and TOOL_CALL_ID.search(call_id):
                    newest_mock = (call_id, turns - 1 if kind == _ASSISTANT else turns)
                    break
    return Selection(protocol, chain_found=False, instruction=None,
                     fallback_reason="no user message holds an instruction block")


def _resolve(protocol: str, text: str, message_index: int, counted: int,
             newest_mock: tuple[str, int] | None) -> Selection:
    block = extract_block(text)
    script = block if isinstance(block, ScriptFailure) else parse_script(block)
    if isinstance(script, ScriptFailure):
        return Selection(protocol, chain_found=True, instruction=None, fallback_reason=script.reason,
                         turn_index=counted, message_index=message_index, counted_turns=counted)
    return _pick(protocol, script, message_index, counted, newest_mock)


def _pick(protocol: str, script: Script, message_index: int, counted: int,
          newest_mock: tuple[str, int] | None) -> Selection:
    turn = counted
    placed = False
    if newest_mock is not None:
        call_id, turns_after = newest_mock
        encoded = turn_of_tool_call_id(call_id, script.fingerprint)
        if encoded is not None and encoded + 1 + turns_after > turn:
            turn, placed = encoded + 1 + turns_after, True
    common = dict(
        chain_found=True, turn_index=turn, chain_length=len(script.entries),
        chain_id=script.fingerprint, legacy=script.legacy, message_index=message_index,
        counted_turns=counted, placed_by_tool_call_id=placed, warnings=script.warnings,
        step_labels=tuple(
            e.id if isinstance(e, Instruction) and e.id is not None else str(i)
            for i, e in enumerate(script.entries)),
    )
    if not script.entries:
        return Selection(protocol, instruction=None, fallback_reason="the instruction chain is empty",
                         **common)
    if turn >= len(script.entries):
        if script.legacy:
            reason = f"the legacy instruction was already answered ({turn} assistant turns follow it)"
        else:
            reason = (f"turn index {turn} is past the end of the chain "
                      f"of {len(script.entries)} instructions")
        return Selection(protocol, instruction=None, fallback_reason=reason, **common)
    entry = script.entries[turn]
    if isinstance(entry, InvalidInstruction):
        return Selection(protocol, instruction=None, fallback_reason=entry.reason, **common)
    return Selection(protocol, instruction=entry, fallback_reason=None, **common)


def select(body: Any, protocol: str) -> Selection:
    """Select the instruction for a parsed request ``body`` written in ``protocol``.

    Never raises on malformed bodies; an unknown ``protocol`` is a ``ValueError``.
    """
    try:
        kind_of, ids_of = _CLASSIFIERS[protocol]
    except KeyError:
        raise ValueError(f"unknown protocol {protocol!r}; use one of {list(PROTOCOLS)}") from None
    return _scan(_items(body, protocol), kind_of, ids_of, protocol)


def select_in_conversation(conversation: Conversation, protocol: str = "neutral") -> Selection:
    """The same selection over a neutral conversation (the reference for the tests)."""
    return _scan(conversation.messages, _neutral_kind, _neutral_ids, protocol)
