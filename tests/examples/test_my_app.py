"""examples/my_app is a project of its own: run its tests as its author would."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

APP = Path(__file__).parents[2] / "examples" / "my_app"


def test_the_example_apps_tests_pass_run_by_pytest_in_its_folder() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "PYTEST_"))}
    # Without the plugins this environment brings and the app does not use (LangSmith's
    # imports its client at start, hypothesis's all of hypothesis at the end: ~3 s of CPU).
    env["PYTEST_ADDOPTS"] = "-p no:langsmith_plugin -p no:hypothesispytest"
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=APP,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "5 passed" in result.stdout
