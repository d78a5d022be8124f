"""Configuration from ``[tool.pytest.ini_options]``, flags overriding it, and scenario
collection only where a project opted in."""

from __future__ import annotations

from pathlib import Path

import pytest

SCENARIO = Path(__file__).parents[3] / "scenarios" / "simple_message.yaml"

SEED_TEST = """
from mockllm import InstructionChain

def test_words(mockllm):
    prompt = InstructionChain(instruction_chain=[{"messages": [{"text_message": {"length": 6}}]}]).tagged("x")
    reply = mockllm.openai().chat.completions.create(model="m", messages=[{"role": "user", "content": prompt}])
    print("WORDS:", mockllm.mock.seed, reply.choices[0].message.content)
"""


def _ini(pytester: pytest.Pytester, *lines: str) -> None:
    pytester.makepyprojecttoml(
        "\n".join(
            [
                "[tool.pytest.ini_options]",
                # Without LangSmith's plugin (langchain-core brings it): an in-process run imports
                # its client anew each time, about 0.7 s of CPU (as tests/conftest.py's PYTESTER_INI).
                'addopts = ["-p", "no:cacheprovider", "-p", "no:langsmith_plugin"]',
                'filterwarnings = ["error", "ignore::pytest.PytestAssertRewriteWarning",',
                "    'ignore:The configuration option \"asyncio_default_fixture_loop_scope\" is unset:pytest.PytestDeprecationWarning']",
                *lines,
            ]
        )
    )


def test_ini_options_configure_the_mock_and_flags_override_them(pytester: pytest.Pytester) -> None:
    _ini(pytester, "mockllm_seed = 5")
    pytester.makepyfile(test_seed=SEED_TEST)
    pytester.runpytest("-s").stdout.fnmatch_lines(["*WORDS: 5 *"])
    pytester.runpytest("-s", "--mockllm-seed", "2").stdout.fnmatch_lines(["*WORDS: 2 *"])

    _ini(pytester, 'mockllm_seed = "many"')
    result = pytester.runpytest()
    assert "ini option mockllm_seed must be a whole number, got 'many'" in result.stdout.str()


def test_a_misspelt_boolean_ini_option_is_named(pytester: pytest.Pytester) -> None:
    # pytest's own message, "invalid truth value 'flase'", names no option.
    _ini(pytester, 'mockllm_allow_fallback = "flase"')
    pytester.makepyfile(test_seed=SEED_TEST)
    result = pytester.runpytest()
    assert "ini option mockllm_allow_fallback must be true or false: invalid truth value 'flase'" in result.stdout.str()


def test_the_golden_dir_comes_from_the_ini(pytester: pytest.Pytester) -> None:
    _ini(pytester, 'mockllm_golden_dir = "snapshots/llm"')
    pytester.makepyfile(test_golden="def test_flow(golden):\n    assert [{'type': 'x'}] == golden\n")
    pytester.runpytest("--snapshot-update").assert_outcomes(passed=1)
    assert (pytester.path / "snapshots" / "llm" / "test_golden" / "test_flow.golden").is_file()


def test_yaml_files_are_scenarios_only_where_the_project_opts_in(pytester: pytest.Pytester) -> None:
    _ini(pytester)
    (pytester.path / "tests" / "scenarios").mkdir(parents=True)
    (pytester.path / "tests" / "scenarios" / "load.yaml").write_text("users: 100\nramp: 10s\n")
    pytester.makepyfile(test_plain="def test_ok():\n    pass\n")
    pytester.runpytest().assert_outcomes(passed=1)  # load.yaml is not touched

    (pytester.path / "tests" / "hello.scenario.yaml").write_text(SCENARIO.read_text())
    result = pytester.runpytest("--snapshot-update", "-v")
    result.stdout.fnmatch_lines(["*hello.scenario.yaml::hello.scenario?openai-chat? PASSED*"])
    assert "load.yaml" not in result.stdout.str()

    _ini(pytester, 'mockllm_scenario_dirs = ["tests/scenarios"]')
    result = pytester.runpytest()
    assert "tests/scenarios/load.yaml" in result.stdout.str()  # opted in: now it is a scenario


def test_a_wrong_marker_argument_is_a_usage_error_naming_it(pytester: pytest.Pytester) -> None:
    _ini(pytester)
    pytester.makepyfile(
        test_marker="""
        import pytest

        @pytest.mark.mockllm(seed="seven")
        def test_word_seed(mockllm):
            pass

        @pytest.mark.mockllm(lenient="yes")
        def test_string_flag(mockllm):
            pass

        @pytest.mark.mockllm(seed=True)
        def test_bool_seed(mockllm_server):
            pass

        @pytest.mark.mockllm(3)
        def test_positional(mockllm):
            pass

        @pytest.mark.mockllm(seed=4)
        def test_right(mockllm):
            assert mockllm.mock.seed == 4
        """
    )
    result = pytester.runpytest()
    result.assert_outcomes(passed=1, errors=4)
    result.stdout.fnmatch_lines_random(
        [
            "*UsageError: @pytest.mark.mockllm(seed='seven'): seed takes a whole number (int), got str",
            "*UsageError: @pytest.mark.mockllm(lenient='yes'): lenient takes True or False, got str",
            "*UsageError: @pytest.mark.mockllm(seed=True): seed takes a whole number (int), got bool",
            "*UsageError: @pytest.mark.mockllm takes keyword arguments only (seed=*), got the positional (3,)",
        ]
    )


def test_a_tests_mock_takes_every_mock_option_of_its_settings() -> None:
    from harness.plugin.config import Settings
    from harness.plugin.recording import mock_for
    from mockllm import Allowances, StreamShape

    settings = Settings(
        seed=7,
        lenient=True,
        allow_fallback=True,
        allow_unused_steps=True,
        allow_undeclared_tools=True,
        stream={"text": {"size": 1}},
    )
    mock = mock_for(settings, None)
    assert (mock.seed, mock.lenient) == (7, True)
    assert mock.allowances == Allowances(allow_fallback=True, allow_unused_steps=True, allow_undeclared_tools=True)
    assert mock.stream == StreamShape.model_validate({"text": {"size": 1}})
