"""The pytest plugin (entry point ``pytest11``): fixtures, a marker and options.

Fixtures:

- ``mockllm`` — an in-process mock for one test: ready official clients
  (``mockllm.openai()``, ``mockllm.anthropic()``, async with ``is_async=True``), plain
  ``httpx``/``httpx2`` clients, base URLs, ``patch_env``, ``script``, the request
  journal and ``explain``. At teardown the test fails if a request got the fallback
  reply or an unscripted 4xx, a scripted step was never used, a scripted tool call
  was not declared by the request, a scripted reply is one no provider could give
  to its request, or (replayed, ``record=True``) a recorded exchange was never
  requested (the verdict's rule, ``mockllm._verdict``; see
  docs/strictness.md). While it runs, a request to a provider's default host
  (OpenAI's, Anthropic's, Gemini's, Azure's, a local Ollama's; boto3's to AWS Bedrock)
  is refused and fails the test, naming the host.
- ``mockllm_server`` — the same over sockets: one loopback server (``python -m mockllm
  serve``) per session, a server-side session per test; ``mockllm_server_process`` is
  the shared server itself.
- ``mockllm_late_requests`` — (session) the requests that reached a test's mock after
  the test ended (``harness.plugin.late_requests``): each fails the run at the next
  check (the next test using either fixture, or the session's end), naming its test.
- ``mockllm_agent`` — builds agent runners (``harness.systems.agent``) on the ``mockllm`` mock.
- ``golden`` — syrupy's ``snapshot`` storing event tables under ``golden/`` (events as
  dicts, pydantic models, dataclasses or ``Event``s; see docs/goldens.md). It refuses
  to record a mock fallback reply unless the marker says ``allow_fallback=True``.

Scenario files the project opted in (``*.scenario.yaml``, ``mockllm_scenario_dirs``) are
collected as test items (see ``harness.plugin.scenario_collection``).

Configure a test with the marker of the same name::

    @pytest.mark.mockllm(seed=3, lenient=True, allow_fallback=True, allow_unused_steps=True,
                         allow_undeclared_tools=True, allow_impossible_replies=True,
                         allow_real_providers=True, stream={"text": {"size": 1}})

Options (all prefixed, each also an ini option; see ``harness.plugin.config``):
``--mockllm-seed``, ``--mockllm-lenient``, ``--mockllm-allow-fallback``,
``--mockllm-allow-unused-steps``, ``--mockllm-allow-undeclared-tools``, ``--mockllm-allow-impossible-replies``,
``--mockllm-allow-real-providers``, ``--mockllm-stream-shape``, ``--mockllm-golden-dir``, ``--mockllm-review-report``, and the scenario options
of ``harness.plugin.scenario_collection``.

pytest imports this module in every run of every project that has the package
installed, so it imports only pytest and the plugin's settings: each fixture imports
the mock, the SDKs or the agent when a test asks for it (docs/performance.md, "Plugin
startup").
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import pytest

from harness.exceptions import missing_extra, not_installed
from harness.plugin import hookspecs
from harness.plugin.config import MARKER, add_options, base_settings, settings_for
from harness.plugin.recording import (
    add_recording_options,
    mock_for,
    mockllm_recording_config,
    recording_server,
    recording_session,
    unserved_exchanges,
)
from harness.plugin.review_report import add_review_report_option, register_review_report
from harness.plugin.scenario_collection import (
    add_scenario_options,
    pytest_collect_file,
    pytest_collection_modifyitems,
    pytest_terminal_summary,
    show_goldens_to_syrupy,
)

if TYPE_CHECKING:
    from harness.golden.assertion import GoldenAssertion
    from harness.plugin.fixtures import MockLLMFixture, MockLLMServer
    from harness.plugin.late_requests import LateRequests
    from harness.systems.agent import AgentRunner

__all__ = [
    "mockllm_recording_config",
    "pytest_collect_file",
    "pytest_collection_modifyitems",
    "pytest_terminal_summary",
]


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)
    add_scenario_options(parser.getgroup("mockllm"))
    add_review_report_option(parser.getgroup("mockllm"))
    add_recording_options(parser)


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(hookspecs)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}(seed=0, lenient=False, allow_fallback=False, allow_unused_steps=False, "
        "allow_undeclared_tools=False, allow_impossible_replies=False, allow_real_providers=False, record=False, "
        "stream=None): "
        "configure the mockllm and mockllm_server fixtures for this test.",
    )
    show_goldens_to_syrupy(config)
    register_review_report(config)


@pytest.fixture
def mockllm(request: pytest.FixtureRequest) -> Iterator[MockLLMFixture]:
    """An in-process mock LLM for this test (see ``MockLLMFixture``); the providers'
    default hosts are refused while it runs (unless it records from them), and the
    verdict's rule applies at teardown."""
    from harness.plugin.fixtures import MockLLMFixture, refusing_provider_hosts
    from harness.plugin.late_requests import TestScope

    settings = settings_for(request.node)
    recording = recording_session(request, settings.record)
    late: LateRequests = request.getfixturevalue("mockllm_late_requests")
    fixture = MockLLMFixture(mock_for(settings, recording))
    fixture.scope = scope = TestScope(late, request.node.nodeid)
    # A test that records reaches its upstream on purpose: the recording session is the
    # one door to it, and it writes nothing a real key could leak into.
    guard = (
        dataclasses.replace(settings, allow_real_providers=True)
        if recording is not None and recording.records
        else settings
    )
    try:
        with refusing_provider_hosts(guard, "mockllm") as refused:
            yield fixture
        scope.end()  # what comes after this is late: the test and its fixtures are done with it
        if recording is not None:
            recording.save()
        fixture.verify(settings, refused, unserved_exchanges(recording))
    finally:
        scope.end()
        fixture.close()
    late.check()


