"""examples/scenario_suite runs as a user would run it: pytest and harness replay in its
folder, its own agent on the official openai SDK, its runner, scenario files and goldens."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.examples.example_support import as_its_author
from tests.harness.cli_support import run_harness

SUITE = Path(__file__).resolve().parents[2] / "examples" / "scenario_suite"
# Without the plugins this environment brings and the suite does not use (LangSmith's
# imports its client at start, hypothesis's all of hypothesis at the end: ~3 s of CPU).
WITHOUT = "-p no:langsmith_plugin -p no:hypothesispytest"


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    copy = tmp_path / "scenario_suite"
    shutil.copytree(SUITE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def run(folder: Path, *command: str) -> subprocess.CompletedProcess[str]:
    # A session of its own, not an xdist worker of ours (syrupy keeps a worker's report to itself).
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")}
    # After the plugins no inner run uses, where pytester set them (tests/conftest.py).
    env["PYTEST_ADDOPTS"] = f"{os.environ.get('PYTEST_ADDOPTS', '')} {WITHOUT}".strip()
    return subprocess.run(
        [sys.executable, "-m", *command], cwd=folder, capture_output=True, text=True, timeout=300, env=env
    )


def test_the_example_suite_passes_under_pytest_and_harness_replay(
    suite: Path, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = run(suite, "pytest", "-rs")
    assert result.returncode == 0, result.stdout + result.stderr
    # protocols: all plays only what the runner speaks (it does not speak anthropic-messages).
    assert "5 passed in" in result.stdout
    assert "3 snapshots passed." in result.stdout

    # harness replay in this process: its own process is tested in tests/harness/test_replay.py,
    # and a start costs about 2 s of CPU (pytest, the plugins, the SDKs).
    as_its_author(suite, monkeypatch, without=WITHOUT)
    replay = run_harness(pytester, "replay", "scenarios/")
    assert replay.ret == 0, replay.stdout.str() + replay.stderr.str()
    assert "4 passed in" in replay.stdout.str()


def test_a_change_in_the_agent_shows_in_its_goldens(
    suite: Path, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # pytest and harness replay in this process (their processes are the test above's).
    as_its_author(suite, monkeypatch, without=WITHOUT)
    tools = suite / "my_agent" / "tools.py"
    tools.write_text(tools.read_text().replace('"Oslo": 4', '"Oslo": 5'))
    result = pytester.runpytest_inprocess("scenarios/weather.yaml")
    assert result.ret == 1
    out = result.stdout.str()
    assert '- 2    tool_result              -            call_id="<call:1>" output="4 °C in Oslo"' in out
    assert '+ 2    tool_result              -            call_id="<call:1>" output="5 °C in Oslo"' in out
    assert "--snapshot-update accepts the new one" in out
    assert run_harness(pytester, "replay", "scenarios/weather.yaml", "--update").ret == 0
    assert 'output="5 °C in Oslo"' in (suite / "golden" / "scenarios" / "weather.golden").read_text()
