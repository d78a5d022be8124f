"""A streaming client that gathers the text of an OpenAI Chat Completions stream.

``collect_text_naive`` has a classic bug: it stops at the chunk carrying
``finish_reason`` before taking that chunk's text. The mock's default stream sends the
finish in a chunk of its own, so every example-based test passes; vLLM, Groq, Together
and other Chat Completions servers send the last text and the finish reason in one chunk
(as Gemini and Ollama do in their protocols), and the reply loses its end. The strategy
``mockllm.strategies.stream_shapes`` finds it (see tests/). ``collect_text`` is the fix:
take every chunk's text, the finishing one's too, and let the stream end by itself.
"""

from __future__ import annotations

from typing import Any


def _stream(client: Any, prompt: str) -> Any:
    return client.chat.completions.create(model="gpt-mock", messages=[{"role": "user", "content": prompt}], stream=True)


def collect_text_naive(client: Any, prompt: str) -> str:
    text = ""
    for chunk in _stream(client, prompt):
        if not chunk.choices:
            continue
        choice = chunk.choices[0]
        if choice.finish_reason:  # the end... but this chunk may carry the last words
            break
        text += choice.delta.content or ""
    return text


def collect_text(client: Any, prompt: str) -> str:
    # Every chunk's text, the one with the finish reason too: the stream ends by itself.
    return "".join(choice.delta.content or "" for chunk in _stream(client, prompt) for choice in chunk.choices)
