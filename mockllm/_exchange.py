"""One request as the engine's stages see it (``mockllm._pipeline``): the ``Exchange``
they pass along, each stage filling in what it decided, and what they ask of the mock
(``MockLLM``, the protocol ``mockllm._engine.MockLLM`` meets).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from mockllm._attempts import AttemptCounter, AttemptRule
    from mockllm._conversation import Conversation
    from mockllm._held import HeldConversations
    from mockllm._journal import Outcome
    from mockllm._journal_ring import PlannedEntry
    from mockllm._latency import LatencyProfiles, StreamLoad
    from mockllm._limits import Limits
    from mockllm._plan import ReplyPlan
    from mockllm._registered import RegisteredScript, ScriptRegistry
    from mockllm._selection import Selection
    from mockllm._shapes import StreamShape
    from mockllm._wire.base import WireCodec

__all__ = ["Exchange", "MockLLM"]


class MockLLM(Protocol):
    """What the stages ask of the mock (``mockllm._engine.MockLLM``): its settings and
    state, and how it journals."""

    lenient: bool
    limits: Limits
    seed: int
    stream: StreamShape | None
    latency: LatencyProfiles | None
    stream_load: StreamLoad
    on_plan: Callable[[str, ReplyPlan, bool], None] | None
    scripts: ScriptRegistry
    _attempts: AttemptCounter
    _held: dict[str, HeldConversations]
    _held_stores: list[tuple[WireCodec, HeldConversations]]

    def _record(self, outcome: Outcome, body_bytes: int = 0, **fields: Any) -> None: ...

    def _record_planned(self, outcome: Outcome, body_bytes: int, planned: PlannedEntry, *, flagged: bool) -> None: ...

    def _note_step(self, selection: Selection, script_id: str | None = None) -> None: ...


@dataclass(slots=True)
class Exchange:
    """One request and what the stages made of it so far."""

    method: str
    path: str
    headers: Mapping[str, str]
    body: bytes
    query: str = ""
    codec: WireCodec = None  # type: ignore[assignment]  # set by ``route``
    sent: Any = None
    """The body as sent (parsed): what the journal shows."""
    whole: Any = None
    """The body the rest reads: ``sent`` with a held conversation's history put back."""
    model: str | None = None
    store: HeldConversations | None = None
    """Where the reply is held for the next request (None: it is not held)."""
    rebuilt_from: str | None = None
    conversation: Conversation | None = None
    selection: Selection = None  # type: ignore[assignment]  # set by ``select``
    script: RegisteredScript | None = None
    attempt: int = 0
    attempt_rule: AttemptRule | None = None
    stream: bool = False
    plan: ReplyPlan = None  # type: ignore[assignment]  # set by ``plan``
    warnings: list[str] = field(default_factory=list)
