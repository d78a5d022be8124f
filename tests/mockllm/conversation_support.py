"""One conversation, every protocol: what the selection tests share.

An abstract conversation is a list of turns::

    ("user", text)
    ("assistant", text | None, ((call_id, name, args), ...), reasoning | None)
    ("tool", ((call_id, output), ...))

``RENDER[protocol](conv)`` writes it as that protocol's request body, the way a client
would. ``reference_reading(conv)`` is the neutral conversation written straight from the
abstract turns — independent of every codec — so each codec's reading of a rendering can
be checked against it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from mockllm import INSTRUCTION_END, INSTRUCTION_START, PROTOCOLS
from mockllm._conversation import Conversation, Message
from mockllm._explain import select
from mockllm._plan import ReplyPlan
from mockllm._plan_builder import build_reply_plan, fallback_text
from mockllm._selection import Selection
from mockllm._wire.registry import codec_named

__all__ = [
    "ABC",
    "PREFIX",
    "ITEMS_KEY",
    "PROTOCOLS",
    "RENDER",
    "Turn",
    "assistant",
    "chain",
    "is_fallback",
    "reference_reading",
    "renderings",
    "results",
    "run_agent",
    "selection_of",
    "tagged",
    "text_step",
    "to_anthropic",
    "to_bedrock",
    "to_bedrock_invoke",
    "to_chat",
    "to_gemini",
    "to_ollama",
    "to_responses",
    "user",
]

Turn = tuple[Any, ...]

PREFIX = {protocol: codec_named(protocol).tool_call_prefix for protocol in PROTOCOLS}
"""Each protocol's tool-call id prefix, as ``build_reply_plan(tool_call_prefix=…)`` takes it."""


def user(text: str) -> Turn:
    return ("user", text)


def assistant(text: str | None = None, calls: Any = (), reasoning: str | None = None) -> Turn:
    return ("assistant", text, tuple(calls), reasoning)


def results(*pairs: tuple[str, str]) -> Turn:
    return ("tool", tuple(pairs))


def tagged(script: Any, prompt: str = "Start workflow") -> str:
    """A user message holding ``script`` (a dict, or raw text) between the tags."""
    block = script if isinstance(script, str) else json.dumps(script, indent=2)
    return f"{prompt}\n{INSTRUCTION_START}\n{block}\n{INSTRUCTION_END}"


def to_chat(conv: list[Turn], *, split: bool = False) -> dict[str, Any]:
    """Chat Completions; ``split`` writes one assistant response as several messages."""
    out: list[dict[str, Any]] = []
    for turn in conv:
        if turn[0] == "user":
            out.append({"role": "user", "content": turn[1]})
        elif turn[0] == "assistant":
            _, text, calls, _ = turn
            tool_calls = [
                {"id": i, "type": "function", "function": {"name": n, "arguments": json.dumps(a)}} for i, n, a in calls
            ]
            if split and tool_calls:
                if text is not None:
                    out.append({"role": "assistant", "content": text})
                out.extend({"role": "assistant", "content": None, "tool_calls": [c]} for c in tool_calls)
            else:
                message: dict[str, Any] = {"role": "assistant", "content": text}
                if tool_calls:
                    message["tool_calls"] = tool_calls
                out.append(message)
        else:
            out.extend({"role": "tool", "tool_call_id": i, "content": o} for i, o in turn[1])
    return {"model": "gpt-4o", "messages": out}


def to_anthropic(conv: list[Turn], *, merge: bool = False) -> dict[str, Any]:
    """Anthropic Messages: tool_use blocks, tool_result blocks in role=user messages.

    ``merge``: a user's text after tool results goes in the same role=user message.
    """
    out: list[dict[str, Any]] = []
    for turn in conv:
        if turn[0] == "user":
            block = {"type": "text", "text": turn[1]}
            last = out[-1] if out else None
            if (
                merge
                and last
                and last["role"] == "user"
                and last["content"]
                and last["content"][-1]["type"] == "tool_result"
            ):
                last["content"].append(block)
            else:
                out.append({"role": "user", "content": [block]})
        elif turn[0] == "assistant":
            _, text, calls, reasoning = turn
            blocks: list[dict[str, Any]] = []
            if reasoning is not None:
                blocks.append({"type": "thinking", "thinking": reasoning, "signature": "c2ln"})
            if text is not None:
                blocks.append({"type": "text", "text": text})
            blocks.extend({"type": "tool_use", "id": i, "name": n, "input": a} for i, n, a in calls)
            out.append({"role": "assistant", "content": blocks or [{"type": "text", "text": ""}]})
        else:
            out.append(
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": i, "content": o} for i, o in turn[1]],
                }
            )
    return {"model": "claude-sonnet-4-5", "max_tokens": 1024, "messages": out}


