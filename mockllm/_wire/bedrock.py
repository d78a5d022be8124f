"""Amazon Bedrock Runtime ``Converse`` and ``ConverseStream``.

``POST /model/{modelId}/converse`` answers JSON; ``POST /model/{modelId}/converse-stream``
answers the AWS event stream (``mockllm._wire.eventstream``): ``messageStart``, per
content block ``contentBlockStart`` (tool uses only, as Bedrock sends it) /
``contentBlockDelta`` … / ``contentBlockStop``, then ``messageStop`` and ``metadata``
(usage and metrics). The model and the streaming choice are in the path, so the engine
hands this codec the path (``for_request``) and it answers with a codec bound to them.

The conversation is ``messages``: role ``user`` or ``assistant``, ``content`` a list of
blocks (``text``, ``toolUse``, ``toolResult``, ``reasoningContent``, …). An assistant
message's ``toolUse`` blocks are one turn's tool calls; a user message of
``toolResult`` blocks answers them (a tool message, not a new user message). Our choices:

- Reasoning goes first as a ``reasoningContent`` block (text, then its signature), only
  when ``additionalModelRequestFields`` asks for it (Anthropic's ``thinking``
  ``enabled``, or ``reasoning_config`` ``enabled``).
- Tool input streams as JSON text slices cut mid-token, as Bedrock does.
- ``metrics.latencyMs`` derives from the reply's size (never the clock).
- SigV4 ``Authorization`` (and ``x-amz-*``) headers are accepted, never checked.
"""

from __future__ import annotations

import json
from typing import Any

from mockllm._conversation import Conversation, Row, listed_conversation, user_turn
from mockllm._cutting import argument_batches
from mockllm._plan import ReplyPlan, TextPart, ToolCallPart
from mockllm._wire.anthropic_messages import JSON_SLICE, thinking_signature
from mockllm._wire.bedrock_runtime import BedrockRuntimeCodec
from mockllm._wire.bedrock_validation import check_converse_request
from mockllm._wire.deltas import StreamItems
from mockllm._wire.encoding import dumps
from mockllm._wire.eventstream import event_message, framer, kept_event_message
from mockllm._wire.reading import UNBOUNDED, DeclaredTools, ReplyContract, ToolChoice, reply_contract, tool_choice

__all__ = ["BedrockConverseCodec", "bedrock_converse"]

_STOP_REASONS = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "content_filter": "content_filtered",
    "refusal": "content_filtered",
}


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _ids(blocks: list[dict[str, Any]], kind: str) -> tuple[str, ...]:
    return tuple(str(b[kind].get("toolUseId")) for b in blocks if isinstance(b.get(kind), dict))


def _read_message(position: int, message: dict[str, Any], out: list[Row]) -> None:
    """An assistant message's ``toolUse`` blocks are its calls; a user message's
    ``toolResult`` blocks answer them (a tool message), its ``text`` blocks are its words."""
    role, blocks = message.get("role"), _blocks(message)
    if role == "assistant":
        out.append(("assistant", "", _ids(blocks, "toolUse"), (), position))
    elif role == "user":
        user_turn(out, position, _ids(blocks, "toolResult"), blocks)


def _wants_reasoning(body: dict[str, Any]) -> bool:
    fields = body.get("additionalModelRequestFields")
    if not isinstance(fields, dict):
        return False
    for key in ("thinking", "reasoning_config", "reasoningConfig"):
        setting = fields.get(key)
        if isinstance(setting, dict) and setting.get("type") == "enabled":
            return True
    return False


def _usage(plan: ReplyPlan) -> dict[str, int]:
    return {
        "inputTokens": plan.usage.input_tokens,
        "outputTokens": plan.usage.output_tokens,
        "totalTokens": plan.usage.total_tokens,
    }


def _metrics(plan: ReplyPlan) -> dict[str, int]:
    """Fixed rates: 100 ms to the first token, 10 ms per output token."""
    return {"latencyMs": 100 + 10 * plan.usage.output_tokens}


def _stop_reason(plan: ReplyPlan) -> str:
    return _STOP_REASONS.get(plan.stop_reason, "end_turn")


def _tool_input(part: ToolCallPart) -> Any:
    return json.loads(part.arguments) if part.arguments.strip() else {}


