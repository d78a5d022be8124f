"""Which scripted steps requests reached: what ``MockLLM.unused_steps`` reports.

The table keeps at most ``CHAIN_TABLE_SIZE`` chains and ``CHAIN_TABLE_BYTES`` of their
step labels (the oldest seen go first). A chain dropped while some of its steps were
never reached is not forgotten: its unused steps are counted and the first few kept
(``dropped``), so strictness still fails on them however many chains followed.
"""

from __future__ import annotations

from dataclasses import dataclass

from mockllm._limits import clip_text

__all__ = ["CHAIN_TABLE_BYTES", "CHAIN_TABLE_SIZE", "StepTable", "UnusedStep"]

CHAIN_TABLE_SIZE = 1000
CHAIN_TABLE_BYTES = 4 * 1024 * 1024
_LABEL_OVERHEAD = 64  # a label's str object and its tuple slot, beyond its characters
_DROPPED_KEPT = 20


@dataclass(frozen=True)
class UnusedStep:
    """A scripted instruction that no request reached."""

    chain_id: str
    index: int
    label: str

    def __str__(self) -> str:
        return f"chain {self.chain_id} step {self.index} ({self.label!r})"


def _row_bytes(labels: tuple[str, ...]) -> int:
    """A row's weight for ``CHAIN_TABLE_BYTES``."""
    return 256 + sum(len(label) + _LABEL_OVERHEAD for label in labels)


class StepTable:
    """chain id -> (step labels, turn indexes served). Not thread-safe: the engine locks."""

    def __init__(self) -> None:
        self._chains: dict[str, tuple[tuple[str, ...], set[int]]] = {}
        self._bytes = 0
        self.dropped: list[UnusedStep] = []
        """The first unused steps of chains dropped from the table."""
        self.dropped_count = 0
        """How many unused steps the dropped chains had, all told."""

    def row(self, chain_id: str, step_labels: tuple[str, ...]) -> tuple[tuple[str, ...], set[int]]:
        """The row for ``chain_id``, added if new; the oldest rows go past the caps."""
        row = self._chains.get(chain_id)
        if row is not None:
            return row
        labels = tuple(clip_text(label, 200) for label in step_labels)
        row = self._chains[chain_id] = (labels, set())
        self._bytes += _row_bytes(labels)
        while len(self._chains) > 1 and (len(self._chains) > CHAIN_TABLE_SIZE or self._bytes > CHAIN_TABLE_BYTES):
            old_id = next(iter(self._chains))
            old_labels, served = self._chains.pop(old_id)
            self._bytes -= _row_bytes(old_labels)
            for step in _unused(old_id, old_labels, served):
                self.dropped_count += 1
                if len(self.dropped) < _DROPPED_KEPT:
                    self.dropped.append(step)
        return row

    def served(self, chain_id: str, step_labels: tuple[str, ...], turn_index: int | None) -> None:
        labels, served = self.row(chain_id, step_labels)
        if turn_index is not None and turn_index < len(labels):
            served.add(turn_index)

    def unused(self) -> list[UnusedStep]:
        """The unused steps of the chains in the table, oldest chain first."""
        return [step for cid, (labels, served) in self._chains.items() for step in _unused(cid, labels, served)]

    def clear(self) -> None:
        self._chains.clear()
        self._bytes = 0
        self.dropped.clear()
        self.dropped_count = 0


def _unused(chain_id: str, labels: tuple[str, ...], served: set[int]) -> list[UnusedStep]:
    return [UnusedStep(chain_id, i, label) for i, label in enumerate(labels) if i not in served]
