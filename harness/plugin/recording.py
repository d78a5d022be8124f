"""Record real traffic once, replay it in every run: the plugin's record modes.

A test marked ``@pytest.mark.mockllm(record=True)`` gets a ``mockllm`` mock, or a
``mockllm_server`` server, answered by its own recording file, ``<test folder>/recordings/<module>/<test>.json`` (or under the
ini's ``mockllm_recordings_dir``), in the mode ``--mockllm-record-mode`` names (the
``mockllm_record_mode`` ini option; pytest-recording's modes, see
``mockllm._recording.session``):

- ``none`` (the default) — replay only; a request with no recording fails the test with
  the nearest recording and the fields that differ;
- ``once`` — record the file if it does not exist;
- ``new`` — replay what is recorded, record the rest;
- ``all`` — record everything again.

Recording sends requests to ``--mockllm-upstream [PROTOCOL=]URL`` (repeatable; ini
``mockllm_upstream``). ``--mockllm-record-scrub REGEX`` (ini ``mockllm_record_scrub``)
scrubs bodies before the write; override the ``mockllm_recording_config`` fixture in a
conftest to add callable scrubbers and matching normalisers.

``mockllm_server`` in a recording test is not the session's shared server process but a
server of the test's own, in a thread of the test process (``recording_server``,
``serve_in_thread``): the
recording session (the file, the mode, callable scrubbers) lives with the test, and the
server answers from it, forwarding to the upstream when it records, at a loopback URL
any client reaches — a subprocess, a non-Python client, the SDKs.

Imports only pytest until a marked test runs (plugin startup cost).
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from harness.plugin.config import Settings
    from harness.plugin.fixtures import MockLLMServer
    from mockllm import MockLLM, Problem, RecordingSession

__all__ = [
    "add_recording_options",
    "mockllm_recording_config",
    "recording_server",
    "recording_session",
    "serve_in_thread",
    "unserved_exchanges",
]

_MODES = ("none", "once", "new", "all")


def add_recording_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("mockllm")
    group.addoption(
        "--mockllm-record-mode",
        choices=_MODES,
        default=None,
        help="tests marked mockllm(record=True): none replays only (default), once records a missing file, "
        "new records requests not recorded yet, all records everything again",
    )
    group.addoption(
        "--mockllm-upstream",
        action="append",
        default=None,
        metavar="[PROTOCOL=]URL",
        help="where recording sends requests (repeatable: a URL for all, PROTOCOL=URL for one)",
    )
    group.addoption(
        "--mockllm-record-scrub",
        action="append",
        default=None,
        metavar="REGEX",
        help="replace REGEX with [scrubbed] in recorded bodies (repeatable)",
    )
    parser.addini("mockllm_record_mode", "default record mode (none, once, new, all)", default="none")
    parser.addini("mockllm_upstream", "where recording sends requests: [PROTOCOL=]URL lines", type="linelist")
    parser.addini("mockllm_record_scrub", "regular expressions scrubbed from recorded bodies", type="linelist")
    parser.addini("mockllm_recordings_dir", "where recording files live (default: recordings/ beside each test file)")


@pytest.fixture
def mockllm_recording_config() -> dict[str, Any]:
    """Override in a conftest: ``{"scrubbers": [regex or callable], "ignore": [field],
    "replace": [(regex, replacement)]}`` for the recording tests of its folder."""
    return {}


def unserved_exchanges(recording: RecordingSession | None) -> list[Problem]:
    """The exchanges of the test's recording file that no request of the test got, as
    ``unused_step`` problems (opt-out ``allow_unused_steps``): the app made fewer model
    calls than were recorded, as a tool loop that stopped sending the tool result back
    would, and replaying the calls it still makes would otherwise pass."""
    if recording is None:
        return []
    from mockllm import Problem, ProblemKind

    return [
        Problem(
            kind=ProblemKind.UNUSED_STEP,
            summary=f"recorded exchange {label} was never requested",
            detail=f"In {recording.path}. The test made fewer model calls than its recording holds (or changed "
            "one: a miss is listed then too). If it is meant to, record the file again: --mockllm-record-mode all "
            "(and --mockllm-upstream URL).",
        )
        for label in recording.unserved()
    ]


def _recording_path(item: pytest.Item) -> Path:
    folder = item.config.getini("mockllm_recordings_dir")
    module = item.path.stem
    name = re.sub(r"[^\w.-]+", "_", item.name).strip("_") + ".json"
    base = (item.config.rootpath / folder) if folder else item.path.parent / "recordings"
    return base / module / name


def recording_session(request: pytest.FixtureRequest, record: bool) -> RecordingSession | None:
    """This test's recording session, or None when it is not marked ``record=True``."""
    if not record:
        return None
    from mockllm import RecordingSession, RequestMatcher
    from mockllm.testing import DEFAULT_IGNORE, Upstreams

    config = request.config
    mode = config.getoption("--mockllm-record-mode") or config.getini("mockllm_record_mode")
    if mode not in _MODES:
        raise pytest.UsageError(f"ini option mockllm_record_mode must be one of {', '.join(_MODES)}; got {mode!r}")
    upstream = config.getoption("--mockllm-upstream") or config.getini("mockllm_upstream")
    scrubs = config.getoption("--mockllm-record-scrub") or config.getini("mockllm_record_scrub")
    options = request.getfixturevalue("mockllm_recording_config")
    try:
        upstreams = Upstreams.parse(list(upstream)) if upstream else None
        matcher = RequestMatcher(ignore=options.get("ignore", DEFAULT_IGNORE), replace=options.get("replace", ()))
    except ValueError as exc:
        raise pytest.UsageError(f"mockllm recording: {exc}") from None
    return RecordingSession(
        _recording_path(request.node),
        mode,
        upstreams=upstreams,
        matcher=matcher,
        scrubbers=[*scrubs, *options.get("scrubbers", ())],
    )


