"""Hooks the plugin adds to pytest (declared with ``pytest_addhooks``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from harness.scenarios.contract import ScenarioRunner


def pytest_mockllm_runners(config: pytest.Config) -> Mapping[str, ScenarioRunner] | None:
    """Scenario runners by name, for scenario files' ``runner:`` field.

    Implement it in a ``conftest.py`` or a plugin::

        def pytest_mockllm_runners(config):
            return {"my_agent": my_agent.runner.run}

    A conftest's runners win over a plugin's of the same name. See
    ``harness.scenarios.contract`` for what a runner receives and returns.
    """
