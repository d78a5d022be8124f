"""Scenario replay: the CLI, goldens across protocols, determinism, pytest collection."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from harness.cli import main
from harness.scenarios.replay import golden_text_for, replay_scenario, run_scenario
from harness.scenarios.model import load_scenario

ROOT = Path(__file__).resolve().parents[2]
TOOL_USE = (ROOT / "scenarios" / "tool_use.yaml").read_text()
SIMPLE = (ROOT / "scenarios" / "simple_message.yaml").read_text()


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "tool_use.yaml").write_text(TOOL_USE)
    (tmp_path / "scenarios" / "simple_message.yaml").write_text(SIMPLE)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_update_then_replay_passes(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", "scenarios", "--update"]) == 0
    assert sorted(p.name for p in (workspace / "golden" / "scenarios").iterdir()) == [
        "simple_message.golden", "tool_use.golden"]
    capsys.readouterr()
    assert main(["replay", "scenarios"]) == 0
    out = capsys.readouterr().out
    assert "ok         tool_use [anthropic-messages]" in out  # progress, one line per run
    assert "SCENARIO        PROTOCOL            RESULT" in out  # the summary table
    assert out.rstrip().endswith("4 passed, 0 failed")


def test_a_changed_behaviour_fails_with_a_readable_diff(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(["replay", "scenarios", "--update"])
    scenario = workspace / "scenarios" / "tool_use.yaml"
    scenario.write_text(TOOL_USE.replace("I found the entities.", "I found three entities."))
    capsys.readouterr()
    assert main(["replay", "scenarios"]) == 1
    out = capsys.readouterr().out
    assert "DIFFERS    tool_use [anthropic-messages]" in out
    assert '-4    message                  persisted    content="I found the entities."' in out
    assert '+4    message                  persisted    content="I found three entities."' in out
    assert "2 passed, 2 failed" in out


def test_a_missing_golden_fails_until_written(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", "scenarios", "-k", "simple"]) == 1
    assert "no golden at" in capsys.readouterr().out


def test_a_broken_file_is_reported_and_the_others_still_run(workspace: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    main(["replay", "scenarios", "--update"])
    (workspace / "scenarios" / "broken.yaml").write_text("prompt: hi\nscript:\n  - messages: [{bogus: 1}]\n")
    capsys.readouterr()
    assert main(["replay", "scenarios"]) == 1
    out = capsys.readouterr().out
    assert "BROKEN     scenarios/broken.yaml:3: script[0].messages[0]: a message needs a 'text_message'" in out
    assert "4 passed, 1 failed (1 broken scenario files)" in out


def test_k_filters_and_unused_goldens_are_reported(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(["replay", "scenarios", "--update"])
    (workspace / "golden" / "scenarios" / "retired.golden").write_text("old\n")
    capsys.readouterr()
    assert main(["replay", "scenarios", "-k", "tool and not simple"]) == 0
    out = capsys.readouterr().out
    assert "tool_use" in out and "simple_message [" not in out
    assert main(["replay", "scenarios"]) == 0
    assert "unused golden: golden/scenarios/retired.golden (no scenario named 'retired')" in capsys.readouterr().out


def test_protocols_that_behave_differently_are_named(workspace: Path) -> None:
    path = workspace / "scenarios" / "split.yaml"
    # after_chunks counts wire events, so the cut falls differently in each protocol.
    path.write_text("prompt: p\nprotocols: all\nscript:\n  - error: {status: 529, after_chunks: 8}\n"
                    "    messages: [{text_message: {length: 30}}]\nexpect: {success: false, flow: error}\n")
    outcomes = replay_scenario(load_scenario(path), golden_dir=workspace / "golden", update=True)
    assert [(o.protocol, o.status) for o in outcomes] == [("anthropic-messages", "written"),
                                                          ("openai-chat", "differs")]
    assert outcomes[1].detail.startswith("openai-chat behaves differently from anthropic-messages:")


def test_a_broken_invariant_is_reported(workspace: Path) -> None:
    path = workspace / "scenarios" / "wrong_flow.yaml"
    path.write_text(TOOL_USE.replace("flow: tool_use", "flow: simple_message"))
    (outcome, *_) = replay_scenario(load_scenario(path), golden_dir=workspace / "golden", update=True)
    assert outcome.status == "broken"
    assert outcome.detail.startswith("invariant broken: the simple message flow emits only")


def test_replay_is_byte_identical_in_process_and_over_the_server(mock_server_url: str) -> None:
    import asyncio

    scenario = load_scenario(ROOT / "scenarios" / "tool_loop_with_thinking.yaml")
    for protocol in scenario.protocol_list:
        texts = {golden_text_for(scenario, asyncio.run(run_scenario(scenario, protocol, base_url=url)))
                 for url in (None, None, mock_server_url)}
        assert len(texts) == 1
        assert texts == {(ROOT / "golden" / "scenarios" / "tool_loop_with_thinking.golden").read_text()}


def test_diff_shows_changed_and_new_goldens_against_head(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=workspace, check=True, capture_output=True)

    main(["replay", "scenarios", "--update"])
    git("init", "-q")
    git("-c", "user.email=t@t", "-c", "user.name=t", "add", ".")
    git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "goldens")
    capsys.readouterr()
    assert main(["diff"]) == 0
    assert capsys.readouterr().out == "No golden changed against HEAD.\n"
    (workspace / "scenarios" / "tool_use.yaml").write_text(TOOL_USE.replace("I found the entities.", "Found."))
    shutil.copy(workspace / "scenarios" / "simple_message.yaml", workspace / "scenarios" / "hello.yaml")
    (workspace / "scenarios" / "hello.yaml").write_text(SIMPLE.replace("length: 24", "length: 3"))
    main(["replay", "scenarios", "--update"])
    capsys.readouterr()
    assert main(["diff"]) == 0
    out = capsys.readouterr().out
    assert '+4    message                  persisted    content="Found."' in out
    assert "new golden: golden/scenarios/hello.golden" in out


def test_pytest_collects_scenarios_and_reports_failures_cleanly(strict_pytester: pytest.Pytester) -> None:
    folder = strict_pytester.path / "scenarios"
    folder.mkdir()
    (folder / "tool_use.yaml").write_text(TOOL_USE)
    result = strict_pytester.runpytest("scenarios", "--snapshot-update")
    result.assert_outcomes(passed=2)
    assert (strict_pytester.path / "golden" / "scenarios" / "tool_use.golden").is_file()

    (folder / "tool_use.yaml").write_text(TOOL_USE.replace("I found the entities.", "Changed."))
    (folder / "broken.yaml").write_text("prompt: hi\nrunner: sideways\n")
    result = strict_pytester.runpytest("scenarios", "-v", "--continue-on-collection-errors")
    result.assert_outcomes(failed=2, errors=1)
    out = result.stdout.str()
    assert "scenarios/tool_use.yaml::tool_use[anthropic-messages] FAILED" in out
    assert "scenario 'tool_use' under anthropic-messages: differs" in out
    assert '+4    message                  persisted    content="Changed."' in out
    assert "scenarios/broken.yaml:2: runner: Input should be 'agent', 'chain' or 'planner'" in out
    assert "Traceback" not in out


def test_bundled_scenarios_match_their_goldens_under_xdist(strict_pytester: pytest.Pytester) -> None:
    shutil.copytree(ROOT / "scenarios", strict_pytester.path / "scenarios")
    shutil.copytree(ROOT / "golden" / "scenarios", strict_pytester.path / "golden" / "scenarios")
    result = strict_pytester.runpytest_subprocess("scenarios", "-n", "2", "-p", "no:benchmark")
    expected = sum(len(load_scenario(p).protocol_list) for p in (ROOT / "scenarios").glob("*.yaml"))
    result.assert_outcomes(passed=expected)
