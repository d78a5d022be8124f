"""``python -m harness``: a folder it is given is replayed whatever the ini says, pytest
says why a folder of YAML gave nothing, ``serve`` without its extra names the install
command, and ``--help`` covers every subcommand."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from harness.cli import _parser
from harness.scenarios.runners import MODEL_CLIENT_PROTOCOLS
from tests.harness.cli_support import run_harness

ROOT = Path(__file__).resolve().parents[2]
SIMPLE = (ROOT / "scenarios" / "simple_message.yaml").read_text()
ITEMS = len(MODEL_CLIENT_PROTOCOLS)
"""simple_message says ``protocols: all``: an item each protocol the bundled runner speaks."""


@pytest.fixture
def flows(pytester: pytest.Pytester) -> pytest.Pytester:
    """A project whose scenario files are in flows/, which its ini does not name."""
    # The plugins left out as in tests/conftest.py's PYTESTER_INI (LangSmith's and hypothesis's
    # cost a second or two a start).
    # pytest-asyncio, where installed, warns that its loop scope is unset: ignored, as in
    # pyproject.toml and PYTESTER_INI (it showed as the lean run's only warnings).
    pytester.makeini(
        "[pytest]\naddopts = -p no:cacheprovider -p no:randomly -p no:langsmith_plugin -p no:hypothesispytest\n"
        'filterwarnings =\n    ignore:The configuration option "asyncio_default_fixture_loop_scope" is unset'
        ":pytest.PytestDeprecationWarning\n"
    )
    (pytester.path / "flows").mkdir()
    (pytester.path / "flows" / "simple_message.yaml").write_text(SIMPLE)
    return pytester


def test_replay_plays_a_folder_it_is_given_though_the_ini_does_not_name_it(
    flows: pytest.Pytester, shared_server_conftest: str
) -> None:
    # Over the loopback server too (--server), this session's (the plugin's own server's
    # start is tested in test_plugin.py). In this process: what the verb gives pytest is
    # under test here, its process in test_replay.py.
    flows.makeconftest(shared_server_conftest)
    result = run_harness(flows, "replay", "flows", "--update", "--server")
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines([f"*{ITEMS} passed in *"])
    assert (flows.path / "golden" / "flows" / "simple_message.golden").is_file()


def test_pytest_says_why_a_folder_of_yaml_gave_no_item_and_how_to_opt_in(flows: pytest.Pytester) -> None:
    result = flows.runpytest("flows")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    result.stdout.fnmatch_lines(
        [
            "*flows holds 1 YAML file(s) that were not collected as scenario files*mockllm_scenario_dirs = flows"
            "*--mockllm-scenario-dir flows*python -m harness replay flows*",
        ]
    )
    flows.runpytest("flows", "--mockllm-scenario-dir", "flows", "--snapshot-update").assert_outcomes(passed=ITEMS)
    # A folder that gave items says nothing.
    flows.runpytest("flows", "--mockllm-scenario-dir", "flows").stdout.no_fnmatch_line("*not collected*")


@pytest.mark.parametrize("package", ["mcp", "websockets"])
def test_serve_without_its_extra_names_the_install_command(package: str) -> None:
    if package == "websockets":  # the first missing package is named: mcp must be there
        pytest.importorskip("mcp", reason="mcp is not installed (the service extra)")
    code = (
        f"import sys; sys.modules[{package!r}] = None\n"
        "from harness.cli import main\n"
        "sys.exit(main(['serve', '--port', '0']))\n"
    )
    env = {"HARNESS_CHAIN_TOKENS": '{"t": {"user": "ada", "organization": "acme"}}', "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env={**env, **_pythonpath()}
    )
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert done.stderr.strip() == (
        f"harness serve: python -m harness serve needs the {package!r} package, which is not installed. "
        'Install it with: pip install "mockllm-harness[service]"'
    )


def _pythonpath() -> dict[str, str]:
    return {"PYTHONPATH": str(ROOT)}


def test_help_lists_every_subcommand_with_a_line_and_each_has_its_own_help(
    capsys: pytest.CaptureFixture[str],
) -> None:
    parser = _parser()
    verbs = next(a for a in parser._actions if a.dest == "verb")
    with pytest.raises(SystemExit) as done:
        parser.parse_args(["--help"])
    assert done.value.code == 0
    top = capsys.readouterr().out
    for name, sub in verbs.choices.items():
        help_line = next(c.help for c in verbs._choices_actions if c.dest == name)
        assert help_line and name in top, name
        with pytest.raises(SystemExit) as done:
            sub.parse_args(["--help"])
        assert done.value.code == 0
        assert sub.description, name
        assert capsys.readouterr().out.startswith(f"usage: python -m harness {name}")
    assert {"replay", "diff", "review", "migrate-goldens", "serve"} <= set(verbs.choices)