@pytest.fixture(scope="session")
def mockllm_late_requests(pytestconfig: pytest.Config) -> Iterator[LateRequests]:
    """The requests that reached a test's mock after the test ended
    (``harness.plugin.late_requests``): each test using ``mockllm`` or ``mockllm_server``
    fails at teardown on those of the tests before it, and this fixture's teardown on
    those that came after the last."""
    from harness.plugin.fixtures import tls_context
    from harness.plugin.late_requests import late_requests

    late = late_requests(pytestconfig)
    yield late
    late.collect(tls_context())
    late.check()


@pytest.fixture(scope="session")
def mockllm_server_process(
    tmp_path_factory: pytest.TempPathFactory, pytestconfig: pytest.Config
) -> Iterator[MockLLMServer]:
    """The one mock server on 127.0.0.1 for the session, stopped by its PID at the end.

    Shared by every test and unchecked; tests use ``mockllm_server``, which is scoped
    to the test. This one is for session-scoped fixtures of your own.
    """
    from harness.plugin.fixtures import start_server, tls_context
    from harness.plugin.late_requests import late_requests

    settings = base_settings(pytestconfig)
    with start_server(
        tmp_path_factory.mktemp("mockllm-server"), seed=settings.seed, lenient=settings.lenient
    ) as server:
        yield server
        late = late_requests(pytestconfig)  # before the server stops with what it holds
        late.collect(tls_context())
        late.check()


@pytest.fixture
def mockllm_server(request: pytest.FixtureRequest) -> Iterator[MockLLMServer]:
    """This test's mock on the session's loopback server: a server-side session of its
    own (journal, scripts, the marker's settings), checked at teardown like ``mockllm``.
    A test marked ``record=True`` gets a loopback server of its own instead, answered by
    its recording file in the record mode (``harness.plugin.recording``)."""
    from harness.plugin.fixtures import refusing_provider_hosts
    from harness.plugin.late_requests import TestScope

    settings = settings_for(request.node)
    recording = recording_session(request, settings.record)
    process: MockLLMServer | None = None
    if recording is None:
        process = request.getfixturevalue("mockllm_server_process")
        serving = process.session(seed=settings.seed, lenient=settings.lenient, stream=settings.stream)
    else:  # answered by the test's recording file: a server of its own (harness.plugin.recording)
        serving = recording_server(recording, settings)
    late: LateRequests = request.getfixturevalue("mockllm_late_requests")  # after the server: checked before it stops
    with serving as server:
        server.scope = scope = TestScope(late, request.node.nodeid, server.base_url)
        if process is not None:  # once the session is deleted (after this teardown), its model calls are late
            request.addfinalizer(functools.partial(late.session_closed, process, server, request.node.nodeid))
        guard = (
            dataclasses.replace(settings, allow_real_providers=True)
            if recording is not None and recording.records
            else settings
        )
        with refusing_provider_hosts(guard, "mockllm_server") as refused:
            yield server
        scope.end()
        if recording is not None:
            recording.save()
        server.verify(settings, refused, unserved_exchanges(recording))


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
    that got the mock's fallback reply (the findings of this test's ``mockllm`` or
    ``mockllm_server``) unless ``@pytest.mark.mockllm(allow_fallback=True)``, and
    normalises the ids that mock minted (none in a test without one). Needs the ``golden``
    extra (syrupy); without it the test errors with the install command."""
    __tracebackhide__ = True  # the message says it all; the fixture's source would not
    try:
        from harness.golden.assertion import GoldenAssertion
        from harness.golden.refusal import FallbackRefusal
    except ModuleNotFoundError as exc:
        if not_installed(exc) != "syrupy":
            raise
        raise missing_extra("syrupy", needed_by="the golden fixture") from None
    from harness.golden.location import golden_extension

    snapshot = request.getfixturevalue("snapshot")  # syrupy's, asked for once syrupy is known

    from mockllm import MintedIds

    def test_mock() -> MockLLMFixture | MockLLMServer | None:
        funcargs = getattr(request.node, "funcargs", {})
        mock = funcargs.get("mockllm") or funcargs.get("mockllm_server")
        if mock is None:
            return None
        # Imported by the mock fixture that made ``mock``: a golden test without a mock
        # does not pay for the mock's clients (httpx, the engine: ~0.3 s of CPU a process).
        from harness.plugin.fixtures import MockLLMFixture, MockLLMServer

        return mock if isinstance(mock, (MockLLMFixture, MockLLMServer)) else None

    def findings() -> Any:
        # The mock's typed findings, which never forget a fallback (the journal's ring may).
        mock = test_mock()
        return mock.findings() if mock is not None else None

    def minted() -> MintedIds:
        mock = test_mock()
        return MintedIds.of(mock.journal) if mock is not None else MintedIds()

    refusal = FallbackRefusal(findings=findings, allow_fallback=settings_for(request.node).allow_fallback)
    return GoldenAssertion.wrap(snapshot, golden_extension(request.config), refusal, minted)
