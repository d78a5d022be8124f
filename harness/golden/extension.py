"""Golden snapshots: a syrupy extension that stores event tables under ``golden/``.

A golden file is the readable table of ``harness.golden.table`` — one file per test,
at ``golden/<test file>/<test name>.golden`` — so a change in an agent's behaviour is a
reviewable diff. ``pytest --snapshot-update`` writes them; syrupy reports the unused
ones and shows a line diff of the table on failure.

The ``golden`` fixture (from the pytest plugin) is ``snapshot.use_extension(GoldenExtension)``::

    def test_tool_flow(golden, agent_run):
        result = agent_run("List all BC entities", script=[...])
        assert result.events == golden
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

from harness.golden.table import render_event_table
from harness.events import Event

__all__ = ["GOLDEN_SUFFIX", "GoldenExtension", "golden_text"]

GOLDEN_SUFFIX = "golden"


def golden_text(data: Any) -> str:
    """The golden form of ``data``: an event table for events (or anything with an
    ``events`` attribute), the text itself for a string."""
    if isinstance(data, str):
        return data if data.endswith("\n") else data + "\n"
    events = getattr(data, "events", data)
    if isinstance(events, Iterable) and not isinstance(events, (bytes, Mapping)):
        items = list(events)
        if all(isinstance(e, (Event, Mapping)) for e in items):
            return render_event_table(items)
    raise TypeError(
        f"a golden snapshot holds events or text; got {type(data).__name__}. "
        "Pass the run's events (a list of harness.events.Event or their dicts) or a string."
    )


class GoldenExtension(SingleFileSnapshotExtension):
    """Event tables as text files under the project's ``golden/`` directory."""

    _write_mode = WriteMode.TEXT
    file_extension = GOLDEN_SUFFIX
    # The plugin points this at <rootdir>/golden (or --mockllm-golden-dir); a relative
    # path is taken from the test file's directory.
    snapshot_dirname: str | Path = "golden"

    def serialize(self, data: Any, **kwargs: Any) -> str:
        return golden_text(data)

    @classmethod
    def dirname(cls, *, test_location: Any) -> str:
        # golden/<test file>/<test name>.golden
        root = Path(test_location.filepath).parent / cls.snapshot_dirname
        return str(root / test_location.basename)

    @classmethod
    def discovery_dirname(cls, *, test_location: Any) -> str:
        # File-scoped discovery: syrupy looks for unused goldens only in this test
        # file's own folder, never in golden/scenarios/, which the plugin manages.
        return cls.dirname(test_location=test_location)
