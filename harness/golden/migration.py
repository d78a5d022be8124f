"""``python -m harness migrate-goldens``: move goldens written before their paths were
rootdir-relative to where they live now.

Before, the ``golden`` fixture stored ``golden/<test file>/<test name>.golden`` — so
``tests/unit/test_api.py::test_flow`` and ``tests/integration/test_api.py::test_flow``
shared one file — and a scenario file's golden was ``golden/scenarios/<path below the
nearest scenarios folder>.golden``. Now both follow the test file's path relative to the
rootdir (``harness.golden.extension``). This collects the tests (pytest
``--collect-only``, the same options and paths as a run), asks each test that uses
``golden`` and each scenario item where its goldens were and are, and moves them with
``git mv`` (a plain move outside git). A golden two tests shared is copied to each, and
named: it holds whichever test was updated last, so review both with
``--snapshot-update``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

import pytest

from harness.golden.location import golden_extension

__all__ = ["GoldenMigration", "migrate_goldens"]


def _belongs_to(stem: str, snapshot_name: str) -> bool:
    """Whether a golden named ``stem`` is one of the test's (``name``, ``name.1``, ``name[p]``)."""
    return stem == snapshot_name or stem.startswith((f"{snapshot_name}.", f"{snapshot_name}["))


class GoldenMigration:
    """A pytest plugin: at the end of collection, every legacy golden and where it goes."""

    def __init__(self) -> None:
        self.moves: dict[Path, set[Path]] = defaultdict(set)

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        # Imported once pytest runs: imported before, syrupy could not be assertion-rewritten.
        from syrupy.location import PyTestLocation

        from harness.golden.extension import GOLDEN_SUFFIX, GoldenExtension, ScenarioGoldenExtension

        for item in session.items:
            scenario = _is_scenario_item(item)
            if scenario:
                extension: type[GoldenExtension] = golden_extension(session.config, ScenarioGoldenExtension)
            elif "golden" in getattr(item, "fixturenames", ()):
                extension = golden_extension(session.config)
            else:
                continue
            location = PyTestLocation(item)
            new = Path(extension.get_location(test_location=location, index=0))
            if scenario:
                legacy = extension.legacy_location(test_location=location, location=str(new))
                if legacy.is_file() and legacy != new:
                    self.moves[legacy].add(new)
                continue
            legacy_folder = Path(extension.snapshot_dirname) / location.basename
            if legacy_folder == new.parent or not legacy_folder.is_dir():
                continue
            for legacy in legacy_folder.glob(f"*.{GOLDEN_SUFFIX}"):
                if _belongs_to(legacy.name[: -len(GOLDEN_SUFFIX) - 1], location.snapshot_name):
                    self.moves[legacy].add(new.parent / legacy.name)


def _is_scenario_item(item: pytest.Item) -> bool:
    # A session that collected no scenario file never imported their item class, nor the
    # mock and the runners it brings (a third of a second): then no item is one.
    module = sys.modules.get("harness.plugin.scenario_item")
    return module is not None and isinstance(item, module.ScenarioItem)


def _tracked(path: Path) -> bool:
    try:
        done = subprocess.run(
            ["git", "ls-files", "--error-unmatch", path.name], cwd=path.parent, capture_output=True, check=False
        )
    except OSError:
        return False
    return done.returncode == 0


def _move(legacy: Path, targets: list[Path], *, dry_run: bool) -> list[str]:
    shown = [os.path.relpath(p) for p in (legacy, *targets)]
    if any(target.exists() for target in targets):
        return [
            f"kept {shown[0]}: {', '.join(s for s, t in zip(shown[1:], targets, strict=True) if t.exists())} exists"
        ]
    if len(targets) == 1:
        lines = [f"moved {shown[0]} -> {shown[1]}"]
    else:
        lines = [
            f"copied {shown[0]} -> {', '.join(shown[1:])}: these tests shared one golden, which holds whichever was "
            "updated last; review them with --snapshot-update"
        ]
    if dry_run:
        return [f"would have {line}" for line in lines]
    for target in targets:
        target.parent.mkdir(parents=True, exist_ok=True)
    git = _tracked(legacy)
    for target in targets[1:]:
        shutil.copy2(legacy, target)
    if git:
        subprocess.run(["git", "mv", str(legacy), str(targets[0])], check=True, capture_output=True)
        if targets[1:]:
            subprocess.run(["git", "add", *map(str, targets[1:])], check=True, capture_output=True)
    else:
        legacy.replace(targets[0])
    if legacy.parent.is_dir() and not any(legacy.parent.iterdir()):
        legacy.parent.rmdir()
    return lines


def migrate_goldens(pytest_args: Sequence[str], *, dry_run: bool = False) -> int:
    """Collect the tests of ``pytest_args`` and move their legacy goldens; the exit code."""
    migration = GoldenMigration()
    code = pytest.main(["--collect-only", "-q", "-p", "no:randomly", *pytest_args], plugins=[migration])
    if code not in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED):
        print(f"harness migrate-goldens: collection failed (pytest exit code {int(code)}); nothing moved.")
        return int(code)
    if not migration.moves:
        print("harness migrate-goldens: no golden to move; every golden is where it belongs.")
        return 0
    for legacy, targets in sorted(migration.moves.items()):
        for line in _move(legacy, sorted(targets), dry_run=dry_run):
            print(f"harness migrate-goldens: {line}")
    return 0
