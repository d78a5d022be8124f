"""Golden paths are unique per test node (relative to the rootdir), and goldens written
under the old layout are found, named and moved (``python -m harness migrate-goldens``)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.harness.cli_support import run_harness

TEST = """
def test_flow(golden):
    assert [{"type": "reply", "where": "%s"}] == golden
"""


@pytest.fixture
def two_test_api(strict_pytester: pytest.Pytester) -> pytest.Pytester:
    for folder in ("checks", "checks/unit", "checks/integration"):
        (strict_pytester.path / folder).mkdir(exist_ok=True)
        (strict_pytester.path / folder / "__init__.py").write_text("")
    for folder in ("unit", "integration"):
        (strict_pytester.path / "checks" / folder / "test_api.py").write_text(TEST % folder)
    return strict_pytester


def golden_files(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_text() for p in sorted((root / "golden").rglob("*.golden"))}


def test_two_tests_of_the_same_file_and_name_in_two_folders_have_a_golden_each(two_test_api: pytest.Pytester) -> None:
    two_test_api.runpytest("--snapshot-update").assert_outcomes(passed=2)
    written = golden_files(two_test_api.path)
    assert sorted(written) == [
        "golden/checks/integration/test_api/test_flow.golden",
        "golden/checks/unit/test_api/test_flow.golden",
    ]
    assert 'where="unit"' in written["golden/checks/unit/test_api/test_flow.golden"]
    # Updating again changes nothing: neither overwrites the other.
    result = two_test_api.runpytest("--snapshot-update")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*2 snapshots passed.*"])
    assert golden_files(two_test_api.path) == written
    # A change in one fails that one only.
    (two_test_api.path / "checks" / "unit" / "test_api.py").write_text(TEST % "changed")
    two_test_api.runpytest().assert_outcomes(passed=1, failed=1)


def test_a_golden_under_the_old_layout_is_named_with_the_move(two_test_api: pytest.Pytester) -> None:
    old = two_test_api.path / "golden" / "test_api"
    old.mkdir(parents=True)
    (old / "test_flow.golden").write_text("whatever it held\n")
    result = two_test_api.runpytest("checks/unit")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*This golden is missing, but golden/test_api/test_flow.golden holds one from before*",
            "*git mv golden/test_api/test_flow.golden golden/checks/unit/test_api/test_flow.golden*",
        ]
    )


def test_migrate_goldens_moves_old_goldens_and_copies_a_shared_one_to_each(two_test_api: pytest.Pytester) -> None:
    two_test_api.runpytest("--snapshot-update").assert_outcomes(passed=2)
    written = golden_files(two_test_api.path)
    shared = written["golden/checks/unit/test_api/test_flow.golden"]
    for path in list((two_test_api.path / "golden").rglob("*.golden")):
        path.unlink()
    # The old layout: one file for both tests (it held whichever was updated last).
    (two_test_api.path / "golden" / "test_api").mkdir()
    (two_test_api.path / "golden" / "test_api" / "test_flow.golden").write_text(shared)
    # A scenario file's old golden, below a nested scenarios folder.
    scenarios = two_test_api.path / "scenarios" / "sub"
    scenarios.mkdir(parents=True)
    (scenarios / "hi.yaml").write_text("prompt: hi\nscript: [{messages: [{text_message: {text: Hi.}}]}]\n")
    (two_test_api.path / "golden" / "scenarios" / "sub").mkdir(parents=True)
    (two_test_api.path / "golden" / "scenarios" / "sub" / "hi.golden").write_text("old scenario golden\n")

    # The dry run and the run with nothing left to move in this process (the verb's pytest
    # session shares this one's imports), the move itself in a real `python -m harness`.
    dry = run_harness(two_test_api, "migrate-goldens", "--dry-run")
    assert dry.ret == 0
    dry.stdout.fnmatch_lines(["*would have copied golden/test_api/test_flow.golden -> *"])
    assert (two_test_api.path / "golden" / "test_api" / "test_flow.golden").is_file()

    # The path goes on to pytest: only the tests under checks/ are collected (a collection
    # without scenario files spares the process the mock and the runners).
    result = two_test_api.run(sys.executable, "-m", "harness", "migrate-goldens", "checks")
    assert result.ret == 0
    result.stdout.fnmatch_lines(
        [
            "*copied golden/test_api/test_flow.golden -> golden/checks/integration/test_api/test_flow.golden, "
            "golden/checks/unit/test_api/test_flow.golden: these tests shared one golden*",
        ]
    )
    migrated = {
        "golden/scenarios/sub/hi.golden": "old scenario golden\n",
        "golden/checks/integration/test_api/test_flow.golden": shared,
        "golden/checks/unit/test_api/test_flow.golden": shared,
    }
    assert golden_files(two_test_api.path) == migrated
    # The shared golden holds one test's events: the other's fails until reviewed.
    two_test_api.runpytest("checks").assert_outcomes(passed=1, failed=1)
    # Every test and scenario file collected: the scenario's golden under scenarios/ is where
    # it belongs already; one of a scenario file elsewhere moves from golden/scenarios/.
    flows = two_test_api.path / "flows" / "scenarios"
    flows.mkdir(parents=True)
    (flows / "greet.scenario.yaml").write_text("prompt: hi\nscript: [{messages: [{text_message: {text: Hi.}}]}]\n")
    (two_test_api.path / "golden" / "scenarios" / "greet.scenario.golden").write_text("old flow golden\n")
    again = run_harness(two_test_api, "migrate-goldens")
    assert again.ret == 0
    again.stdout.fnmatch_lines(
        ["*moved golden/scenarios/greet.scenario.golden -> golden/flows/scenarios/greet.scenario.golden*"]
    )
    assert golden_files(two_test_api.path) == {
        **migrated,
        "golden/flows/scenarios/greet.scenario.golden": "old flow golden\n",
    }
