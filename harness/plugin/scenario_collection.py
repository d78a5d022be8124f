"""``pytest scenarios/``: each scenario file is collected as test items.

One item per scenario and protocol (``scenarios/tool_use.yaml::tool_use[openai-chat]``),
each playing the scenario with its runner, checking its expectations and comparing
its golden through syrupy — so ``--snapshot-update`` writes and removes scenario
goldens, and unused goldens are reported, as for any syrupy snapshot. A broken
scenario file, or one naming a runner nobody provides, is a collection error that says
file, line and reason. Only where the project opts in
(``harness.plugin.config.is_scenario_file``): files named ``*.scenario.yaml``, or YAML
files under a folder the ini option ``mockllm_scenario_dirs`` names.

Options: ``--mockllm-protocol P`` collects only that protocol's items;
``--mockllm-replay-server`` plays them against one loopback mock server per session.

This module is what pytest loads at every start: it decides which files are scenarios.
The items and the replay (``harness.plugin.scenario_item``) are imported only when a
scenario file is collected.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.exceptions import missing_extra, not_installed
from harness.golden.location import golden_dir
from harness.plugin.config import SCENARIO_DIR_OPTION, is_scenario_file

__all__ = [
    "add_scenario_options",
    "pytest_collect_file",
    "pytest_collection_modifyitems",
    "pytest_terminal_summary",
    "show_goldens_to_syrupy",
]


def add_scenario_options(group: Any) -> None:
    group.addoption(
        "--mockllm-protocol",
        type=_protocol,
        metavar="PROTOCOL",
        default=None,
        help="collect scenario files' items for this protocol only",
    )
    group.addoption(
        SCENARIO_DIR_OPTION,
        action="append",
        default=[],
        metavar="PATH",
        help="collect the YAML files under PATH as scenario files (besides the ini's mockllm_scenario_dirs)",
    )
    group.addoption(
        "--mockllm-replay-server",
        action="store_true",
        default=False,
        help="play scenario files against a loopback mock server instead of in process",
    )


def _protocol(value: str) -> str:
    # The mock's list (mockllm.PROTOCOLS), read only when the flag is given: pytest's
    # start imports no mockllm (docs/performance.md).
    from mockllm import PROTOCOLS

    if value not in PROTOCOLS:
        raise argparse.ArgumentTypeError(
            f"{value!r} is not a protocol the mock speaks; use one of {', '.join(PROTOCOLS)}"
        )
    return value


def show_goldens_to_syrupy(config: pytest.Config) -> None:
    """syrupy judges snapshots unused only under the paths pytest was given, and a
    folder's goldens live under ``golden/<the folder, relative to the rootdir>``: name
    that folder too, so ``pytest scenarios/`` reports (and ``--snapshot-update`` removes)
    the golden of a deleted scenario. Only syrupy's report reads this; collection has
    its paths."""
    root = golden_dir(config)
    given = list(config.option.file_or_dir or [])
    for raw in given:
        path = (config.invocation_params.dir / raw.split("::")[0]).resolve()
        if not path.is_dir() or not path.is_relative_to(config.rootpath):
            continue
        mirror = root / path.relative_to(config.rootpath)
        if mirror != root and mirror.is_dir() and str(mirror) not in given:
            given.append(str(mirror))
    config.option.file_or_dir = given


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if is_scenario_file(file_path, parent.config):
        try:
            from harness.plugin.scenario_item import ScenarioFile
        except ModuleNotFoundError as exc:
            if not_installed(exc) != "syrupy":
                raise
            return _WithoutGoldens.from_parent(parent, path=file_path)
        return ScenarioFile.from_parent(parent, path=file_path)
    return None


_UNCOLLECTED = pytest.StashKey[list[tuple[str, int]]]()


@pytest.hookimpl(tryfirst=True)  # before -k and friends deselect
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Note each folder given on the command line that holds YAML files but gave no item:
    most likely scenario files the project has not opted in."""
    if config.pluginmanager.has_plugin("dsession"):
        return  # an xdist controller collects nothing itself; its workers do
    collected = {path.resolve() for path in {item.path for item in items}}  # a file's items share it
    quiet: list[tuple[str, int]] = []
    for raw in config.args:
        folder = (config.invocation_params.dir / raw.split("::")[0]).resolve()
        if not folder.is_dir() or any(path.is_relative_to(folder) for path in collected):
            continue
        yaml = [p for suffix in ("*.yaml", "*.yml") for p in folder.rglob(suffix) if not is_scenario_file(p, config)]
        if yaml:
            quiet.append((raw, len(yaml)))
    config.stash[_UNCOLLECTED] = quiet


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    for folder, count in config.stash.get(_UNCOLLECTED, []):
        terminalreporter.write_line(
            f"mockllm: {folder} holds {count} YAML file(s) that were not collected as scenario files: only "
            "*.scenario.yaml files and the folders of the ini option mockllm_scenario_dirs are. Add "
            f"mockllm_scenario_dirs = {folder} to your pytest configuration, pass --mockllm-scenario-dir "
            f"{folder}, or run python -m harness replay {folder} (which opts in the paths it is given).",
            yellow=True,
        )


class _WithoutGoldens(pytest.File):
    """A scenario file where syrupy is not installed: a collection error that says so."""

    def collect(self) -> Iterator[pytest.Item]:
        error = missing_extra("syrupy", needed_by=f"{self.path.name}: a scenario file (its golden)")
        raise self.CollectError(str(error))
