"""The ``golden`` assertion: syrupy's ``SnapshotAssertion`` that refuses to freeze a
mock fallback reply.

The mock answers a model call nobody scripted with its fallback reply; its findings
(``mockllm._verdict``, counted apart from the journal) and each journal entry's typed
``outcome`` say so. A golden of such a run would freeze a reply the test never asked
for, so the assertion fails instead, saying which request, unless the test allows
fallbacks (``@pytest.mark.mockllm(allow_fallback=True)``; ``allow_fallback: true`` in a
scenario): ``harness.golden.refusal`` says how it knows.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from syrupy.assertion import SnapshotAssertion

from harness.golden.extension import GoldenExtension
from harness.golden.refusal import FallbackRefusal, FallbackRefused
from mockllm import MintedIds

__all__ = ["GoldenAssertion", "moved_golden"]

MintedSource = Callable[[], MintedIds]


def moved_golden(extension: Any, test_location: Any, location: str) -> list[str]:
    """The lines that say how to move a golden found only where the layout before
    rootdir-relative paths kept it (docs/goldens.md, "Where goldens live")."""
    legacy_location = getattr(extension, "legacy_location", None)
    if legacy_location is None:
        return []
    legacy = Path(legacy_location(test_location=test_location, location=location))
    new = Path(location)
    if legacy == new or not legacy.is_file() or new.exists():
        return []
    root = getattr(extension, "rootdir", None) or Path.cwd()
    shown = [os.path.relpath(p, root) for p in (legacy, new)]
    return [
        f"This golden is missing, but {shown[0]} holds one from before goldens were stored by the test file's path "
        "relative to the rootdir (unique per test). Move it, then run the tests again:",
        f"    mkdir -p {os.path.dirname(shown[1]) or '.'} && git mv {shown[0]} {shown[1]}",
        "or move every golden at once: python -m harness migrate-goldens. If two test files of the same name "
        "shared that golden, it holds whichever was updated last: review it with --snapshot-update.",
    ]


@dataclass(eq=False, order=False, repr=False)
class GoldenAssertion(SnapshotAssertion):
    """``SnapshotAssertion`` plus the fallback refusal (see the module docstring), and
    the ids the test's mock minted (``minted``, read when a golden is made: the mock's
    journal then; None: the test has no mock, nothing was minted)."""

    refusal: FallbackRefusal = FallbackRefusal()
    minted: MintedSource | None = None

    @classmethod
    def wrap(
        cls,
        snapshot: SnapshotAssertion,
        extension_class: type,
        refusal: FallbackRefusal,
        minted: MintedSource | None = None,
    ) -> GoldenAssertion:
        """``snapshot`` (syrupy's fixture) with ``extension_class``, the ``refusal`` and
        where the test's ``minted`` ids are read."""
        return cls(
            session=snapshot.session,
            test_location=snapshot.test_location,
            update_snapshots=snapshot.update_snapshots,
            update_new_snapshots_only=snapshot.update_new_snapshots_only,
            extension_class=extension_class,
            refusal=refusal,
            minted=minted,
        )

    def with_defaults(self, **options: Any) -> SnapshotAssertion:
        made = super().with_defaults(**options)
        if isinstance(made, GoldenAssertion):
            made.refusal, made.minted = self.refusal, self.minted
        return made

    def serialized(self, data: Any) -> Any:
        """``data`` as its golden holds it, the test's minted ids normalised."""
        extension = self.extension
        if isinstance(extension, GoldenExtension):
            extension.minted = self.minted() if self.minted is not None else MintedIds()
        return super()._serialize(data)

    def get_assert_diff(self, **options: Any) -> list[str]:
        result = self.executions.get(self.num_executions - 1)
        if result is not None and isinstance(result.exception, FallbackRefused):
            return str(result.exception).splitlines()  # the reason, not syrupy's traceback
        diff = super().get_assert_diff(**options)
        if result is not None and result.recalled_data is None:
            diff[1:1] = moved_golden(self.extension, result.test_location, result.snapshot_location)
        return diff

    def _serialize(self, data: Any) -> Any:
        self.refusal.check()
        return self.serialized(data)
