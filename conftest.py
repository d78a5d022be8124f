"""Root conftest: only what the repository's own test run needs."""

from __future__ import annotations

import atexit
import gc
import importlib
import os
import sys
from pathlib import Path

import pytest

# The plugin's own tests drive pytest through pytester.
pytest_plugins = ["pytester"]

# The suite speaks no TLS (no network but 127.0.0.1), yet each httpx or httpx2 client built
# with the default ``verify=True`` (google-genai's too) reads a whole CA bundle into a new
# SSL context: 25-40 ms of CPU, and the SDK clients and the server fixture's own calls build
# thousands (half the CPU of test_sdk_behaviours.py). ``SSL_CERT_FILE``, which they all read,
# names instead one certificate of a CA whose key was thrown away: a client is cheap to
# build, and a TLS handshake to anywhere fails. Set before xdist starts its workers: they,
# and every process the tests start, inherit it.
os.environ["SSL_CERT_FILE"] = str(Path(__file__).parent / "tests" / "trust_nothing_ca.pem")
os.environ.pop("SSL_CERT_DIR", None)

# Before any test module imports the SDKs: pydantic (on Python < 3.13) finds the source of
# each model that documents its fields with attribute docstrings (scim2-models, scim2-client
# and scim2-tester define some 3,000) by walking the stack and calling inspect.getmodule,
# which scans sys.modules. Imported as collection starts, among ~900 modules, they cost a
# worker about 1 s of CPU; imported where a test module first needs them, after the SDKs
# (~5,000), about 3 s. Only in a process that collects: xdist's controller runs no test.
SCIM_PACKAGES = ("scim2_models", "scim2_client.engines.httpx2", "scim2_tester")


@pytest.hookimpl(tryfirst=True)
def pytest_collection(session: pytest.Session) -> None:
    if session.config.pluginmanager.has_plugin("dsession"):  # xdist's controller
        return
    for name in SCIM_PACKAGES:
        try:
            importlib.import_module(name)
        except ImportError:  # the lean environment has no SCIM tooling
            pass


# The cyclic garbage collector in a process that runs tests: a worker holds some 800,000
# objects once the SDKs are imported, and each full collection walks them all (0.3-0.4 s of
# CPU each, about 15 CPU-s of the suite with Python's thresholds of 700, 10, 10). What the
# process holds once it has collected is frozen out of collections, and collections run
# less often; cyclic garbage is still collected (young cycles at each collection), and
# pytest collects at the end of the session to report any finaliser's warning. The test
# process only: ``mockllm`` never tunes a process that imports it (tests/mockllm/test_serving_gc.py).
# Set as this file is loaded, before collection imports the SDKs: with Python's thresholds
# their import alone ran a worker's full collections over and over (about 2 of its 9 CPU-s
# of collection, on every worker, before any test starts).
TEST_PROCESS_GC_THRESHOLDS = (20_000, 20, 20)
gc.set_threshold(*TEST_PROCESS_GC_THRESHOLDS)


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    gc.collect()
    gc.freeze()


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config, "workerinput"):  # an xdist worker
        atexit.register(_end_worker_process)


def _end_worker_process() -> None:
    """An xdist worker's last act, once pytest and xdist are done (and the exit handlers
    registered after this one): leave without the interpreter's teardown. Its results went
    to the controller over the channel before; freeing the million objects a worker holds
    took it about a second, which the controller spent waiting before it printed the
    summary. Not while coverage measures the process: coverage saves its data at exit."""
    coverage = sys.modules.get("coverage")
    if coverage is not None and coverage.Coverage.current() is not None:
        return
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    """A plain ``pytest`` (no path, no ``-n``) runs the whole suite on one xdist worker per
    core (``-n auto``; ``PYTEST_XDIST_AUTO_NUM_WORKERS`` sets the count).

    Not by ``addopts``: ``-n`` there would break ``pytest -p no:xdist``, and would start
    workers for ``pytest tests/some_file.py::test`` too. So a narrowed run (a path on the
    command line, ``-k``, ``-m``), an explicit ``-n`` (``-n 0`` for one process),
    ``-p no:xdist``, ``--pdb`` or ``--collect-only`` keep pytest's own default: one process,
    which starts sooner than two workers that each collect. Runs before xdist's own
    hook (both ``tryfirst``; a conftest's is called first), which turns ``-n`` into workers.
    """
    if not config.pluginmanager.hasplugin("xdist") or hasattr(config, "workerinput"):
        return
    if config.option.numprocesses is not None or config.args_source != pytest.Config.ArgsSource.TESTPATHS:
        return
    if config.getoption("keyword") or config.getoption("markexpr"):
        return
    if config.getoption("usepdb") or config.getoption("collectonly"):
        return
    config.option.numprocesses = "auto"
    # Each worker takes a contiguous half of the suite and steals from the other's tail
    # when idle: a module's tests mostly stay on one worker, so its module-scoped server
    # starts once, and the last slow test does not leave a core idle.
    if config.option.dist == "no":  # a --dist given on the command line is kept
        config.option.dist = "worksteal"