@contextlib.contextmanager
def recording_server(recording: RecordingSession, settings: Settings) -> Iterator[MockLLMServer]:
    """The ``mockllm_server`` of a recording test: a mock answered by ``recording``,
    served over loopback HTTP from this process until the block ends."""
    with serve_in_thread(mock_for(settings, recording)) as server:
        yield server


def mock_for(settings: Settings, recording: RecordingSession | None) -> MockLLM:
    """A test's mock, as its settings say; answered by ``recording`` where the test records
    or replays (the ``mockllm`` fixture's and the recording ``mockllm_server``'s)."""
    from mockllm import MockLLM

    return MockLLM(**settings.mock_options(), recordings=recording)


@contextlib.contextmanager
def serve_in_thread(mock: MockLLM) -> Iterator[MockLLMServer]:
    """Serve ``mock`` over HTTP on a free loopback port, from a thread of this process,
    until the block ends: what ``mockllm_server`` gives a test marked ``record=True``, so
    that the test's recording session (a ``MockLLM(recordings=...)`` answering from the
    test's file, forwarding to the upstream when it records) is reached at a URL, by a
    subprocess or any HTTP client. A request being forwarded runs in a worker thread, so
    the server's other requests do not wait on its upstream."""
    from harness.plugin.fixtures import SERVER_START_TIMEOUT_S, MockLLMServer
    from mockllm.testing import bind_socket, uvicorn_server

    sock = bind_socket("127.0.0.1", 0)
    server = uvicorn_server(mock, metrics=False)
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [sock]}, name="mockllm-recording-server", daemon=True
    )
    thread.start()
    try:
        deadline = time.monotonic() + SERVER_START_TIMEOUT_S
        while not server.started:  # bounded wait for uvicorn to listen
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the recording test's mock server did not start")
            time.sleep(0.005)
        mock_server = MockLLMServer(f"http://127.0.0.1:{sock.getsockname()[1]}", os.getpid())
        try:
            yield mock_server
        finally:
            mock_server.close()
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()