class BedrockConverseCodec(BedrockRuntimeCodec):
    """Bedrock Runtime's ``Converse`` protocol, as ``boto3``'s ``bedrock-runtime`` client
    reads it; bound to a request's model and operation by ``for_request``."""

    name = "bedrock-converse"
    aliases: tuple[str, ...] = ("bedrock", "converse")
    route = "/converse"
    operations = ("converse", "converse-stream")
    tool_call_prefix = "tooluse"
    prompt_fields: tuple[str, ...] = ("system", "messages", "toolConfig")
    # Text and reasoning are cut as the shape says, tool input as ``arguments`` says;
    # no keep-alive comments (a binary framing has none) and no usage chunk to move.
    shape_knobs: tuple[str, ...] = ("arguments",)

    def read(self, body: Any) -> Conversation:
        """The neutral conversation: ``system``, then ``messages``."""
        if not isinstance(body, dict):
            return Conversation(())
        return listed_conversation(bool(body.get("system")), body.get("messages"), _read_message)

    def read_request(self, body: Any, *, lenient: bool) -> Conversation:
        """Reject what Bedrock answers with a ``ValidationException``; else ``read(body)``.

        ``lenient`` skips the tool use / result pairing and role alternation checks."""
        check_converse_request(body, lenient=lenient)
        return self.read(body)

    def declared_tools(self, body: dict[str, Any]) -> DeclaredTools:
        """``toolConfig.tools[].toolSpec`` by ``name``, with ``inputSchema.json``."""
        config = body.get("toolConfig")
        tools = config.get("tools") if isinstance(config, dict) else None
        declared: DeclaredTools = {}
        for tool in tools if isinstance(tools, list) else []:
            spec = tool.get("toolSpec") if isinstance(tool, dict) else None
            if isinstance(spec, dict) and isinstance(spec.get("name"), str):
                schema = spec.get("inputSchema")
                schema = schema.get("json") if isinstance(schema, dict) else None
                declared[spec["name"]] = schema if isinstance(schema, dict) else None
        return declared

    def tool_choice(self, body: dict[str, Any]) -> ToolChoice:
        """``toolConfig.toolChoice``: ``{"tool": {"name": ...}}`` allows that tool only."""
        config = body.get("toolConfig")
        value = config.get("toolChoice") if isinstance(config, dict) else None
        forced = value.get("tool") if isinstance(value, dict) else None
        name = forced.get("name") if isinstance(forced, dict) else None
        allowed = frozenset({name}) if isinstance(name, str) else None
        required = isinstance(value, dict) and ("any" in value or "tool" in value)
        return tool_choice(allowed, "toolConfig.toolChoice", value, required=required)

    def reply_contract(self, body: dict[str, Any]) -> ReplyContract:
        """``inferenceConfig.maxTokens``."""
        config = body.get("inferenceConfig")
        if not isinstance(config, dict):
            return UNBOUNDED
        return reply_contract(config.get("maxTokens"), "inferenceConfig.maxTokens")

    def _content(self, plan: ReplyPlan, body: dict[str, Any]) -> list[dict[str, Any]]:
        content: list[dict[str, Any]] = []
        if plan.reasoning and _wants_reasoning(body):
            text = {"text": plan.reasoning, "signature": thinking_signature(plan)}
            content.append({"reasoningContent": {"reasoningText": text}})
        for part in plan.parts:
            if isinstance(part, TextPart):
                content.append({"text": part.text})
            else:
                content.append({"toolUse": {"toolUseId": part.id, "name": part.name, "input": _tool_input(part)}})
        return content

    def render_json(self, plan: ReplyPlan, body: dict[str, Any]) -> bytes:
        """The ``ConverseResponse``."""
        response = {
            "output": {"message": {"role": "assistant", "content": self._content(plan, body)}},
            "stopReason": _stop_reason(plan),
            "usage": _usage(plan),
            "metrics": _metrics(plan),
        }
        return dumps(response).encode()

    def _items(self, plan: ReplyPlan, body: dict[str, Any]) -> StreamItems:
        deltas = framer("contentBlockDelta")
        yield [kept_event_message("messageStart", b'{"role":"assistant"}')]
        index = 0
        if plan.reasoning and _wants_reasoning(body):
            head, tail = f'{{"contentBlockIndex":{index},"delta":{{"reasoningContent":{{"text":', "}}}"
            yield deltas.text_run(head, tail, plan.reasoning)
            signature = {
                "contentBlockIndex": index,
                "delta": {"reasoningContent": {"signature": thinking_signature(plan)}},
            }
            yield [event_message("contentBlockDelta", dumps(signature).encode()), self._stop(index)]
            index += 1
        for part in plan.parts:
            if isinstance(part, TextPart):
                head, tail = f'{{"contentBlockIndex":{index},"delta":{{"text":', "}}"
                # An empty text is one empty delta.
                yield deltas.text_run(head, tail, part.text) if part.text else deltas.frame_texts(head, tail, [""])
            else:
                start = {"contentBlockIndex": index, "start": {"toolUse": {"toolUseId": part.id, "name": part.name}}}
                yield [event_message("contentBlockStart", dumps(start).encode())]
                head, tail = f'{{"contentBlockIndex":{index},"delta":{{"toolUse":{{"input":', "}}}"
                arguments = dumps(_tool_input(part))
                for pieces in argument_batches(arguments, JSON_SLICE, plan):
                    yield deltas.frame_texts(head, tail, pieces)
            yield [self._stop(index)]
            index += 1
        metadata = {"usage": _usage(plan), "metrics": _metrics(plan)}
        yield [
            kept_event_message("messageStop", dumps({"stopReason": _stop_reason(plan)}).encode()),
            event_message("metadata", dumps(metadata).encode()),
        ]

    @staticmethod
    def _stop(index: int) -> bytes:
        return kept_event_message("contentBlockStop", b'{"contentBlockIndex":%d}' % index)


bedrock_converse = BedrockConverseCodec()
