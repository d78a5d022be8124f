"""Which scripted steps requests reached: what ``MockLLM.unused_steps`` reports.

The table keeps at most ``CHAIN_TABLE_SIZE`` chains and ``CHAIN_TABLE_BYTES`` of their
step labels (the oldest seen go first). A chain dropped while some of its steps were
never reached is not forgotten: its unused steps are counted and the first few kept
(``dropped``), so strictness still fails on them however many chains followed. The
table lives in the mock's state (``mockllm._state``), shared by ``serve --workers``.

A registered script's steps are a row of their own (``step_key``), reached only by the
requests that script answered: the same chain registered for another ``match`` (or tagged
in a prompt) reaching its steps does not use this script.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from mockllm._limits import clip_text
from mockllm._state import Codec, MemoryState, State

__all__ = ["CHAIN_TABLE_BYTES", "CHAIN_TABLE_SIZE", "StepTable", "UnusedStep", "step_key"]

CHAIN_TABLE_SIZE = 1000
CHAIN_TABLE_BYTES = 4 * 1024 * 1024
_LABEL_OVERHEAD = 64  # a label's str object and its tuple slot, beyond its characters
_DROPPED_KEPT = 20


@dataclass(frozen=True)
class UnusedStep:
    """A scripted instruction that no request reached (``script_id``: of that registered
    script; None for a chain tagged in a prompt)."""

    chain_id: str
    index: int
    label: str
    script_id: str | None = None

    def __str__(self) -> str:
        of = f" of {self.script_id}" if self.script_id is not None else ""
        return f"chain {self.chain_id} step {self.index} ({self.label!r}){of}"


def step_key(chain_id: str, script_id: str | None) -> str:
    """The step table's row for ``chain_id`` as tagged (no ``script_id``) or as the
    registered script ``script_id`` answers it."""
    return chain_id if script_id is None else f"{chain_id}/{script_id}"


def _step(key: str, index: int, label: str) -> UnusedStep:
    chain_id, _, script_id = key.partition("/")
    return UnusedStep(chain_id, index, label, script_id or None)


def _row_bytes(labels: tuple[str, ...]) -> int:
    """A row's weight for ``CHAIN_TABLE_BYTES``."""
    return 256 + sum(len(label) + _LABEL_OVERHEAD for label in labels)


class StepTable:
    """chain id -> step labels, and which (chain, turn index) requests reached, kept in
    ``state`` (``mockllm._state``: with ``serve --workers`` a step served by one worker
    is used for all). Not thread-safe: the engine locks."""

    def __init__(self, state: State | None = None) -> None:
        where = state if state is not None else MemoryState()
        self._shared = where.shared
        self._chains = where.map("step-chains")
        self._served = where.map("steps-served")
        self._counts = where.counters("steps")
        self._dropped = where.log("steps-dropped", count=_DROPPED_KEPT, codec=_UNUSED_CODEC)

    @property
    def dropped(self) -> list[UnusedStep]:
        """The first unused steps of chains dropped from the table."""
        return list(self._dropped.items())

    @property
    def dropped_count(self) -> int:
        """How many unused steps the dropped chains had, all told."""
        return self._counts.get("dropped")

    def row(self, chain_id: str, step_labels: tuple[str, ...]) -> tuple[str, ...]:
        """The step labels of ``chain_id``, added if new; the oldest rows go past the caps."""
        if not self._shared:  # in memory a read is cheapest; shared, a write that finds the row is
            known = self._chains.get(chain_id)
            if known is not None:
                return known  # type: ignore[no-any-return]
        labels = tuple(clip_text(label, 200) for label in step_labels)
        if not self._chains.put_new(chain_id, labels):
            return labels
        held = self._counts.incr("bytes", _row_bytes(labels))
        size = len(self._chains)
        while size > 1 and (size > CHAIN_TABLE_SIZE or held > CHAIN_TABLE_BYTES):
            oldest = self._chains.oldest()
            if oldest is None:
                break
            old_id, old_labels = oldest
            self._chains.remove(old_id)
            size -= 1
            held = self._counts.incr("bytes", -_row_bytes(old_labels))
            served = self._served_turns(old_id, len(old_labels))
            for step in _unused(old_id, tuple(old_labels), served):
                if self._counts.incr("dropped") <= _DROPPED_KEPT:
                    self._dropped.append(_constant(step))
            for index in served:
                self._served.remove(_served_key(old_id, index))
        return labels

    def _served_turns(self, chain_id: str, length: int) -> set[int]:
        return {i for i in range(length) if self._served.get(_served_key(chain_id, i)) is not None}

    def served(self, chain_id: str, step_labels: tuple[str, ...], turn_index: int | None) -> None:
        reached = turn_index is not None and turn_index < len(step_labels)
        key = _served_key(chain_id, turn_index or 0)
        if self._shared and reached and self._served.get(key) is not None:
            return  # served before, so its row is there too: one read, no write
        labels = self.row(chain_id, step_labels)
        if reached and turn_index is not None and turn_index < len(labels):
            self._served.put_new(key, 1)

    def unused(self) -> list[UnusedStep]:
        """The unused steps of the chains in the table, oldest chain first."""
        served = {key for key, _ in self._served.items()}
        return [
            _step(cid, i, label)
            for cid, labels in self._chains.items()
            for i, label in enumerate(labels)
            if _served_key(cid, i) not in served
        ]

    def clear(self) -> None:
        self._chains.clear()
        self._served.clear()
        self._counts.clear()
        self._dropped.clear()


def _constant(step: UnusedStep) -> Callable[[int], UnusedStep]:
    return lambda index: step


def _served_key(chain_id: str, index: int) -> str:
    return f"{chain_id}#{index}"


_UNUSED_CODEC: Codec[UnusedStep] = Codec(
    lambda step: json.dumps(vars(step)), lambda text: UnusedStep(**json.loads(text))
)


def _unused(chain_id: str, labels: tuple[str, ...], served: set[int]) -> list[UnusedStep]:
    return [_step(chain_id, i, label) for i, label in enumerate(labels) if i not in served]
