"""Reading an Anthropic Messages request: the neutral conversation, and the checks the
real API makes before it answers (required fields and their types, extended thinking's
budget, and unless lenient tool_use/tool_result pairing and the thinking block a
tool-using turn must send back), each a 400 ``invalid_request_error`` in its words.
"""

from __future__ import annotations

from typing import Any

from mockllm._conversation import Conversation, Row, listed_conversation, text_of
from mockllm._exceptions import RequestRejected
from mockllm._generation import TOOL_CALL_ID
from mockllm._wire.parameter_types import Kind, wrong_type

__all__ = ["THINKING_MIN_BUDGET", "checked_messages", "read_messages"]

THINKING_MIN_BUDGET = 1024

# The parameters whose type the API checks (``max_tokens`` may not be null), and its words.
_TYPES: dict[str, Kind] = {"max_tokens": "integer", "stream": "boolean", "temperature": "decimal", "top_p": "decimal"}
_TYPE_WORDS = {"boolean": "boolean", "integer": "integer", "decimal": "number"}
_BUDGET_ABOVE_MAX_TOKENS = (
    "`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our "
    "documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
    "#max-tokens-and-context-window-size"
)


def read_messages(body: Any) -> Conversation:
    """The neutral conversation: ``system``, then the request's ``messages``."""
    if not isinstance(body, dict):
        return Conversation(())
    return listed_conversation(bool(body.get("system")), body.get("messages"), _read_message)


def checked_messages(body: Any, *, lenient: bool, counting: bool) -> Conversation:
    """``read_messages(body)``, after raising ``RequestRejected`` for what the real API
    answers with a 400 (``counting``: for ``count_tokens``, which takes no ``max_tokens``)."""
    if not isinstance(body, dict):
        raise _reject("Input should be a valid dictionary or object to extract fields from")
    if "model" not in body:
        raise _reject("model: Field required")
    if not isinstance(body["model"], str):
        raise _reject("model: Input should be a valid string")
    max_tokens = body.get("max_tokens")
    if not counting:
        if "max_tokens" not in body:
            raise _reject("max_tokens: Field required")
        wrong = wrong_type({**body, "max_tokens": max_tokens if max_tokens is not None else ""}, _TYPES)
        if wrong is not None:
            raise _reject(f"{wrong[0]}: Input should be a valid {_TYPE_WORDS[wrong[1]]}")
    if "messages" not in body:
        raise _reject("messages: Field required")
    messages = body["messages"]
    if not isinstance(messages, list):
        raise _reject("messages: Input should be a valid list")
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            raise _reject(f"messages.{index}: Input should be a valid dictionary")
        if message.get("role") not in ("user", "assistant"):
            raise _reject(f"messages.{index}.role: Input should be 'user' or 'assistant'")
    _check_thinking(body.get("thinking"), None if counting else max_tokens)
    conversation = read_messages(body)
    if not lenient:
        rejection = _pairing_rejection(conversation, messages) or _thinking_rejection(body, messages)
        if rejection is not None:
            raise rejection
    return conversation


def _reject(message: str) -> RequestRejected:
    return RequestRejected(message, status=400, type="invalid_request_error")


def _read_message(position: int, message: dict[str, Any], out: list[Row]) -> None:
    """Append the neutral reading of one request message to ``out``.

    A user message's ``tool_result`` blocks become a tool message; its text (or, with no
    results, the message itself) a user message after it, at the same position.
    """
    role = message.get("role")
    content = message.get("content")
    if role == "assistant":
        calls = (
            tuple([str(b.get("id")) for b in content if isinstance(b, dict) and b.get("type") == "tool_use"])
            if isinstance(content, list)
            else ()
        )
        out.append(("assistant", "", calls, (), position))
    elif role == "user":
        if isinstance(content, str):
            out.append(("user", content, (), (), position))
            return
        results: list[str] = []
        has_text = False
        if isinstance(content, list):
            for block in content:
                if isinstance(block, dict):
                    kind = block.get("type")
                    if kind == "tool_result":
                        results.append(str(block.get("tool_use_id")))
                    elif kind == "text":
                        has_text = True
        if results:
            out.append(("tool", "", (), tuple(results), position))
        if has_text or not results:
            out.append(("user", text_of(content, ("text",)), (), (), position))


