"""Approvals: a write tool's run pauses until the user (or the test) decides.

``ApprovalManager.wait`` suspends the run until ``resolve(approval_id, approved)`` is
called — from another task, another thread, or the ``decide`` callback given at
construction (which tests use to script decisions). No decision within the timeout
counts as a rejection.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from harness.events import settled

__all__ = ["ApprovalDecision", "ApprovalManager", "ApprovalRequest"]


@dataclass(frozen=True)
class ApprovalRequest:
    approval_id: str
    tool_name: str
    tool_use_id: str
    arguments: dict[str, Any]
    description: str


@dataclass(frozen=True)
class ApprovalDecision:
    approved: bool
    reason: str  # "approved", "rejected" or "timeout"


Decider = Callable[[ApprovalRequest], bool | None | Awaitable[bool | None]]


class ApprovalManager:
    """Pending approvals, resolved by id."""

    def __init__(self, *, timeout_s: float = 300.0, decide: Decider | None = None) -> None:
        self.timeout_s = timeout_s
        self._decide = decide
        self._lock = threading.Lock()
        self._pending: dict[str, tuple[asyncio.AbstractEventLoop, asyncio.Future[bool]]] = {}
        self._early: dict[str, bool] = {}

    @property
    def pending(self) -> list[str]:
        with self._lock:
            return list(self._pending)

    def resolve(self, approval_id: str, approved: bool) -> None:
        """Approve or reject a pending request (thread-safe; before the wait is fine too)."""
        with self._lock:
            entry = self._pending.get(approval_id)
            if entry is None:
                self._early[approval_id] = approved
                return
        loop, future = entry

        def settle() -> None:
            if not future.done():
                future.set_result(approved)

        loop.call_soon_threadsafe(settle)

    async def wait(self, request: ApprovalRequest) -> ApprovalDecision:
        """Suspend until ``request`` is resolved, or the timeout passes (a rejection)."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[bool] = loop.create_future()
        with self._lock:
            if request.approval_id in self._early:
                approved = self._early.pop(request.approval_id)
                return ApprovalDecision(approved, "approved" if approved else "rejected")
            self._pending[request.approval_id] = (loop, future)
        try:
            if self._decide is not None:
                decision = await settled(self._decide(request))
                if decision is not None:
                    self.resolve(request.approval_id, bool(decision))
            approved = await asyncio.wait_for(future, self.timeout_s)
        except TimeoutError:
            return ApprovalDecision(False, "timeout")
        finally:
            with self._lock:
                self._pending.pop(request.approval_id, None)
        return ApprovalDecision(approved, "approved" if approved else "rejected")
