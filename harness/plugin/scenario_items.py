"""``pytest scenarios/``: each scenario file is collected as test items.

One item per scenario and protocol (``scenarios/tool_use.yaml::tool_use[openai-chat]``),
each replaying the scenario and comparing its golden. ``--snapshot-update`` writes the
goldens. A broken scenario file is a collection error that says file, line and reason.
Only where the project opts in (``harness.plugin.config.is_scenario_file``): files named
``*.scenario.yaml``, or YAML files under a folder the ini option ``mockllm_scenario_dirs``
names.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.plugin.config import golden_dir, is_scenario_file
from harness.scenarios.replay import replay_scenario
from harness.scenarios.model import Scenario, ScenarioError, load_scenario

__all__ = ["ScenarioFile", "ScenarioItem", "pytest_collect_file"]


class ScenarioFailure(Exception):
    """A replay that did not pass; its message is the report."""


def _golden_dir(config: pytest.Config) -> Path:
    return golden_dir(config)


class ScenarioFile(pytest.File):
    def collect(self) -> Iterator[pytest.Item]:
        try:
            scenario = load_scenario(self.path)
        except ScenarioError as exc:
            raise self.CollectError(str(exc)) from None
        for protocol in scenario.protocol_list:
            yield ScenarioItem.from_parent(self, name=f"{scenario.name}[{protocol}]",
                                           scenario=scenario, protocol=protocol)


class ScenarioItem(pytest.Item):
    def __init__(self, *, scenario: Scenario, protocol: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.scenario = scenario
        self.protocol = protocol

    def runtest(self) -> None:
        update = bool(self.config.getoption("--snapshot-update", default=False))
        (outcome,) = replay_scenario(self.scenario, golden_dir=_golden_dir(self.config),
                                     protocols=[self.protocol], update=update)
        if not outcome.ok:
            raise ScenarioFailure(f"scenario {self.scenario.name!r} under {self.protocol}: "
                                  f"{outcome.status}\n{outcome.detail}")

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, ScenarioFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"scenario {self.scenario.name} [{self.protocol}]"


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if is_scenario_file(file_path, parent.config):
        return ScenarioFile.from_parent(parent, path=file_path)
    return None
