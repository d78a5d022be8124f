"""What Bedrock's ``Converse`` answers with a ``ValidationException`` (HTTP 400).

Every message names the field, in Bedrock's own words where we know them
(``1 validation error detected: Value … at 'messages.1.member.role' failed to satisfy
constraint: …``). Checked always: the body's shape (``messages`` a non-empty list of
``user``/``assistant`` messages, the first a user's, each with content blocks of one
known member), ``system``, ``inferenceConfig`` (``maxTokens`` at least 1,
``temperature``/``topP`` within 0-1, ``stopSequences`` strings) and ``toolConfig``
(named tools with an ``inputSchema.json`` object). Unless lenient: roles alternate,
``toolUse``/``toolResult`` blocks need a ``toolConfig``, and each assistant message's
tool uses are answered by the next message's tool results, no more, no fewer.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from mockllm._exceptions import RequestRejected
from mockllm._wire.bedrock_errors import reject
from mockllm._wire.encoding import dumps

__all__ = ["check_converse_request"]

_BLOCKS = frozenset(
    {
        "text",
        "image",
        "document",
        "video",
        "audio",
        "toolUse",
        "toolResult",
        "guardContent",
        "cachePoint",
        "reasoningContent",
        "citationsContent",
        "searchResult",
    }
)
_TOOL_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")


def _constraint(value: Any, where: str, constraint: str) -> RequestRejected:
    shown = dumps(value) if not isinstance(value, str) else value
    return reject(
        f"1 validation error detected: Value '{shown[:80]}' at '{where}' failed to satisfy constraint: {constraint}"
    )


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def check_converse_request(body: Any, *, lenient: bool) -> None:
    """Raise ``RequestRejected`` (``ValidationException``) for what Bedrock rejects."""
    if not isinstance(body, dict):
        raise reject("The request body must be a JSON object (a ConverseRequest); send one with a messages list.")
    messages = body.get("messages")
    if messages is None:
        raise reject(
            "1 validation error detected: Value null at 'messages' failed to satisfy constraint: "
            "Member must not be null"
        )
    if not isinstance(messages, list):
        raise _constraint(messages, "messages", "Member must be a list of Message objects")
    if not messages:
        raise reject(
            "A conversation must start with a user message. Try again with a conversation that starts with a "
            "user message."
        )
    for index, message in enumerate(messages):
        _check_message(index, message)
    if messages[0]["role"] != "user":
        raise reject(
            "A conversation must start with a user message. Try again with a conversation that starts with a "
            "user message."
        )
    _check_system(body.get("system"))
    for member, not_an_object, check in _CONFIGURATIONS:
        config = body.get(member)
        if config is None:
            continue
        if not isinstance(config, dict):
            raise _constraint(config, member, not_an_object)
        check(config)
    if not lenient:
        _check_turns(messages, has_tools=isinstance(body.get("toolConfig"), dict))


def _check_message(index: int, message: Any) -> None:
    where = f"messages.{index}"
    if not isinstance(message, dict):
        raise _constraint(message, f"{where}.member", "Member must be a Message object (role and content)")
    role = message.get("role")
    if role not in ("user", "assistant"):
        raise _constraint(role, f"{where}.member.role", "Member must satisfy enum value set: [user, assistant]")
    content = message.get("content")
    if not isinstance(content, list) or not content:
        raise reject(
            f"The content field in the Message object at {where} is empty. Add a ContentBlock object to the "
            "content field and try again."
        )
    for number, block in enumerate(content):
        keys = list(block) if isinstance(block, dict) else []
        if len(keys) != 1 or keys[0] not in _BLOCKS:
            raise reject(
                f"{where}.content.{number}: a ContentBlock must set exactly one of {', '.join(sorted(_BLOCKS))}; "
                f"got {dumps(block)[:80]}."
            )
        if keys[0] == "text" and not isinstance(block["text"], str):
            raise _constraint(block["text"], f"{where}.member.content.{number}.member.text", "Member must be a string")
        if keys[0] in ("toolUse", "toolResult"):
            item = block[keys[0]]
            if not isinstance(item, dict) or not isinstance(item.get("toolUseId"), str):
                raise reject(f"{where}.content.{number}.{keys[0]}: toolUseId is required (a string).")


def _check_system(system: Any) -> None:
    if system is None:
        return
    if not isinstance(system, list) or not all(isinstance(block, dict) and len(block) == 1 for block in system):
        raise _constraint(system, "system", 'Member must be a list of SystemContentBlock objects ({"text": ...})')


def _check_inference(config: dict[str, Any]) -> None:
    max_tokens = config.get("maxTokens")
    if max_tokens is not None:
        if not isinstance(max_tokens, int) or isinstance(max_tokens, bool):
            raise _constraint(max_tokens, "inferenceConfig.maxTokens", "Member must be an integer")
        if max_tokens < 1:
            raise _constraint(
                max_tokens, "inferenceConfig.maxTokens", "Member must have value greater than or equal to 1"
            )
    for name in ("temperature", "topP"):
        value = config.get(name)
        if value is None:
            continue
        if not _is_number(value):
            raise _constraint(value, f"inferenceConfig.{name}", "Member must be a number")
        if not 0 <= value <= 1:
            raise _constraint(value, f"inferenceConfig.{name}", "Member must have value between 0 and 1")
    stops = config.get("stopSequences")
    if stops is not None and (not isinstance(stops, list) or not all(isinstance(s, str) for s in stops)):
        raise _constraint(stops, "inferenceConfig.stopSequences", "Member must be a list of strings")


def _check_tools(config: dict[str, Any]) -> None:
    tools = config.get("tools")
    if not isinstance(tools, list) or not tools:
        raise _constraint(tools, "toolConfig.tools", "Member must have length greater than or equal to 1")
    for index, tool in enumerate(tools):
        where = f"toolConfig.tools.{index}.member"
        spec = tool.get("toolSpec") if isinstance(tool, dict) else None
        if (
            isinstance(tool, dict)
            and spec is None
            and len(tool) == 1
            and ("cachePoint" in tool or "systemTool" in tool)
        ):
            continue
        if not isinstance(spec, dict):
            raise _constraint(tool, where, "Member must be a Tool object with a toolSpec")
        name = spec.get("name")
        if not isinstance(name, str) or not _TOOL_NAME.fullmatch(name):
            raise _constraint(
                name, f"{where}.toolSpec.name", "Member must satisfy regular expression pattern: [a-zA-Z0-9_-]{1,64}"
            )
        schema = spec.get("inputSchema")
        if not isinstance(schema, dict) or not isinstance(schema.get("json"), dict):
            raise _constraint(schema, f"{where}.toolSpec.inputSchema", 'Member must be {"json": <a JSON schema>}')


# The optional configuration objects: (member, the constraint when it is no object, the
# check of its fields).
_CONFIGURATIONS: tuple[tuple[str, str, Callable[[dict[str, Any]], None]], ...] = (
    ("inferenceConfig", "Member must be an InferenceConfiguration object", _check_inference),
    ("toolConfig", "Member must be a ToolConfiguration object", _check_tools),
)


def _ids(message: dict[str, Any], kind: str) -> list[str]:
    return [b[kind]["toolUseId"] for b in message["content"] if kind in b]


def _check_turns(messages: list[dict[str, Any]], *, has_tools: bool) -> None:
    for index in range(1, len(messages)):
        if messages[index]["role"] == messages[index - 1]["role"]:
            raise reject(
                "A conversation must alternate between user and assistant roles. Make sure the conversation "
                f"alternates between user and assistant roles and try again (messages.{index - 1} and "
                f"messages.{index} are both {messages[index]['role']!r})."
            )
    for index, message in enumerate(messages):
        uses, results = _ids(message, "toolUse"), _ids(message, "toolResult")
        if (uses or results) and not has_tools:
            raise reject(
                f"The toolConfig field must be defined when using toolUse and toolResult content blocks "
                f"(messages.{index}); send the tools in toolConfig.tools."
            )
        issued = _ids(messages[index - 1], "toolUse") if index > 0 else []
        if results and len(results) > len(issued):
            raise reject(
                f"The number of toolResult blocks at messages.{index}.content exceeds the number of toolUse "
                "blocks of previous turn."
            )
        unknown = [i for i in results if i not in issued]
        if unknown:
            raise reject(
                f"messages.{index}.content: toolResult toolUseId {unknown[0]!r} answers no toolUse block of "
                f"messages.{index - 1}; each toolResult must answer a toolUse of the previous message."
            )
        answered = _ids(messages[index + 1], "toolResult") if index + 1 < len(messages) else None
        if uses and answered is not None:
            missing = [i for i in uses if i not in answered]
            if missing:
                raise reject(
                    f"Expected toolResult blocks at messages.{index + 1}.content for the following Ids: "
                    f"{', '.join(missing)}"
                )
