"""Gemini's ``generateContent`` over a ``google.genai.Client`` (the ``gemini`` extra).

The conversation is written as Gemini's ``contents``: the user's messages and tool
results as ``user`` contents (a result is a ``function_response`` part naming the tool
its call named), each assistant turn as a ``model`` content of thought, text and
``function_call`` parts. A turn is streamed (``streamGenerateContent``); Gemini says
``STOP`` whether or not it called tools, so a turn with calls is read as ``tool_use``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

from harness.systems.llm.client import ModelError, SDKModelClient, TurnRequest
from harness.systems.llm.conversation import AssistantTurn, ConversationItem, StreamEvent, ToolCall, UserMessage
from harness.systems.llm.streamed_turn import StreamedTurn, neutral_stop_reason

__all__ = ["GeminiModelClient"]


class GeminiModelClient(SDKModelClient):
    """Gemini over a ``google.genai.Client``, sending through ``http`` (an ``httpx`` or
    ``httpx2`` async client, closed with the model client)."""

    protocol = "gemini"

    def __init__(self, client: Any, http: Any, model: str | None = None) -> None:
        super().__init__(client, model)
        self.http = http

    async def aclose(self) -> None:
        """Close the SDK's async client and the HTTP client it sends through."""
        await self.client.aio.aclose()
        await self.http.aclose()

    @staticmethod
    def contents(conversation: Sequence[ConversationItem]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        tool_names: dict[str, str] = {}
        for item in conversation:
            if isinstance(item, UserMessage):
                out.append({"role": "user", "parts": [{"text": item.text}]})
            elif isinstance(item, AssistantTurn):
                parts: list[dict[str, Any]] = []
                if item.thinking is not None:
                    parts.append({"text": item.thinking, "thought": True})
                if item.text:
                    parts.append({"text": item.text})
                for call in item.tool_calls:
                    tool_names[call.id] = call.name
                    parts.append({"function_call": {"id": call.id, "name": call.name, "args": call.arguments}})
                out.append({"role": "model", "parts": parts or [{"text": ""}]})
            else:
                out.append(
                    {
                        "role": "user",
                        "parts": [
                            {
                                "function_response": {
                                    "id": r.tool_call_id,
                                    "name": tool_names.get(r.tool_call_id, ""),
                                    # Gemini's convention: the output, or the error, under its own key.
                                    "response": {"error" if r.is_error else "output": r.content},
                                }
                            }
                            for r in item.results
                        ],
                    }
                )
        return out

    def _params(self, conversation: Sequence[ConversationItem], request: TurnRequest) -> dict[str, Any]:
        config: dict[str, Any] = {"max_output_tokens": request.max_tokens}
        if request.system:
            config["system_instruction"] = request.system
        if request.tools:
            declarations = [
                {"name": t.name, "description": t.description, "parameters_json_schema": t.input_schema}
                for t in request.tools
            ]
            config["tools"] = [{"function_declarations": declarations}]
        if request.thinking_budget is not None:
            config["thinking_config"] = {"include_thoughts": True, "thinking_budget": request.thinking_budget}
        return {"model": self.model, "contents": self.contents(conversation), "config": config}

    async def _send(self, params: dict[str, Any]) -> AsyncIterator[StreamEvent]:
        turn = StreamedTurn()
        calls: list[ToolCall] = []
        finish = "STOP"
        try:
            stream = await self.client.aio.models.generate_content_stream(**params)
            async for chunk in stream:
                turn.message_id = chunk.response_id or turn.message_id
                if chunk.usage_metadata is not None:
                    meta = chunk.usage_metadata
                    turn.usage = (
                        meta.prompt_token_count or 0,
                        (meta.candidates_token_count or 0) + (meta.thoughts_token_count or 0),
                    )
                for candidate in chunk.candidates or ():
                    if candidate.finish_reason is not None:
                        finish = candidate.finish_reason.name
                    for part in (candidate.content.parts if candidate.content else None) or ():
                        if part.function_call is not None:
                            call = part.function_call
                            call_id = call.id or f"{turn.message_id}_{len(calls)}"
                            calls.append(ToolCall(call_id, call.name or "", dict(call.args or {})))
                        elif part.text and part.thought:
                            yield turn.think(part.text)
                        elif part.text:
                            yield turn.say(part.text)
        except self.sdk.errors.APIError as exc:
            # The request is sent when the stream is first read, so an HTTP error surfaces
            # here too: it carries the HTTP response's status. An error object in a stream
            # that began (HTTP 200) is a stream failure, whatever its code says.
            status = getattr(getattr(exc, "response", None), "status_code", None)
            if isinstance(status, int) and status >= 400:
                raise ModelError(exc.message or str(exc), status=status) from exc
            raise ModelError(exc.message or str(exc), kind="stream") from exc
        yield turn.complete(tuple(calls), "tool_use" if calls else neutral_stop_reason(finish))
