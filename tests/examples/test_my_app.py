"""examples/my_app is a project of its own: run its tests as its author would."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.examples.example_support import pytest_in_folder

APP = Path(__file__).parents[2] / "examples" / "my_app"


def test_the_example_apps_tests_pass_run_by_pytest_in_its_folder(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Without the plugins this environment brings and the app does not use (LangSmith's
    # imports its client at start, hypothesis's all of hypothesis at the end: ~3 s of CPU).
    result = pytest_in_folder(
        APP,
        pytester,
        monkeypatch,
        "-q",
        "-p",
        "no:cacheprovider",
        without="-p no:langsmith_plugin -p no:hypothesispytest",
    )
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    assert "5 passed" in result.stdout.str()
