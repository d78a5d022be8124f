"""Scenario replay through pytest and syrupy: goldens across protocols, unused goldens,
the CLI as a front over pytest, determinism in process and over the server."""

from __future__ import annotations

import asyncio
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.golden.extension import golden_text
from harness.golden.records import VolatileRules
from harness.plugin.fixtures import MockLLMFixture, MockLLMServer
from harness.scenarios.model import load_scenario
from harness.scenarios.playback import run_scenario, scenario_golden
from harness.scenarios.runners import MODEL_CLIENT_PROTOCOLS
from mockllm import PROTOCOLS, MintedIds
from mockllm._engine import MockLLM
from tests.harness.cli_support import run_harness

ROOT = Path(__file__).resolve().parents[2]
N = len(MODEL_CLIENT_PROTOCOLS)
"""The items a ``protocols: all`` scenario gives: one each protocol the bundled runners speak."""
TOOL_USE = (ROOT / "scenarios" / "tool_use.yaml").read_text()
SIMPLE = (ROOT / "scenarios" / "simple_message.yaml").read_text()


@pytest.fixture
def workspace(strict_pytester: pytest.Pytester) -> pytest.Pytester:
    folder = strict_pytester.path / "scenarios"
    folder.mkdir()
    (folder / "tool_use.yaml").write_text(TOOL_USE)
    (folder / "simple_message.yaml").write_text(SIMPLE)
    return strict_pytester


def with_their_goldens(workspace: pytest.Pytester) -> None:
    """The workspace's scenarios' goldens, as ``--snapshot-update`` writes them: the
    repository's own (its suite replays them byte for byte), copied instead of a run that
    plays every scenario under every protocol to write them."""
    folder = workspace.path / "golden" / "scenarios"
    folder.mkdir(parents=True)
    for name in ("tool_use.golden", "simple_message.golden"):
        shutil.copyfile(ROOT / "golden" / "scenarios" / name, folder / name)


def goldens(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.rglob("*.golden"))}


def without_timing(text: str) -> str:
    text = re.sub(r" in \d+\.\d+s( \([0-9:]+\))?", " in <t>", text)
    return re.sub(r"(?m)^=+ (.*) =+$", r"== \1 ==", text)  # the rule's width follows the time's


