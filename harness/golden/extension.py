"""Golden snapshots: syrupy extensions that store event tables under ``golden/``.

A golden file is the readable table of ``harness.golden.table`` — so a change in an
agent's behaviour is a reviewable diff. Two layouts, one mechanism (syrupy's session:
``--snapshot-update``, unused-golden reports, ``--snapshot-details``, xdist), both
unique per test node because both follow the test file's path relative to the rootdir:

- ``GoldenExtension`` — the ``golden`` fixture: ``golden/<test file's folder>/<test
  file>/<test name>.golden`` (``tests/unit/test_api.py::test_flow`` →
  ``golden/tests/unit/test_api/test_flow.golden``);
- ``ScenarioGoldenExtension`` — scenario files: ``golden/<scenario file without its
  suffix>.golden`` (``scenarios/tool_use.yaml`` → ``golden/scenarios/tool_use.golden``),
  one golden for every protocol the scenario runs under.

Goldens written before the layout was rootdir-relative (``golden/<test file>/…``, and
``golden/scenarios/<stem>.golden`` for a scenario anywhere) are found by
``legacy_location``; a test whose golden is only there fails saying how to move it.

The folder is ``harness.golden.location.golden_dir``; the plugin makes a subclass per
session pointing at it. Usage::

    def test_tool_flow(golden, mockllm_agent):
        result = mockllm_agent("openai-chat", tools=tools).run_sync(prompt, "s1")
        assert result.events == golden
        assert [{"type": "message", "created_at": 1700000000}] == golden(exclude=props("created_at"))
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode
from syrupy.location import PyTestLocation

from harness.golden.records import VolatileRules
from harness.golden.table import event_rows, render_rows
from mockllm import MintedIds

__all__ = ["GOLDEN_SUFFIX", "GoldenExtension", "ScenarioGoldenExtension", "golden_text"]

GOLDEN_SUFFIX = "golden"


def golden_text(data: Any, **options: Any) -> str:
    """The golden form of ``data``: an event table for a sequence of events (or anything
    with an ``events`` attribute; its ``golden_header``, if any, comes first), the text
    itself for a string. ``options`` are syrupy's ``matcher``/``exclude``/``include``."""
    if isinstance(data, str):
        return data if data.endswith("\n") else data + "\n"
    header = getattr(data, "golden_header", "")
    events = getattr(data, "events", data)
    if isinstance(events, Iterable) and not isinstance(events, (str, bytes, Mapping)):
        return header + render_rows(event_rows(events, **options))
    raise TypeError(
        f"a golden snapshot holds events or text; got {type(data).__name__}. Pass the run's events "
        "(a list of dicts, pydantic models, dataclasses or harness.events.Event) or a string."
    )


class GoldenExtension(SingleFileSnapshotExtension):
    """Event tables as text files: ``golden/<test file>/<test name>.golden``."""

    _write_mode = WriteMode.TEXT
    file_extension = GOLDEN_SUFFIX
    snapshot_dirname: str | Path = "golden"
    """The golden folder; the plugin's per-session subclass sets the absolute path."""
    rootdir: Path | None = None
    """What test paths are relative to; the plugin's per-session subclass sets pytest's
    rootdir (None: the working directory)."""
    volatile_rules: type[VolatileRules] = VolatileRules
    """What counts as a volatile value; override in a subclass to change the rules."""
    minted: MintedIds = MintedIds()
    """The ids the test's mock minted, which its golden normalises: set per test by the
    ``golden`` assertion (``GoldenAssertion``) from the mock's journal; none without one."""

    def serialize(self, data: Any, *, exclude: Any = None, include: Any = None, matcher: Any = None) -> str:
        rules = self.volatile_rules(minted=self.minted)
        return golden_text(data, exclude=exclude, include=include, matcher=matcher, rules=rules)

    @classmethod
    def relative_path(cls, test_location: PyTestLocation) -> Path:
        """The test file's path relative to the rootdir, without its suffix (its name
        alone when it lies outside the rootdir)."""
        path = Path(test_location.filepath).resolve()
        root = (cls.rootdir or Path.cwd()).resolve()
        if path.is_relative_to(root):
            return path.relative_to(root).with_suffix("")
        return Path(path.stem)

    @classmethod
    def dirname(cls, *, test_location: PyTestLocation) -> str:
        return str(Path(cls.snapshot_dirname) / cls.relative_path(test_location))

    @classmethod
    def discovery_dirname(cls, *, test_location: PyTestLocation) -> str:
        # File-scoped discovery: syrupy looks for unused goldens in this test file's own
        # folder only, never in a scenario folder's goldens (ScenarioGoldenExtension's).
        return cls.dirname(test_location=test_location)

    @classmethod
    def legacy_location(cls, *, test_location: PyTestLocation, location: str) -> Path:
        """Where the golden now at ``location`` lived before the layout was
        rootdir-relative: ``golden/<test file>/<name>.golden``."""
        return Path(cls.snapshot_dirname) / test_location.basename / Path(location).name


class ScenarioGoldenExtension(GoldenExtension):
    """One golden per scenario file: ``golden/<scenario file without its suffix>.golden``,
    the path relative to the rootdir."""

    @classmethod
    def dirname(cls, *, test_location: PyTestLocation) -> str:
        return str((Path(cls.snapshot_dirname) / cls.relative_path(test_location)).parent)

    @classmethod
    def get_snapshot_name(cls, *, test_location: PyTestLocation, index: Any = 0) -> str:
        return cls.relative_path(test_location).name

    @classmethod
    def discovery_dirname(cls, *, test_location: PyTestLocation) -> str:
        return cls.dirname(test_location=test_location)

    def owns_snapshot_collection(self, *, filepath: str, test_location: PyTestLocation) -> bool:
        # The scenario folder's own goldens: a golden fixture's live one folder deeper,
        # in their test file's folder.
        return self.is_snapshot_location(location=filepath) and Path(filepath).parent == Path(
            self.dirname(test_location=test_location)
        )

    @classmethod
    def legacy_location(cls, *, test_location: PyTestLocation, location: str) -> Path:
        """Where this golden lived before: under ``golden/scenarios/``, relative to the
        nearest ``scenarios`` folder above the file (its stem alone outside one)."""
        path = Path(test_location.filepath)
        parts = path.parent.parts
        relative = Path(path.stem)
        if "scenarios" in parts:
            top = len(parts) - 1 - parts[::-1].index("scenarios")
            relative = Path(*parts[top + 1 :], path.stem)
        return Path(cls.snapshot_dirname) / "scenarios" / f"{relative}.{cls.file_extension}"