def to_responses(conv: list[Turn]) -> dict[str, Any]:
    """OpenAI Responses: one assistant response is several output items."""
    items: list[dict[str, Any]] = []
    for n_turn, turn in enumerate(conv):
        if turn[0] == "user":
            items.append({"type": "message", "role": "user", "content": [{"type": "input_text", "text": turn[1]}]})
        elif turn[0] == "assistant":
            _, text, calls, reasoning = turn
            if reasoning is not None:
                items.append(
                    {
                        "type": "reasoning",
                        "id": f"rs_{n_turn}",
                        "summary": [{"type": "summary_text", "text": reasoning}],
                    }
                )
            if text is not None or not calls:
                items.append(
                    {
                        "type": "message",
                        "role": "assistant",
                        "id": f"msg_{n_turn}",
                        "content": [{"type": "output_text", "text": text or ""}],
                    }
                )
            items.extend(
                {"type": "function_call", "call_id": i, "name": n, "arguments": json.dumps(a)} for i, n, a in calls
            )
        else:
            items.extend({"type": "function_call_output", "call_id": i, "output": o} for i, o in turn[1])
    return {"model": "gpt-4o", "input": items}


def to_gemini(conv: list[Turn]) -> dict[str, Any]:
    """Gemini: ``contents`` of role user/model; functionCall parts, functionResponse parts."""
    out: list[dict[str, Any]] = []
    for turn in conv:
        if turn[0] == "user":
            out.append({"role": "user", "parts": [{"text": turn[1]}]})
        elif turn[0] == "assistant":
            _, text, calls, reasoning = turn
            parts: list[dict[str, Any]] = []
            if reasoning is not None:
                parts.append({"text": reasoning, "thought": True})
            if text is not None:
                parts.append({"text": text})
            parts.extend({"functionCall": {"id": i, "name": n, "args": a}} for i, n, a in calls)
            out.append({"role": "model", "parts": parts or [{"text": ""}]})
        else:
            responses = [{"functionResponse": {"id": i, "name": "tool", "response": {"output": o}}} for i, o in turn[1]]
            out.append({"role": "user", "parts": responses})
    return {"contents": out}


def to_ollama(conv: list[Turn]) -> dict[str, Any]:
    """Ollama ``/api/chat``: tool calls with object arguments, ``thinking``, role=tool results."""
    out: list[dict[str, Any]] = []
    for turn in conv:
        if turn[0] == "user":
            out.append({"role": "user", "content": turn[1]})
        elif turn[0] == "assistant":
            _, text, calls, reasoning = turn
            message: dict[str, Any] = {"role": "assistant", "content": text or ""}
            if reasoning is not None:
                message["thinking"] = reasoning
            if calls:
                message["tool_calls"] = [{"id": i, "function": {"name": n, "arguments": a}} for i, n, a in calls]
            out.append(message)
        else:
            out.extend({"role": "tool", "tool_call_id": i, "content": o} for i, o in turn[1])
    return {"model": "llama-mock", "messages": out, "stream": False}


def to_bedrock(conv: list[Turn]) -> dict[str, Any]:
    """Bedrock Converse: content blocks ``text``, ``reasoningContent``, ``toolUse``; tool
    results as ``toolResult`` blocks of a user message, a user's text after them in the
    same message (Bedrock wants roles to alternate)."""
    out: list[dict[str, Any]] = []
    for turn in conv:
        if turn[0] == "user":
            last = out[-1] if out else None
            if last and last["role"] == "user" and "toolResult" in last["content"][-1]:
                last["content"].append({"text": turn[1]})
            else:
                out.append({"role": "user", "content": [{"text": turn[1]}]})
        elif turn[0] == "assistant":
            _, text, calls, reasoning = turn
            blocks: list[dict[str, Any]] = []
            if reasoning is not None:
                blocks.append({"reasoningContent": {"reasoningText": {"text": reasoning, "signature": "c2ln"}}})
            if text is not None:
                blocks.append({"text": text})
            blocks.extend({"toolUse": {"toolUseId": i, "name": n, "input": a}} for i, n, a in calls)
            out.append({"role": "assistant", "content": blocks or [{"text": ""}]})
        else:
            results = [{"toolResult": {"toolUseId": i, "content": [{"text": o}]}} for i, o in turn[1]]
            out.append({"role": "user", "content": results})
    return {"messages": out}


