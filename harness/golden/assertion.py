"""The ``golden`` assertion: syrupy's ``SnapshotAssertion`` that refuses to freeze a
mock fallback reply.

The mock answers a model call nobody scripted with its fallback reply (text starting
``mockllm fallback reply:``; the request journal records ``fallback_reason``). A golden
of such a run would freeze a reply the test never asked for, so the assertion fails
instead, saying which event and which request, unless the test allows fallbacks
(``@pytest.mark.mockllm(allow_fallback=True)``; ``allow_fallback: true`` in a scenario).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from syrupy.assertion import SnapshotAssertion

from harness.exceptions import HarnessError
from mockllm import JournalEntry

__all__ = ["FALLBACK_PREFIX", "FallbackRefused", "GoldenAssertion", "fallback_evidence"]

FALLBACK_PREFIX = "mockllm fallback reply:"

Journal = Callable[[], Sequence[JournalEntry]]


class FallbackRefused(HarnessError, AssertionError):
    """A golden would have recorded a mock fallback reply."""


def _fallback_texts(data: Any, path: str = "") -> list[str]:
    if isinstance(data, str):
        return [f"{path}: {data!r}"] if data.startswith(FALLBACK_PREFIX) else []
    if hasattr(data, "model_dump"):
        data = data.model_dump(mode="json", by_alias=True)
    elif hasattr(data, "__dataclass_fields__"):
        data = {name: getattr(data, name) for name in data.__dataclass_fields__}
    elif hasattr(data, "events") and not isinstance(data, (Mapping, list, tuple)):
        data = data.events
    if isinstance(data, Mapping):
        return [t for k, v in data.items() for t in _fallback_texts(v, f"{path}.{k}" if path else str(k))]
    if isinstance(data, (list, tuple)):
        return [t for i, v in enumerate(data) for t in _fallback_texts(v, f"{path}.{i}" if path else f"event {i}")]
    return []


def fallback_evidence(data: Any, journal: Sequence[JournalEntry] = ()) -> list[str]:
    """Where ``data`` holds a fallback reply, and which requests of ``journal`` got one."""
    evidence = [f"  {where}" for where in _fallback_texts(data)]
    evidence += [
        f"  request {e.index} ({e.method} {e.path}): fallback_reason={e.fallback_reason!r}"
        for e in journal
        if e.fallback_reason is not None
    ]
    return evidence


@dataclass(eq=False, order=False, repr=False)
class GoldenAssertion(SnapshotAssertion):
    """``SnapshotAssertion`` plus the fallback refusal (see the module docstring)."""

    journal: Journal | None = None
    allow_fallback: bool = False

    @classmethod
    def wrap(
        cls,
        snapshot: SnapshotAssertion,
        extension_class: type,
        *,
        journal: Journal | None = None,
        allow_fallback: bool = False,
    ) -> GoldenAssertion:
        """``snapshot`` (syrupy's fixture) with ``extension_class`` and the refusal."""
        return cls(
            session=snapshot.session,
            test_location=snapshot.test_location,
            update_snapshots=snapshot.update_snapshots,
            update_new_snapshots_only=snapshot.update_new_snapshots_only,
            extension_class=extension_class,
            journal=journal,
            allow_fallback=allow_fallback,
        )

    def with_defaults(self, **options: Any) -> SnapshotAssertion:
        made = super().with_defaults(**options)
        if isinstance(made, GoldenAssertion):
            made.journal, made.allow_fallback = self.journal, self.allow_fallback
        return made

    def get_assert_diff(self, **options: Any) -> list[str]:
        result = self.executions.get(self.num_executions - 1)
        if result is not None and isinstance(result.exception, FallbackRefused):
            return str(result.exception).splitlines()  # the reason, not syrupy's traceback
        return super().get_assert_diff(**options)

    def _serialize(self, data: Any) -> Any:
        if not self.allow_fallback:
            evidence = fallback_evidence(data, self.journal() if self.journal else ())
            if evidence:
                raise FallbackRefused(
                    "golden refused: the run got the mock's fallback reply, so the golden would freeze a reply "
                    "nobody scripted:\n" + "\n".join(evidence) + "\nScript a step for every model call (see the "
                    "reason above), or allow fallbacks with @pytest.mark.mockllm(allow_fallback=True) "
                    "(allow_fallback: true in a scenario file)."
                )
        return super()._serialize(data)
