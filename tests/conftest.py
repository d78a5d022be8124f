"""Fixtures shared by the project's own tests: the mock behind each door.

``mock_server_url`` is the URL of the plugin's session server (``python -m mockllm serve
--port 0`` on 127.0.0.1, stopped by its PID). ``door`` is parametrised over the two ways in —
the in-process transport and the loopback server — and builds official SDK clients
pointed at the mock either way.
"""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
import json
import subprocess
import sys
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from harness.plugin.fixtures import MockLLMFixture, MockLLMServer
    from mockllm._engine import MockLLM

# Nothing of the harness or the mock is imported here, where xdist's controller, which runs no
# test, would import it too (about 1 s of CPU before it starts the workers): the fixtures
# below import what they use, and ``_inner_run_imports`` what pytester's runs share.


@pytest.fixture(scope="session")
def mock_server_url(mockllm_server_process: MockLLMServer) -> str:
    """Base URL (no /v1) of a mock server subprocess on 127.0.0.1: the plugin's session
    server (its root mock, seed 0, strict), so that a worker starts one server, not two."""
    return mockllm_server_process.base_url


# An inner run's ``mockllm_server`` tests can play on this session's server (each test in a
# server-side session of its own, as on the plugin's own server) instead of on one the inner
# run starts: a start costs about a second of CPU. Starting the plugin's own server is
# tested in test_plugin.py and test_server_fixture.py.
SHARED_SERVER_CONFTEST = """
import pytest
from harness.plugin.fixtures import MockLLMServer

@pytest.fixture(scope="session")
def mockllm_server_process():
    server = MockLLMServer({url!r})
    yield server
    server.close()
"""


@pytest.fixture
def shared_server_conftest(mock_server_url: str) -> str:
    """Source for an inner run's conftest.py: its ``mockllm_server_process`` is this
    session's server, which its ``mockllm_server`` tests then use."""
    return SHARED_SERVER_CONFTEST.format(url=mock_server_url)


# What a fresh interpreter has loaded, step after step (each step's packages include those of
# the steps before it): what pytest imports in every run of every project that has the package
# installed (the plugin module), then the core's modules. One interpreter serves the import
# checks of test_optional_dependencies.py and test_exported_members.py.
FRESH_IMPORT_STEPS = {
    "plugin": "import pytest, harness.plugin.hooks",
    "core": "import mockllm, harness.plugin.fixtures, harness.scenarios.model",
}


@pytest.fixture(scope="session")
def fresh_imports() -> dict[str, set[str]]:
    """The top-level packages in ``sys.modules`` after each of ``FRESH_IMPORT_STEPS``, run
    one after the other in a fresh interpreter."""
    report = "import json, sys\nprint(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))"
    probe = "\n".join(f"{code}\n{report}" for code in FRESH_IMPORT_STEPS.values())
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    lines = result.stdout.splitlines()[-len(FRESH_IMPORT_STEPS) :]
    return {step: set(json.loads(line)) for step, line in zip(FRESH_IMPORT_STEPS, lines, strict=True)}


class Door:
    """One way into the mock, for the project's tests: the plugin's client builders
    (``harness.plugin.fixtures``) plus the journal as JSON-like dicts."""

    def __init__(self, name: str, clients: MockLLMFixture | MockLLMServer) -> None:
        self.name = name
        self.clients = clients
        self.base_url = clients.base_url
        from harness.plugin.fixtures import MockLLMFixture

        self.mock: MockLLM | None = clients.mock if isinstance(clients, MockLLMFixture) else None
        self.openai = clients.openai
        self.anthropic = clients.anthropic

    def journal(self) -> list[dict[str, Any]]:
        """The journal as JSON-like dicts, newest last."""
        return [e.model_dump(mode="json") for e in self.clients.journal]

    def reset_journal(self) -> None:
        """Start the journal afresh, so that it holds only this test's requests.

        The server's journal lives as long as the session's server; reading a full one
        costs more than the rest of a test, so each test resets it instead of skipping past.
        """
        if self.mock is not None:
            self.mock.reset()
        else:
            self.clients.reset()

    def close(self) -> None:
        self.clients.close()


@pytest.fixture(params=["in-process", "server"])
def door(request: pytest.FixtureRequest) -> Iterator[Door]:
    """The mock behind each door in turn: in-process transport, then loopback server."""
    from harness.plugin.fixtures import MockLLMFixture, MockLLMServer
    from mockllm._engine import MockLLM

    if request.param == "in-process":
        d = Door("in-process", MockLLMFixture(MockLLM()))
    else:
        d = Door("server", MockLLMServer(request.getfixturevalue("mock_server_url"), pid=-1))
    try:
        yield d
    finally:
        d.close()


# The inner runs load only the plugins they test (ours, syrupy's, xdist's...): pytest-randomly
# would reorder them; LangSmith's plugin (langchain-core brings langsmith) costs every pytest
# start about a second of CPU importing its client, and hypothesis's imports all of hypothesis
# at the end of every session (about 2 s of a `harness replay` process's 9: pytest rewrites
# the asserts of its 75 modules anew in each process), for nothing any inner run uses.
PYTESTER_INI = """
[pytest]
addopts = -p no:cacheprovider -p no:randomly -p no:langsmith_plugin -p no:hypothesispytest
filterwarnings =
    error
    # The plugin under test is imported by the outer session already.
    ignore::pytest.PytestAssertRewriteWarning
    # pytest-asyncio, where installed, asks for its loop scope (as in pyproject.toml).
    ignore:The configuration option "asyncio_default_fixture_loop_scope" is unset:pytest.PytestDeprecationWarning
# As this repository's own pyproject does: scenario files live under scenarios/.
mockllm_scenario_dirs = scenarios
"""