def to_bedrock_invoke(conv: list[Turn]) -> dict[str, Any]:
    """Bedrock InvokeModel with an Anthropic body: Anthropic Messages without ``model``."""
    body = to_anthropic(conv, merge=True)
    del body["model"]
    return {"anthropic_version": "bedrock-2023-05-31", **body}


ITEMS_KEY = {"openai-responses": "input", "gemini": "contents"}
"""Where a protocol's body keeps its conversation, when not in ``messages``."""

RENDER: dict[str, Callable[[list[Turn]], dict[str, Any]]] = {
    "openai-chat": to_chat,
    "anthropic-messages": to_anthropic,
    "openai-responses": to_responses,
    "gemini": to_gemini,
    "azure-openai": to_chat,
    "ollama": to_ollama,
    "bedrock-converse": to_bedrock,
    "bedrock-invoke": to_bedrock_invoke,
}
assert set(RENDER) == set(PROTOCOLS), "a new codec needs a renderer here"


def renderings(conv: list[Turn]) -> list[tuple[str, dict[str, Any]]]:
    """Every way the tests write ``conv``: each protocol, and the splits clients make."""
    return [
        ("openai-chat", to_chat(conv)),
        ("openai-chat", to_chat(conv, split=True)),
        ("anthropic-messages", to_anthropic(conv)),
        ("anthropic-messages", to_anthropic(conv, merge=True)),
        ("openai-responses", to_responses(conv)),
        ("gemini", to_gemini(conv)),
        ("azure-openai", to_chat(conv)),
        ("ollama", to_ollama(conv)),
        ("bedrock-converse", to_bedrock(conv)),
        ("bedrock-invoke", to_bedrock_invoke(conv)),
    ]


def reference_reading(conv: list[Turn]) -> Conversation:
    """The neutral conversation of ``conv``, one message per abstract turn (no codec)."""
    out = []
    for turn in conv:
        if turn[0] == "user":
            out.append(Message("user", turn[1]))
        elif turn[0] == "assistant":
            out.append(Message("assistant", tool_calls=tuple(c[0] for c in turn[2])))
        else:
            out.append(Message("tool", tool_results=tuple(i for i, _ in turn[1])))
    return Conversation(tuple(out))


# -- scripts and agent loops ----------------------------------------------------------


def selection_of(conv: list[Turn], protocol: str) -> Selection:
    """The selection for ``conv`` written in ``protocol``."""
    return select(RENDER[protocol](conv), protocol)


def text_step(step_id: str, text: str | None = None, length: int | None = None) -> dict[str, Any]:
    spec = {"text": text} if text is not None else {"length": length if length is not None else 5}
    return {"id": step_id, "messages": [{"text_message": spec}]}


def chain(*steps: dict[str, Any]) -> dict[str, Any]:
    return {"instruction_chain": list(steps)}


ABC = chain(text_step("A", "reply A"), text_step("B", "reply B"), text_step("C", "reply C"))


def run_agent(
    prompt: str, protocol: str, replies: int, *, history: list[Turn] | None = None
) -> tuple[list[tuple[Selection, ReplyPlan]], list[Turn]]:
    """Play an agent loop: ask, append the mock's reply, answer its tool calls (or, when
    it made none, send a user follow-up), and ask again."""
    conv = list(history or []) + [user(prompt)]
    out = []
    for n in range(replies):
        selection = selection_of(conv, protocol)
        plan = build_reply_plan(selection, tool_call_prefix=PREFIX[protocol])
        out.append((selection, plan))
        calls = tuple((c.id, c.name, json.loads(c.arguments)) for c in plan.tool_calls)
        conv.append(assistant(plan.text or None, calls, plan.reasoning))
        if calls:
            conv.append(results(*((c[0], f'{{"rows": {n}}}') for c in calls)))
        else:
            conv.append(user(f"follow-up {n}"))
    return out, conv


def is_fallback(selection: Selection, plan: ReplyPlan, reason_part: str) -> bool:
    """Whether the reply is the fallback, for a reason containing ``reason_part``."""
    return (
        selection.instruction is None
        and reason_part in (selection.fallback_reason or "")
        and plan.text == fallback_text(selection.fallback_reason or "")
        and plan.tool_calls == ()
        and plan.error is None
    )