def _pairing_rejection(conversation: Conversation, messages: list[Any]) -> RequestRejected | None:
    """The real API's rule: results answer the tool uses of the message just before."""
    rows = conversation.rows
    calls_at = {index: calls for role, _, calls, _, index in rows if role == "assistant"}
    results_at = {index: results for role, _, _, results, index in rows if role == "tool"}
    for role, _, calls, results, index in rows:
        if index is None:
            continue
        if role == "assistant" and calls:
            answered = results_at.get(index + 1, ())
            missing = [call_id for call_id in calls if call_id not in answered]
            if missing:
                return _reject(
                    f"messages.{index}: `tool_use` ids were found without `tool_result` "
                    f"blocks immediately after: {', '.join(missing)}. Each `tool_use` block "
                    "must have a corresponding `tool_result` block in the next message."
                )
        elif role == "tool":
            issued = calls_at.get(index - 1, ())
            for call_id in results:
                if call_id not in issued:
                    block = next(
                        i
                        for i, b in enumerate(messages[index]["content"])
                        if isinstance(b, dict)
                        and b.get("type") == "tool_result"
                        and str(b.get("tool_use_id")) == call_id
                    )
                    return _reject(
                        f"messages.{index}.content.{block}: unexpected `tool_use_id` "
                        f"found in `tool_result` blocks: {call_id}. Each `tool_result` block "
                        "must have a corresponding `tool_use` block in the previous message."
                    )
    return None


_THINKING_FIRST = (
    "When `thinking` is enabled, a final `assistant` message must start with a thinking block "
    "(preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you "
    "include thinking blocks from previous turns. To avoid this requirement, disable `thinking`. "
    "Please consult our documentation at "
    "https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
)


def _thinking_rejection(body: dict[str, Any], messages: list[Any]) -> RequestRejected | None:
    """With thinking enabled, the final assistant message, when it made tool calls, must
    start with its thinking block (the client must send it back), as the real API checks.

    A message whose tool calls all carry mock-made ids is a reply of the mock's own: the
    mock sends a thinking block only where the script gives reasoning, so it does not
    hold a missing one against the client.
    """
    thinking = body.get("thinking")
    if not isinstance(thinking, dict) or thinking.get("type") != "enabled":
        return None
    final = next((i for i in range(len(messages) - 1, -1, -1) if messages[i].get("role") == "assistant"), None)
    if final is None:
        return None
    content = messages[final].get("content")
    if not isinstance(content, list) or not content:
        return None
    kinds = [b.get("type") if isinstance(b, dict) else None for b in content]
    if "tool_use" not in kinds or kinds[0] in ("thinking", "redacted_thinking"):
        return None
    ids = [str(b.get("id")) for b in content if isinstance(b, dict) and b.get("type") == "tool_use"]
    if all(TOOL_CALL_ID.search(call_id) for call_id in ids):
        return None
    return _reject(
        f"messages.{final}.content.0.type: Expected `thinking` or `redacted_thinking`, "
        f"but found `{kinds[0]}`. {_THINKING_FIRST}"
    )


def _check_thinking(thinking: Any, max_tokens: int | None) -> None:
    if not isinstance(thinking, dict) or thinking.get("type") != "enabled":
        return
    budget = thinking.get("budget_tokens")
    if budget is None:
        raise _reject("thinking.enabled.budget_tokens: Field required")
    if not isinstance(budget, int) or isinstance(budget, bool):
        raise _reject("thinking.enabled.budget_tokens: Input should be a valid integer")
    if budget < THINKING_MIN_BUDGET:
        raise _reject(f"thinking.enabled.budget_tokens: Input should be greater than or equal to {THINKING_MIN_BUDGET}")
    if max_tokens is not None and budget >= max_tokens:
        raise _reject(_BUDGET_ABOVE_MAX_TOKENS)