# What an inner run imports only when it needs it: the SDKs (openai, anthropic, httpx2, and
# google-genai, which a `protocols: all` scenario plays Gemini with: ~1 s of CPU), what the
# openai SDK sends through over a socket (httpcore2), jsonschema (the mock checks declared
# tools' arguments with it) and the bundled scenario runners' systems. pytester drops every module an in-process run
# imported when the run ends, so each run that is the first to need them would import them
# again: about 2 s of CPU a run, ~3,700 modules. Imported once by the outer session before
# pytester's first snapshot, they are kept, and every inner run shares them.
#
# The plugin imports the harness only when a fixture or a scenario file needs it, while a
# package keeps its submodules as attributes: a second run's ``from harness import
# invariants`` would get the first run's copy beside fresh copies of the plugin's lazy
# imports (two ``Event`` classes). Imported once by the outer session, they are the outer
# session's and every inner run shares them.
INNER_RUN_IMPORTS = (
    "harness.invariants",
    "harness.plugin.scenario_item",
    "harness.plugin.fixtures",
    "mockllm._engine",
    "openai",
    "anthropic",
    "httpx2",
    "google.genai",
    "httpcore2",
    "jsonschema",
    "harness.scenarios.runners",
    "harness.systems.chain",
    "harness.systems.planner",
)


@pytest.fixture(scope="session")
def _inner_run_imports() -> None:
    for name in INNER_RUN_IMPORTS:
        try:
            importlib.import_module(name)
        except ImportError:  # not installed here (the lean environment has no httpx2)
            pass


class _InstalledDistribution(importlib.metadata.Distribution):
    """An installed distribution whose metadata files are read and parsed once a session."""

    def __init__(self, found: importlib.metadata.Distribution) -> None:
        self._found = found
        self._texts: dict[str, str | None] = {}

    def read_text(self, filename: str) -> str | None:
        if filename not in self._texts:
            self._texts[filename] = self._found.read_text(filename)
        return self._texts[filename]

    def locate_file(self, path: Any) -> Any:
        return self._found.locate_file(path)

    @property
    def _normalized_name(self) -> str:
        # How importlib.metadata.entry_points() tells distributions apart: the found
        # distribution's takes it from its folder's name, the default parses the metadata.
        return self._found._normalized_name  # type: ignore[attr-defined]

    @functools.cached_property
    def metadata(self) -> Any:
        return super().metadata

    @functools.cached_property
    def entry_points(self) -> importlib.metadata.EntryPoints:
        return super().entry_points

    @functools.cached_property
    def files(self) -> list[importlib.metadata.PackagePath] | None:
        return super().files


_find_distributions = importlib.metadata.distributions


@functools.cache
def _every_installed_distribution() -> tuple[importlib.metadata.Distribution, ...]:
    return tuple(_InstalledDistribution(found) for found in _find_distributions())


def _installed_distributions(**search: Any) -> Iterable[importlib.metadata.Distribution]:
    # A search by name or path (nothing pytest does) looks afresh.
    return _find_distributions(**search) if search else _every_installed_distribution()


# Plugins no inner run uses (this environment's and pytest's own): registering each, its
# hooks, options and fixtures, is about a third of a small run's CPU (~30 ms a run). Given to
# every pytest an inner run starts, in this process or not (``PYTEST_ADDOPTS``). The plugins
# the project's tests are about (ours, syrupy, xdist, hypothesis where an example uses it)
# stay, and so does everything a user's run needs of pytest (capture, warnings, tmp_path...).
UNUSED_PLUGINS = (
    "-p no:anyio -p no:respx -p no:platformdirs -p no:doctest -p no:junitxml -p no:pastebin -p no:legacypath "
    "-p no:stepwise -p no:setuponly -p no:setupplan -p no:unittest -p no:subtests"
)


# Each inner run starts as pytest starts: it lists the installed distributions twice, to load
# the ``pytest11`` entry points and to mark their modules for assertion rewriting, reading and
# parsing each one's entry_points.txt and RECORD (~25 ms of CPU a run, a third of a small
# run's). Nothing is installed during the session, so the inner runs share one reading: the
# same plugins are found and loaded by their entry points, as in a user's run.
@pytest.fixture
def pytester(_inner_run_imports: None, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """pytest's ``pytester``, taking its module snapshot after ``INNER_RUN_IMPORTS``, its
    runs reading the installed distributions' metadata once a session, without
    ``UNUSED_PLUGINS``."""
    monkeypatch.setattr(importlib.metadata, "distributions", _installed_distributions)
    monkeypatch.setenv("PYTEST_ADDOPTS", UNUSED_PLUGINS)
    return pytester


@pytest.fixture
def strict_pytester(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """``pytester`` with the project's strictness (warnings are errors) in its ini.

    The inner run is a session of its own, not an xdist worker, even when the outer
    suite runs under ``-n``: syrupy keeps its report to itself in a worker.
    """
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    pytester.makeini(PYTESTER_INI)
    return pytester
