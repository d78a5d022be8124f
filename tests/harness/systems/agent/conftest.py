"""The agent runner's fixtures: ``make`` builds a runner on a fresh mock and closes it after."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.harness.systems.agent.agent_support import Harness


@pytest.fixture
def make() -> Iterator[Any]:
    made: list[Harness] = []

    def build(protocol: str, **runner_kwargs: Any) -> Harness:
        made.append(Harness(protocol, **runner_kwargs))
        return made[-1]

    yield build
    for harness in made:
        harness.runner.close()
