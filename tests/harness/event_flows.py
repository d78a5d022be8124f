"""Event sequences built the way a runner numbers them, for the invariants' tests."""

from __future__ import annotations

from typing import Any


class Flow:
    """Builds an event sequence the way a runner would number it."""

    def __init__(self, start: int = 0) -> None:
        self.events: list[dict[str, Any]] = []
        self._seq = start

    def add(self, type: str, persistence: str = "persisted", **data: Any) -> Flow:
        seq = None
        if persistence == "persisted":
            seq, self._seq = self._seq, self._seq + 1
        elif persistence == "pending":  # stored right after it is emitted: it takes a number
            self._seq += 1
        self.events.append(
            {
                "type": type,
                "persistence": persistence,
                "eventIndex": len(self.events),
                "sequenceNumber": seq,
                "sessionId": "s1",
                "timestamp": 1000 + len(self.events),
                "data": data,
            }
        )
        return self

    def chunks(self, type: str, text: str, block: int = 0) -> Flow:
        for word in text.split(" "):
            self.add(type, "transient", content=word + " ", blockIndex=block)
        return self