def test_harness_replay_is_pytest_and_they_agree_byte_for_byte(
    workspace: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One width for both runs' lines, whether this session's output is a pipe or a terminal (-s).
    monkeypatch.setenv("COLUMNS", "80")
    # Both in this process (the CLI's own process is tested below): each process start costs
    # seconds of CPU (pytest, the plugins, the SDKs), and the session the verb starts is what
    # must match pytest's.
    replay = run_harness(workspace, "replay", "scenarios", "--update", "-p", "no:randomly")
    assert replay.ret == 0
    written = goldens(workspace.path / "golden")
    assert sorted(written) == ["simple_message.golden", "tool_use.golden"]
    shutil.rmtree(workspace.path / "golden")
    pytest_run = workspace.runpytest_inprocess("scenarios", "--snapshot-update", "-p", "no:randomly")
    assert goldens(workspace.path / "golden") == written
    assert without_timing(replay.stdout.str()) == without_timing(pytest_run.stdout.str())
    assert "2 snapshots passed. 2 snapshots generated." in replay.stdout.str()

    # A real process, from another directory: the CLI finds the same goldens (pytest's
    # rootdir decides), exits 1 on a changed behaviour, maps its options (-k, --protocol) onto
    # pytest's and passes pytest's own (-v) on. One process for all: each start costs seconds
    # of CPU (pytest, the plugins, the SDKs).
    elsewhere = workspace.mkdir("elsewhere")
    changed = workspace.path / "scenarios" / "tool_use.yaml"
    changed.write_text(TOOL_USE.replace("I found the entities.", "Changed."))
    away = subprocess.run(
        [
            sys.executable,
            "-m",
            "harness",
            "replay",
            str(workspace.path / "scenarios"),
            "-k",
            "tool",
            "--protocol",
            "openai-chat",
            "-v",
        ],
        cwd=elsewhere,
        capture_output=True,
        text=True,
    )
    assert away.returncode == 1
    pytest.LineMatcher(away.stdout.splitlines()).fnmatch_lines(
        [
            "*scenarios/tool_use.yaml::tool_use[[]openai-chat[]] FAILED*",
            "*scenario 'tool_use' under openai-chat differs from its golden golden/scenarios/tool_use.golden*",
            "*1 failed, 1 deselected*",
        ]
    )
    assert list(elsewhere.iterdir()) == []


def test_a_changed_behaviour_fails_with_a_readable_diff(workspace: pytest.Pytester) -> None:
    with_their_goldens(workspace)
    (workspace.path / "scenarios" / "tool_use.yaml").write_text(
        TOOL_USE.replace("I found the entities.", "I found three entities.")
    )
    result = workspace.runpytest("scenarios", "--snapshot-no-colors")
    result.assert_outcomes(passed=N, failed=N)
    out = result.stdout.str()
    assert (
        "scenario 'tool_use' under anthropic-messages differs from its golden golden/scenarios/tool_use.golden "
        "(--snapshot-update accepts the new one):"
    ) in out
    assert '- 4    message                  persisted    content="I found the entities."' in out
    assert '+ 4    message                  persisted    content="I found three entities."' in out
    assert "Traceback" not in out and "--update" not in out.replace("--snapshot-update", "")


def test_a_missing_golden_fails_naming_the_flag_that_writes_it(workspace: pytest.Pytester) -> None:
    result = workspace.runpytest("scenarios", "-k", "simple")
    result.assert_outcomes(failed=N)
    out = result.stdout.str()
    assert "Snapshot 'simple_message' does not exist!" in out
    assert "(--snapshot-update accepts the new one)" in out


def test_snapshot_update_writes_and_removes_scenario_goldens(workspace: pytest.Pytester) -> None:
    workspace.runpytest("scenarios", "--snapshot-update").assert_outcomes(passed=2 * N)
    (workspace.path / "scenarios" / "simple_message.yaml").unlink()
    result = workspace.runpytest("scenarios")
    result.assert_outcomes(passed=N)
    result.stdout.fnmatch_lines(["*1 snapshot unused*", "*--snapshot-update to delete unused snapshots*"])
    assert result.ret == 1
    result = workspace.runpytest("scenarios", "--snapshot-update", "--snapshot-details")
    result.stdout.fnmatch_lines(
        ["*1 unused snapshot deleted*", "*Deleted simple_message (golden/scenarios/simple_message.golden)*"]
    )
    assert sorted(goldens(workspace.path / "golden")) == ["tool_use.golden"]
    # -k keeps unselected goldens: they are not unused.
    workspace.runpytest("scenarios", "-k", "nothing_matches").stdout.no_fnmatch_line("*unused*")


def test_a_broken_file_is_a_collection_error_naming_file_and_line(workspace: pytest.Pytester) -> None:
    (workspace.path / "scenarios" / "broken.yaml").write_text("prompt: hi\nrunner: sideways\n")
    (workspace.path / "scenarios" / "bad.yaml").write_text("prompt: hi\nscript:\n  - messages: [{bogus: 1}]\n")
    result = workspace.runpytest("scenarios", "--snapshot-update", "--continue-on-collection-errors")
    result.assert_outcomes(passed=2 * N, errors=2)
    out = result.stdout.str()
    assert (
        "scenarios/broken.yaml:2: runner: no runner named 'sideways'; known: agent, chain, planner. "
        "Give a function as package.module:function"
    ) in out
    assert "scenarios/bad.yaml:3: script[0].messages[0]: a message needs a 'text_message'" in out
    assert "Traceback" not in out


def test_protocols_that_behave_differently_are_named_when_updating(workspace: pytest.Pytester) -> None:
    # after_chunks counts wire events, so the cut falls differently in each protocol.
    (workspace.path / "scenarios" / "split.yaml").write_text(
        "prompt: p\nprotocols: all\nscript:\n  - error: {status: 529, after_chunks: 8}\n"
        "    messages: [{text_message: {length: 30}}]\nexpect: {success: false, flow: error}\n"
    )
    result = workspace.runpytest("scenarios/split.yaml", "--snapshot-update")
    result.assert_outcomes(passed=1, failed=N - 1)
    # The first protocol of mockllm.PROTOCOLS writes the golden; the next one differs from it.
    first, second = PROTOCOLS[:2]
    assert f"scenario 'split' under {second}: {second} behaves differently from {first}:" in (result.stdout.str())


def test_a_broken_invariant_is_reported(workspace: pytest.Pytester) -> None:
    (workspace.path / "scenarios" / "wrong_flow.yaml").write_text(
        TOOL_USE.replace("flow: tool_use", "flow: simple_message").replace("protocols: all", "protocols: [openai-chat]")
    )
    result = workspace.runpytest("scenarios/wrong_flow.yaml", "--snapshot-update")
    result.assert_outcomes(failed=1)
    assert (
        "scenario 'wrong_flow' under openai-chat: invariant broken: the simple message flow emits only"
        in result.stdout.str()
    )
    assert not (workspace.path / "golden" / "scenarios" / "wrong_flow.golden").exists()


def test_replay_over_the_loopback_server(workspace: pytest.Pytester, shared_server_conftest: str) -> None:
    # On this session's server: the plugin's own server's start is tested in test_plugin.py
    # and plugin/test_server_fixture.py (--mockllm-replay-server asks for the same fixture).
    workspace.makeconftest(shared_server_conftest)
    with_their_goldens(workspace)  # as an in-process run writes them
    workspace.runpytest("scenarios", "--mockllm-replay-server").assert_outcomes(passed=2 * N)


def test_replay_is_byte_identical_in_process_and_over_the_server(mock_server_url: str) -> None:
    scenario = load_scenario(ROOT / "scenarios" / "tool_loop_with_thinking.yaml")
    expected = (ROOT / "golden" / "scenarios" / "tool_loop_with_thinking.golden").read_text()
    for protocol in ("anthropic-messages", "openai-chat"):
        mocks = [MockLLMFixture(MockLLM()), MockLLMFixture(MockLLM()), MockLLMServer(mock_server_url)]
        texts = set()
        for mock in mocks:
            run = asyncio.run(run_scenario(scenario, protocol, mock))
            rules = VolatileRules(minted=MintedIds.of(mock.journal))
            texts.add(golden_text(scenario_golden(scenario, run), rules=rules))
        assert texts == {expected}


def test_diff_shows_changed_and_new_goldens_against_head(
    workspace: pytest.Pytester, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from harness.cli import main

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=workspace.path, check=True, capture_output=True)

    with_their_goldens(workspace)
    git("init", "-q")
    git("-c", "user.email=t@t", "-c", "user.name=t", "add", ".")
    git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "goldens")
    monkeypatch.chdir(workspace.path)
    capsys.readouterr()
    assert main(["diff"]) == 0
    assert capsys.readouterr().out == "No golden changed against HEAD.\n"
    (workspace.path / "scenarios" / "tool_use.yaml").write_text(TOOL_USE.replace("I found the entities.", "Found."))
    (workspace.path / "scenarios" / "hello.yaml").write_text(SIMPLE.replace("length: 24", "length: 3"))
    workspace.runpytest("scenarios", "--snapshot-update").assert_outcomes(passed=3 * N)
    capsys.readouterr()
    assert main(["diff"]) == 0
    out = capsys.readouterr().out
    assert '+4    message                  persisted    content="Found."' in out
    assert "new golden: golden/scenarios/hello.golden" in out
