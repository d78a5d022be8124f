"""Anthropic Messages over an ``anthropic.AsyncAnthropic`` client (any SDK generation)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

from harness.systems.llm.client import ModelError, SDKModelClient, TurnRequest
from harness.systems.llm.conversation import (
    AssistantTurn,
    ConversationItem,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolCall,
    TurnComplete,
    UserMessage,
)

__all__ = ["AnthropicModelClient"]


class AnthropicModelClient(SDKModelClient):
    """Anthropic Messages over an ``anthropic.AsyncAnthropic`` client."""

    protocol = "anthropic-messages"

    @staticmethod
    def messages(conversation: Sequence[ConversationItem]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for item in conversation:
            if isinstance(item, UserMessage):
                out.append({"role": "user", "content": item.text})
            elif isinstance(item, AssistantTurn):
                blocks: list[dict[str, Any]] = []
                if item.thinking is not None:
                    blocks.append(
                        {"type": "thinking", "thinking": item.thinking, "signature": item.thinking_signature or ""}
                    )
                if item.text:
                    blocks.append({"type": "text", "text": item.text})
                blocks.extend(
                    {"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments} for c in item.tool_calls
                )
                out.append({"role": "assistant", "content": blocks})
            else:
                out.append(
                    {
                        "role": "user",
                        "content": [
                            {
                                "type": "tool_result",
                                "tool_use_id": r.tool_call_id,
                                "content": r.content,
                                "is_error": r.is_error,
                            }
                            for r in item.results
                        ],
                    }
                )
        return out

    def _params(self, conversation: Sequence[ConversationItem], request: TurnRequest) -> dict[str, Any]:
        params: dict[str, Any] = {
            "model": self.model,
            "max_tokens": request.max_tokens,
            "messages": self.messages(conversation),
        }
        if request.system:
            params["system"] = request.system
        if request.tools:
            params["tools"] = [
                {"name": t.name, "description": t.description, "input_schema": t.input_schema} for t in request.tools
            ]
        if request.thinking_budget is not None:
            params["thinking"] = {"type": "enabled", "budget_tokens": request.thinking_budget}
            params["max_tokens"] = max(request.max_tokens, request.thinking_budget + 1)
        return params

    async def _send(self, params: dict[str, Any]) -> AsyncIterator[StreamEvent]:
        try:
            async with self.client.messages.stream(**params) as stream:
                async for event in stream:
                    if event.type == "content_block_delta":
                        if event.delta.type == "thinking_delta":
                            yield ThinkingDelta(event.delta.thinking, event.index)
                        elif event.delta.type == "text_delta":
                            yield TextDelta(event.delta.text, event.index)
                message = await stream.get_final_message()
        except self.sdk.APIStatusError as exc:
            # An error event inside a 200 stream surfaces with status 200: it is a stream
            # failure, not an HTTP status.
            mid_stream = exc.status_code == 200
            raise ModelError(
                _anthropic_message(exc),
                status=None if mid_stream else exc.status_code,
                kind="stream" if mid_stream else "http",
            ) from exc
        except self.sdk.APIError as exc:
            raise ModelError(str(exc), kind="stream") from exc
        thinking = signature = None
        texts: list[str] = []
        calls: list[ToolCall] = []
        for block in message.content:
            if block.type == "thinking":
                thinking, signature = (thinking or "") + block.thinking, block.signature
            elif block.type == "text":
                texts.append(block.text)
            elif block.type == "tool_use":
                calls.append(ToolCall(block.id, block.name, dict(block.input)))
        turn = AssistantTurn(
            "".join(texts), tuple(calls), thinking, signature, message.stop_reason or "end_turn", message.id
        )
        yield TurnComplete(turn, message.usage.input_tokens, message.usage.output_tokens)


def _anthropic_message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return error["message"]
    return str(getattr(exc, "message", exc))
