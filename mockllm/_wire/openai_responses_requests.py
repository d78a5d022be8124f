"""Reading an OpenAI Responses request: the neutral conversation of ``instructions`` and
``input``, and the 400s the real API answers first (missing or mistyped parameters,
and unless lenient a function call without its output or an output without its call).
"""

from __future__ import annotations

from typing import Any

from mockllm._conversation import Conversation, Row, text_of
from mockllm._exceptions import RequestRejected
from mockllm._pairing import find_pairing_problem
from mockllm._wire.openai_errors import check_openai_types
from mockllm._wire.parameter_types import Kind, json_type

__all__ = ["checked_input", "read_input"]

# Input items that are model output: each is (part of) an assistant turn.
_MODEL_OUTPUT_ITEMS = frozenset(
    {
        "function_call",
        "reasoning",
        "web_search_call",
        "file_search_call",
        "computer_call",
        "custom_tool_call",
        "mcp_call",
        "image_generation_call",
        "code_interpreter_call",
    }
)
# The parameters whose JSON type OpenAI checks (a 400 naming the parameter otherwise).
_PARAMETER_TYPES: dict[str, Kind] = {
    "stream": "boolean",
    "max_output_tokens": "integer",
    "temperature": "decimal",
    "top_p": "decimal",
    "parallel_tool_calls": "boolean",
    "store": "boolean",
    "background": "boolean",
}
_TOOL_OUTPUT_ITEMS = frozenset({"function_call_output", "custom_tool_call_output"})
_MESSAGE_TEXT_TYPES = ("input_text", "output_text", "text", "refusal")


def read_input(body: Any) -> Conversation:
    """The neutral conversation of ``instructions`` and ``input``.

    Model-output items (assistant messages, function calls, reasoning) become
    assistant messages; consecutive ones form one turn when counted.
    """
    if not isinstance(body, dict):
        return Conversation(())
    out: list[Row] = []
    instructions = body.get("instructions")
    if isinstance(instructions, str) and instructions:
        out.append(("system", "", (), (), None))
    items = body.get("input")
    if isinstance(items, str):
        out.append(("user", items, (), (), 0))
    elif isinstance(items, list):
        for position, item in enumerate(items):
            if isinstance(item, dict):
                message = _read_item(position, item)
                if message is not None:
                    out.append(message)
    return Conversation(tuple(out))


def checked_input(body: Any, *, lenient: bool) -> Conversation:
    """Reject what the real API rejects with a 400 (pairing only when not lenient);
    else ``read_input(body)``."""
    if not isinstance(body, dict):
        raise RequestRejected(
            f"Invalid type for the request body: expected a JSON object, but got {type(body).__name__} instead."
        )
    if body.get("model") is None:
        raise RequestRejected("Missing required parameter: 'model'.", param="model")
    if body.get("input") is None:
        raise RequestRejected("Missing required parameter: 'input'.", param="input")
    items = body["input"]
    if not isinstance(items, (str, list)):
        raise RequestRejected(
            "Invalid type for 'input': expected one of a string or an array of input "
            f"items, but got {json_type(items)} instead.",
            param="input",
        )
    check_openai_types(body, _PARAMETER_TYPES)
    conversation = read_input(body)
    problem = None if lenient else find_pairing_problem(conversation)
    if problem is None:
        return conversation
    if problem.kind == "orphan_result":
        message = f"No tool call found for function call output with call_id {problem.call_id}."
    else:
        message = f"No tool output found for function call {problem.call_id}."
    raise RequestRejected(message, param="input")


def _read_item(position: int, item: dict[str, Any]) -> Row | None:
    """The neutral message of one input item, or None for an item that is none."""
    kind = item.get("type", "message")
    if not isinstance(kind, str):  # e.g. a list: not hashable, so not a set member
        return None
    if kind == "message":
        role = item.get("role")
        if role == "assistant":
            return ("assistant", "", (), (), position)
        if role == "user":
            return ("user", text_of(item.get("content"), _MESSAGE_TEXT_TYPES), (), (), position)
        if role == "system" or role == "developer":
            return ("system", "", (), (), position)
        return None
    if kind in _MODEL_OUTPUT_ITEMS:
        call_id = item.get("call_id") if kind == "function_call" else None
        return ("assistant", "", () if call_id is None else (str(call_id),), (), position)
    if kind in _TOOL_OUTPUT_ITEMS:
        call_id = item.get("call_id")
        return ("tool", "", (), () if call_id is None else (str(call_id),), position)
    return None
