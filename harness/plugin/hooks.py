"""The pytest plugin (entry point ``pytest11``): fixtures, a marker and options.

Fixtures:

- ``mockllm`` — an in-process mock for one test: ready official clients
  (``mockllm.openai()``, ``mockllm.anthropic()``, async with ``is_async=True``), plain
  ``httpx``/``httpx2`` clients, base URLs, the request journal and ``explain``.
  At teardown the test fails if a scripted instruction was never used.
- ``mockllm_server`` — one loopback server (``python -m mockllm serve``) per session,
  for real streaming over sockets.
- ``mockllm_agent`` — builds agent runners (``harness.agent``) on the ``mockllm`` mock.
- ``golden`` — syrupy's ``snapshot`` storing event tables under ``golden/`` (events as
  dicts, pydantic models, dataclasses or ``Event``s; see docs/goldens.md). It refuses
  to record a mock fallback reply unless the marker says ``allow_fallback=True``.

Scenario files under a ``scenarios/`` folder are collected as test items (see
``harness.plugin.scenario_items``).

Configure a test with the marker of the same name::

    @pytest.mark.mockllm(seed=3, lenient=True, allow_unused_steps=True, allow_fallback=True)

Options (all prefixed): ``--mockllm-seed``, ``--mockllm-lenient``,
``--mockllm-allow-unused-steps``, ``--mockllm-golden-dir`` (ini ``mockllm_golden_dir``),
and the scenario options of ``harness.plugin.scenario_items``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from harness.agent import AgentRunner
from harness.golden.assertion import GoldenAssertion
from harness.golden.location import GOLDEN_DIR_INI, GOLDEN_DIR_OPTION, golden_extension
from harness.plugin.fixtures import MockLLMFixture, MockLLMServer, start_server
from harness.plugin import hookspecs
from harness.plugin.scenario_items import add_scenario_options, pytest_collect_file, show_goldens_to_syrupy
from mockllm.engine import MockLLM

__all__ = ["MockLLMFixture", "MockLLMServer", "pytest_collect_file"]

MARKER = "mockllm"
_MARKER_OPTIONS = {"seed", "lenient", "allow_unused_steps", "allow_fallback"}


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("mockllm", "mockllm: deterministic mock LLM and agent harness")
    group.addoption("--mockllm-seed", type=int, default=0, metavar="N",
                    help="seed for the words the mock generates (default 0)")
    group.addoption("--mockllm-lenient", action="store_true", default=False,
                    help="accept tool calls and tool results that do not pair up")
    group.addoption("--mockllm-allow-unused-steps", action="store_true", default=False,
                    help="do not fail a test whose scripted instructions were not all used")
    group.addoption(GOLDEN_DIR_OPTION, default=None, metavar="DIR",
                    help=f"where golden files live (default: ini {GOLDEN_DIR_INI}, else <rootdir>/golden)")
    add_scenario_options(group)
    parser.addini(GOLDEN_DIR_INI, "where golden files live, relative to the ini file (default: <rootdir>/golden)")


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(hookspecs)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}(seed=0, lenient=False, allow_unused_steps=False, allow_fallback=False): "
        "configure the mockllm fixture and the golden fixture.",
    )
    show_goldens_to_syrupy(config)


def _settings(request: pytest.FixtureRequest) -> dict[str, Any]:
    config = request.config
    settings: dict[str, Any] = {
        "seed": config.getoption("--mockllm-seed"),
        "lenient": config.getoption("--mockllm-lenient"),
        "allow_unused_steps": config.getoption("--mockllm-allow-unused-steps"),
        "allow_fallback": False,
    }
    marker = request.node.get_closest_marker(MARKER)
    if marker is not None:
        if marker.args:
            raise TypeError(f"@pytest.mark.{MARKER} takes keyword arguments only, got {marker.args!r}")
        unknown = set(marker.kwargs) - _MARKER_OPTIONS
        if unknown:
            raise TypeError(f"@pytest.mark.{MARKER} got unknown options {sorted(unknown)}; "
                            f"use {sorted(_MARKER_OPTIONS)}")
        settings.update(marker.kwargs)
    return settings


@pytest.fixture
def mockllm(request: pytest.FixtureRequest) -> Iterator[MockLLMFixture]:
    """An in-process mock LLM for this test (see ``MockLLMFixture``)."""
    settings = _settings(request)
    fixture = MockLLMFixture(MockLLM(seed=settings["seed"], lenient=settings["lenient"]))
    try:
        yield fixture
        if not settings["allow_unused_steps"]:
            fixture.assert_all_steps_used()
    finally:
        fixture.close()


@pytest.fixture(scope="session")
def mockllm_server(tmp_path_factory: pytest.TempPathFactory,
                   pytestconfig: pytest.Config) -> Iterator[MockLLMServer]:
    """One mock server on 127.0.0.1 for the session, stopped by its PID at the end."""
    with start_server(tmp_path_factory.mktemp("mockllm-server"),
                      seed=pytestconfig.getoption("--mockllm-seed"),
                      lenient=pytestconfig.getoption("--mockllm-lenient")) as server:
        yield server


@pytest.fixture
def mockllm_agent(mockllm: MockLLMFixture) -> Iterator[Callable[..., AgentRunner]]:
    """Builds ``harness.agent.AgentRunner``s on this test's in-process mock::

        runner = mockllm_agent("openai-chat", tools=tools)
        result = runner.run_sync(prompt, "session-1")
    """
    runners: list[AgentRunner] = []

    def make(protocol: str = "anthropic-messages", **runner_options: Any) -> AgentRunner:
        runners.append(AgentRunner(mockllm.model_client(protocol), **runner_options))
        return runners[-1]

    yield make
    for runner in runners:
        runner.close()


@pytest.fixture
def golden(snapshot: Any, request: pytest.FixtureRequest) -> GoldenAssertion:
    """syrupy's ``snapshot`` storing event tables under ``golden/``; it refuses a run
    that got the mock's fallback reply (in the events or in this test's ``mockllm``
    journal) unless ``@pytest.mark.mockllm(allow_fallback=True)``."""
    def journal() -> Any:
        mock = request.node.funcargs.get("mockllm") if hasattr(request.node, "funcargs") else None
        return mock.journal if isinstance(mock, MockLLMFixture) else ()

    return GoldenAssertion.wrap(snapshot, golden_extension(request.config),
                                journal=journal, allow_fallback=bool(_settings(request)["allow_fallback"]))
