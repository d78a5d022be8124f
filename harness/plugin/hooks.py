"""The pytest plugin (entry point ``pytest11``): fixtures, a marker and options.

Fixtures:

- ``mockllm`` — an in-process mock for one test: ready official clients
  (``mockllm.openai()``, ``mockllm.anthropic()``, async with ``is_async=True``), plain
  ``httpx``/``httpx2`` clients, base URLs, ``patch_env``, ``script``, the request
  journal and ``explain``. At teardown the test fails if a request got the fallback
  reply or an unscripted 4xx (``harness.plugin.strict``), or a scripted step was never used.
- ``mockllm_server`` — the same over sockets: one loopback server (``python -m mockllm
  serve``) per session, a server-side session per test; ``mockllm_server_process`` is
  the shared server itself.
- ``mockllm_agent`` — builds agent runners (``harness.systems.agent``) on the ``mockllm`` mock.
- ``golden`` — syrupy's ``snapshot`` storing event tables under ``golden/`` (events as
  dicts, pydantic models, dataclasses or ``Event``s; see docs/goldens.md). It refuses
  to record a mock fallback reply unless the marker says ``allow_fallback=True``.

Scenario files the project opted in (``*.scenario.yaml``, ``mockllm_scenario_dirs``) are
collected as test items (see ``harness.plugin.scenario_collection``).

Configure a test with the marker of the same name::

    @pytest.mark.mockllm(seed=3, lenient=True, allow_fallback=True, allow_unused_steps=True,
                         stream={"text": {"size": 1}})

Options (all prefixed, each also an ini option; see ``harness.plugin.config``):
``--mockllm-seed``, ``--mockllm-lenient``, ``--mockllm-allow-fallback``,
``--mockllm-allow-unused-steps``, ``--mockllm-stream-shape``, ``--mockllm-golden-dir``, ``--mockllm-review-report``, and the scenario options
of ``harness.plugin.scenario_collection``.

pytest imports this module in every run of every project that has the package
installed, so it imports only pytest and the plugin's settings: each fixture imports
the mock, the SDKs or the agent when a test asks for it (docs/performance.md, "Plugin
startup").
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import pytest

from harness.exceptions import missing_extra, not_installed
from harness.plugin import hookspecs
from harness.plugin.config import MARKER, Settings, add_options, base_settings, settings_for
from harness.plugin.review_report import add_review_report_option, register_review_report
from harness.plugin.scenario_collection import add_scenario_options, pytest_collect_file, show_goldens_to_syrupy

if TYPE_CHECKING:
    from harness.golden.assertion import GoldenAssertion
    from harness.plugin.fixtures import MockLLMFixture, MockLLMServer
    from harness.systems.agent import AgentRunner

__all__ = ["pytest_collect_file"]


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)
    add_scenario_options(parser.getgroup("mockllm"))
    add_review_report_option(parser.getgroup("mockllm"))


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(hookspecs)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}(seed=0, lenient=False, allow_fallback=False, allow_unused_steps=False, stream=None): "
        "configure the mockllm and mockllm_server fixtures for this test.",
    )
    show_goldens_to_syrupy(config)
    register_review_report(config)


def _check(fixture: MockLLMFixture | MockLLMServer, settings: Settings) -> None:
    if not settings.allow_fallback:
        fixture.assert_all_requests_scripted()
    if not settings.allow_unused_steps:
        fixture.assert_all_steps_used()


@pytest.fixture
def mockllm(request: pytest.FixtureRequest) -> Iterator[MockLLMFixture]:
    """An in-process mock LLM for this test (see ``MockLLMFixture``)."""
    from harness.plugin.fixtures import MockLLMFixture
    from mockllm import MockLLM

    settings = settings_for(request.node)
    fixture = MockLLMFixture(MockLLM(seed=settings.seed, lenient=settings.lenient, stream=settings.stream))
    try:
        yield fixture
        _check(fixture, settings)
    finally:
        fixture.close()


@pytest.fixture(scope="session")
def mockllm_server_process(
    tmp_path_factory: pytest.TempPathFactory, pytestconfig: pytest.Config
) -> Iterator[MockLLMServer]:
    """The one mock server on 127.0.0.1 for the session, stopped by its PID at the end.

    Shared by every test and unchecked; tests use ``mockllm_server``, which is scoped
    to the test. This one is for session-scoped fixtures of your own.
    """
    from harness.plugin.fixtures import start_server

    settings = base_settings(pytestconfig)
    with start_server(
        tmp_path_factory.mktemp("mockllm-server"), seed=settings.seed, lenient=settings.lenient
    ) as server:
        yield server


@pytest.fixture
def mockllm_server(mockllm_server_process: MockLLMServer, request: pytest.FixtureRequest) -> Iterator[MockLLMServer]:
    """This test's mock on the session's loopback server: a server-side session of its
    own (journal, scripts, the marker's settings), checked at teardown like ``mockllm``."""
    settings = settings_for(request.node)
    with mockllm_server_process.session(seed=settings.seed, lenient=settings.lenient, stream=settings.stream) as server:
        yield server
        _check(server, settings)


@pytest.fixture
def mockllm_agent(mockllm: MockLLMFixture) -> Iterator[Callable[..., AgentRunner]]:
    """Builds ``harness.systems.agent.AgentRunner``s on this test's in-process mock::

    runner = mockllm_agent("openai-chat", tools=tools)
    result = runner.run_sync(prompt, "session-1")
    """
    from harness.systems.agent import AgentRunner

    runners: list[AgentRunner] = []

    def make(protocol: str = "anthropic-messages", **runner_options: Any) -> AgentRunner:
        runners.append(AgentRunner(mockllm.model_client(protocol), **runner_options))
        return runners[-1]

    yield make
    for runner in runners:
        runner.close()


@pytest.fixture
def golden(request: pytest.FixtureRequest) -> GoldenAssertion:
    """syrupy's ``snapshot`` storing event tables under ``golden/``; it refuses a run
    that got the mock's fallback reply (in the events or in this test's ``mockllm``
    journal) unless ``@pytest.mark.mockllm(allow_fallback=True)``. Needs the ``golden``
    extra (syrupy); without it the test errors with the install command."""
    __tracebackhide__ = True  # the message says it all; the fixture's source would not
    try:
        from harness.golden.assertion import GoldenAssertion
    except ModuleNotFoundError as exc:
        if not_installed(exc) != "syrupy":
            raise
        raise missing_extra("syrupy", needed_by="the golden fixture") from None
    from harness.golden.location import golden_extension
    from harness.plugin.fixtures import MockLLMFixture

    snapshot = request.getfixturevalue("snapshot")  # syrupy's, asked for once syrupy is known

    def journal() -> Any:
        mock = request.node.funcargs.get("mockllm") if hasattr(request.node, "funcargs") else None
        return mock.journal if isinstance(mock, MockLLMFixture) else ()

    return GoldenAssertion.wrap(
        snapshot,
        golden_extension(request.config),
        journal=journal,
        allow_fallback=settings_for(request.node).allow_fallback,
    )
