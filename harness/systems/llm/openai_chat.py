"""OpenAI Chat Completions over an ``openai.AsyncOpenAI`` client (openai 2.x or 3.x)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from typing import Any

from harness.systems.llm.client import ModelError, SDKModelClient, TurnRequest
from harness.systems.llm.conversation import AssistantTurn, ConversationItem, StreamEvent, ToolCall, UserMessage
from harness.systems.llm.streamed_turn import StreamedTurn, neutral_stop_reason

__all__ = ["OpenAIChatModelClient"]


class OpenAIChatModelClient(SDKModelClient):
    """OpenAI Chat Completions over an ``openai.AsyncOpenAI`` client."""

    protocol = "openai-chat"

    @staticmethod
    def messages(conversation: Sequence[ConversationItem], system: str | None = None) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
        for item in conversation:
            if isinstance(item, UserMessage):
                out.append({"role": "user", "content": item.text})
            elif isinstance(item, AssistantTurn):
                message: dict[str, Any] = {"role": "assistant", "content": item.text or None}
                if item.tool_calls:
                    message["tool_calls"] = [
                        {
                            "id": c.id,
                            "type": "function",
                            "function": {"name": c.name, "arguments": json.dumps(c.arguments)},
                        }
                        for c in item.tool_calls
                    ]
                out.append(message)
            else:
                out.extend({"role": "tool", "tool_call_id": r.tool_call_id, "content": r.content} for r in item.results)
        return out

    def _params(self, conversation: Sequence[ConversationItem], request: TurnRequest) -> dict[str, Any]:
        params: dict[str, Any] = {
            "model": self.model,
            "messages": self.messages(conversation, request.system),
            "stream": True,
            "stream_options": {"include_usage": True},
            "max_tokens": request.max_tokens,
        }
        if request.tools:
            params["tools"] = [
                {
                    "type": "function",
                    "function": {"name": t.name, "description": t.description, "parameters": t.input_schema},
                }
                for t in request.tools
            ]
        return params

    async def _send(self, params: dict[str, Any]) -> AsyncIterator[StreamEvent]:
        turn = StreamedTurn()
        calls: dict[int, dict[str, str]] = {}
        finish = "stop"
        try:
            stream = await self.client.chat.completions.create(**params)
            async with stream:
                async for chunk in stream:
                    turn.message_id = chunk.id
                    if chunk.usage is not None:
                        turn.usage = (chunk.usage.prompt_tokens, chunk.usage.completion_tokens)
                    for choice in chunk.choices:
                        delta = choice.delta
                        reasoning = getattr(delta, "reasoning_content", None)
                        if reasoning:
                            yield turn.think(reasoning)
                        if delta.content:
                            yield turn.say(delta.content)
                        for piece in delta.tool_calls or ():
                            call = calls.setdefault(piece.index, {"id": "", "name": "", "arguments": ""})
                            call["id"] += piece.id or ""
                            if piece.function is not None:
                                call["name"] += piece.function.name or ""
                                call["arguments"] += piece.function.arguments or ""
                        if choice.finish_reason:
                            finish = choice.finish_reason
        except self.sdk.APIStatusError as exc:
            raise ModelError(_openai_message(exc), status=exc.status_code) from exc
        except self.sdk.APIError as exc:
            raise ModelError(exc.message, kind="stream") from exc
        tool_calls = tuple(
            ToolCall(c["id"], c["name"], _arguments(c["arguments"], c["name"])) for _, c in sorted(calls.items())
        )
        yield turn.complete(tool_calls, neutral_stop_reason(finish))


def _openai_message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        return body["message"]
    return str(getattr(exc, "message", exc))


def _arguments(raw: str, name: str) -> dict[str, Any]:
    """A tool call's arguments (Chat Completions sends them as JSON text) as an object;
    ``ModelError`` if they are not one."""
    try:
        value = json.loads(raw or "{}")
    except ValueError as exc:
        raise ModelError(f"the model called {name!r} with arguments that are not JSON: {raw!r}", kind="reply") from exc
    if not isinstance(value, dict):
        raise ModelError(f"the model called {name!r} with arguments that are not an object: {raw!r}", kind="reply")
    return value
