"""What the engine asks before scripting: ``RecordedAnswers`` (``MockLLM(recordings=...)``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from mockllm._mock_response import MockResponse

__all__ = ["RecordedAnswers"]


class RecordedAnswers(Protocol):
    """Answers a request from recordings: (reply, journal fields), or None to let the
    engine answer it as usual; ``query`` is the URL's query string (a recording session
    forwards it upstream). ``RecordingLibrary`` and ``RecordingSession`` are two."""

    def answer(
        self, method: str, path: str, headers: Mapping[str, str], body: bytes, query: str = ""
    ) -> tuple[MockResponse, dict[str, Any]] | None: ...
