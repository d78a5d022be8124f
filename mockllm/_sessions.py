"""The mock server's sessions (``POST /_mockllm/sessions``): each a mock of its own.

The sessions are kept in the server's mock's state (``mockllm._state``), each session's
data in a scope of its own beside the server's, so that with ``serve --workers`` a
session opened through one worker is served by every worker and every replica, and a
session deleted through one is gone for all.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mockllm._engine import MockLLM

__all__ = ["ServerSessions"]


class ServerSessions:
    """The server's sessions, kept in its mock's state (``mockllm._state``): a session
    opened through one worker of ``serve --workers`` is served by every one. Each process
    builds the session's ``MockLLM`` once, over the session's own scope of the state."""

    def __init__(self, engine: MockLLM) -> None:
        self._engine = engine
        registry = engine.state.scope("sessions")
        self._open = registry.map("open")
        self._ids = registry.counters("ids")
        self._built: dict[str, MockLLM] = {}

    def __len__(self) -> int:
        return len(self._open)

    def open(self, settings: Mapping[str, Any]) -> str:
        """A new session with ``settings`` (``seed``, ``lenient``, ``stream``): its id."""
        session = f"s{self._ids.incr('next')}"
        self._open.put(session, dict(settings))
        return session

    def get(self, session: str) -> MockLLM | None:
        """The session's mock (None if it is not open, on any worker)."""
        settings = self._open.get(session)
        if settings is None:
            self._built.pop(session, None)  # deleted through another worker
            return None
        built = self._built.get(session)
        if built is None:
            engine = self._engine
            built = MockLLM(
                seed=settings.get("seed", 0),
                lenient=settings.get("lenient", False),
                limits=engine.limits,
                stream=settings.get("stream") or engine.stream,
                state=engine.state.scope(f"session-{session}"),
            )
            # simulation: a session is paced and counted as the server is
            built.latency, built.stream_load, built.on_plan = engine.latency, engine.stream_load, engine.on_plan
            self._built[session] = built
        return built

    def close(self, session: str) -> bool:
        """Delete the session and what it held; whether it was open."""
        self._built.pop(session, None)
        if self._open.remove(session) is None:
            return False
        self._engine.state.drop(f"session-{session}")
        return True
