"""The mock server's sessions (``POST /_mockllm/sessions``): each a mock of its own.

The sessions are kept in the server's mock's state (``mockllm._state``), each session's
data in a scope of its own beside the server's, so that with ``serve --workers`` a
session opened through one worker is served by every worker and every replica, and a
session deleted through one is gone for all.

A model call to a session that was open once and is deleted now is a *late request*: the
test that owned the session had ended when it came (an app's thread or task still
running). It is refused (404) and kept in a short log (``late()``, ``GET /_mockllm/late``),
which the pytest plugin reads to fail the run naming that test.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from mockllm._engine import MockLLM

__all__ = ["LATE_KEPT", "ServerSessions"]

LATE_KEPT = 100
"""How many late requests the server keeps (the newest); the plugin reads them at each
test's end, so only a burst past this between two tests loses any."""


class ServerSessions:
    """The server's sessions, kept in its mock's state (``mockllm._state``): a session
    opened through one worker of ``serve --workers`` is served by every one. Each process
    builds the session's ``MockLLM`` once, over the session's own scope of the state."""

    def __init__(self, engine: MockLLM) -> None:
        self._engine = engine
        registry = engine.state.scope("sessions")
        self._open = registry.map("open")
        self._ids = registry.counters("ids")
        self._late = registry.log("late", count=LATE_KEPT)
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

    def record_late(self, session: str, method: str, path: str) -> dict[str, Any] | None:
        """Keep a model call to ``session`` if it is a late request (the session was open
        once and is deleted now): the record, ``index`` counting from 0; None for an id
        this server never gave."""
        number = session[1:]
        if not (session.startswith("s") and number.isdigit() and 0 < int(number) <= self._ids.get("next")):
            return None
        at = time.time()
        record: dict[str, Any] = self._late.append(
            lambda index: {"index": index, "session": session, "method": method, "path": path, "at": at}
        )
        return record

    def late(self) -> list[dict[str, Any]]:
        """The late requests kept, oldest first."""
        return self._late.items()
