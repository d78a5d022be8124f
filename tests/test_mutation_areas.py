"""The mutation-testing areas (docs/mutation.md) are named in one place, ``AREAS`` of
``bench/mutation.py``, and name what exists: ``[tool.mutmut]`` of pyproject.toml (what
``mutmut run`` from the root does) is the areas' union as the script writes it, and
every file and test an area names is there — a test file split or a test renamed must
not quietly drop out of an area's run."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def mutation() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_mutation", REPO / "bench" / "mutation.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
    return module


def test_the_root_mutmut_config_is_every_areas_files_and_tests(mutation: ModuleType) -> None:
    written = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    assert mutation.root_pyproject() == written, "run: python bench/mutation.py --write-pyproject"
    whole = mutation.whole_run()
    for area in mutation.AREAS.values():
        for path in area.mutate:
            assert any(path == p or mutation.fnmatch(path, p) for p in whole["only_mutate"]), path
        for test in area.tests:
            assert test in whole["pytest_add_cli_args_test_selection"] or any(
                mutation._covered(test, by) for by in whole["pytest_add_cli_args_test_selection"]
            ), test


def test_every_file_and_test_an_area_names_exists(mutation: ModuleType) -> None:
    for name, area in mutation.AREAS.items():
        for pattern in area.mutate:
            assert list(REPO.glob(pattern)), f"{name}: nothing to mutate at {pattern}"
        for argument in area.tests:
            if argument.startswith("--"):
                continue
            path, _, test = argument.partition("::")
            assert (REPO / path).exists(), f"{name}: no {path}"
            if test:
                source = (REPO / path).read_text(encoding="utf-8")
                assert re.search(rf"^(async )?def {re.escape(test)}\b", source, re.M), f"{name}: no {argument}"
