"""Assembling a streamed turn for the clients whose SDK hands back no final message
(OpenAI Chat, Gemini); Anthropic's SDK assembles its own."""

from __future__ import annotations

from harness.systems.llm.conversation import AssistantTurn, TextDelta, ThinkingDelta, ToolCall, TurnComplete

__all__ = ["StreamedTurn"]


class StreamedTurn:
    """A turn read piece by piece, for the SDKs that hand back no final message (OpenAI
    Chat, Gemini): thinking is block 0, and the text follows it (block 1 after thinking)."""

    def __init__(self) -> None:
        self.thinking: list[str] = []
        self.texts: list[str] = []
        self.message_id: str | None = None
        self.usage = (0, 0)

    def think(self, text: str) -> ThinkingDelta:
        self.thinking.append(text)
        return ThinkingDelta(text, 0)

    def say(self, text: str) -> TextDelta:
        self.texts.append(text)
        return TextDelta(text, 1 if self.thinking else 0)

    def complete(self, tool_calls: tuple[ToolCall, ...], stop_reason: str) -> TurnComplete:
        """The whole turn, with the calls and the stop reason in the neutral form."""
        thinking = "".join(self.thinking) if self.thinking else None
        turn = AssistantTurn("".join(self.texts), tool_calls, thinking, None, stop_reason, self.message_id)
        return TurnComplete(turn, *self.usage)
