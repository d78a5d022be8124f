"""Assembling a streamed turn for the clients whose SDK hands back no final message
(OpenAI Chat, Gemini), and the neutral stop reason of their finish reasons; Anthropic's
SDK assembles its own."""

from __future__ import annotations

from harness.systems.llm.conversation import AssistantTurn, TextDelta, ThinkingDelta, ToolCall, TurnComplete

__all__ = ["StreamedTurn", "neutral_stop_reason"]

# The neutral stop reasons (Anthropic's), each with the finish reasons that mean it:
# OpenAI Chat's (lower case) and Gemini's (upper case there, compared lower-cased).
_STOP_REASONS = {
    "end_turn": ("stop",),
    "tool_use": ("tool_calls",),
    "max_tokens": ("length", "max_tokens"),
    "content_filter": ("content_filter", "safety", "recitation", "blocklist", "prohibited_content"),
}
_NEUTRAL = {finish: stop for stop, finishes in _STOP_REASONS.items() for finish in finishes}


def neutral_stop_reason(finish: str) -> str:
    """The neutral stop reason of an OpenAI Chat or Gemini finish reason; one not known
    here, lower-cased."""
    return _NEUTRAL.get(finish.lower(), finish.lower())


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
