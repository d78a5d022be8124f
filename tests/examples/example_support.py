"""An example project's own tests, run by ``pytest`` in its folder as its author runs them,
in this process: pytester's in-process run shares this session's imports (pytest, the
plugins, the SDKs: seconds of CPU a fresh process pays again) and forgets what the run
imported when it ends. examples/scenario_suite keeps a test in real processes too."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


def as_its_author(folder: Path, monkeypatch: pytest.MonkeyPatch, *, without: str = "") -> None:
    """Work in ``folder`` (its own ini and conftest files), without this session's
    ``OPENAI_*``, ``ANTHROPIC_*`` and ``PYTEST_*`` variables; ``without`` goes into
    ``PYTEST_ADDOPTS`` (``-p no:...`` for plugins this environment has and the example does
    not use), after the plugins ``pytester`` leaves out of every inner run."""
    # The plugins no inner run uses (tests/conftest.py's pytester), set before this is called.
    addopts = os.environ.get("PYTEST_ADDOPTS", "")
    for name in list(os.environ):
        # PYTEST_CURRENT_TEST is this session's, which pytest sets at each phase.
        if name.startswith(("OPENAI_", "ANTHROPIC_", "PYTEST_")) and name != "PYTEST_CURRENT_TEST":
            monkeypatch.delenv(name)
    monkeypatch.setenv("PYTEST_ADDOPTS", f"{addopts} {without}".strip())
    monkeypatch.chdir(folder)


def pytest_in_folder(
    folder: Path, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, *args: str, without: str = ""
) -> pytest.RunResult:
    """``pytest *args`` in ``folder``, as its author runs it (``as_its_author``)."""
    as_its_author(folder, monkeypatch, without=without)
    return pytester.runpytest_inprocess(*args)
