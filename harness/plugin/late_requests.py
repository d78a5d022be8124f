"""Late requests: a request that reached a test's mock after the test ended.

An app that starts a thread, a task or a pool job calling the model, and returns before
it finishes, passes its test: the fixture's teardown checked the mock, and the request
came after. Nothing checks what such a request got, so the plugin fails the run instead,
naming the test the request belonged to:

- the clients the fixtures build (``mockllm.openai()`` …) send through a transport that,
  once the test has ended, refuses the request (a 404 saying why) and records it here;
  a sync one is not closed at teardown (its transport is), or the app would get a
  "client has been closed" error that nobody sees;
- a request to the in-process fixture's host (``patch_env``) once its interception has
  ended is refused and recorded the same way, until the session ends;
- the ``mockllm_server`` fixture's server refuses a model call to a deleted session the
  same way and keeps it (``GET /_mockllm/late``, and the reply to each session's
  ``DELETE``); the fixture reads them there and attributes them by session.

``LateRequests`` (one per pytest process, kept on the config) reports what it holds at the
next check: the teardown of the next test that uses either fixture, or the end of the
session (a session-scoped fixture's teardown, so that under xdist the error reaches the
controller). A request that comes after the session's last check is not seen.
"""

from __future__ import annotations

import contextlib
import functools
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING, Any, Protocol

import pytest

from harness.plugin.strict import UnscriptedRequestsError

if TYPE_CHECKING:
    import ssl

    import httpx

__all__ = ["LateRequest", "LateRequests", "TestScope", "late_requests"]

FIX = (
    "join the thread, await the task or wait for the pool job that sends it before the test "
    "returns (or in a fixture of the test's that uses the mock, whose teardown comes first). "
    "If a later test sent it, its client was built with the ended test's URL and kept (a "
    "module-level or session-scoped client, one made at import from the environment): build "
    "the client in each test, after patch_env, or from the fixture of the test that uses it"
)


@dataclass(frozen=True)
class LateRequest:
    """One request that came after its test ended."""

    test: str
    """The nodeid of the test whose mock it reached."""
    method: str
    path: str
    index: int
    """It was the ``index``-th late request (from 1) to that test's mock."""
    after_s: float
    """How long after the test ended it came."""

    def describe(self) -> str:
        return f"{self.method} {self.path} (late request {self.index}, {self.after_s:.3f} s after the test ended)"


@dataclass(eq=False)
class TestScope:
    """A test's mock (either fixture), as the late-request check sees it: its test, and
    when the test ended (None while it runs)."""

    __test__ = False

    ledger: LateRequests
    test: str
    base_url: str = ""  # the mock's URL: a server session's path is taken off the paths shown
    ended_at: float | None = None
    host: str | None = None  # the host its patch_env serves in process while it runs

    def end(self) -> None:
        if self.ended_at is None:
            self.ended_at = time.time()
            if self.host is not None:
                self.ledger.host_owner = (self.test, self.ended_at)

    def serve_host(self, host: str) -> None:
        """The test's ``patch_env`` serves ``host`` in process (``intercept``) until it
        ends; from then until the session ends, a request to it is refused and reported
        (the interception of the next test to serve it, entered later, wins meanwhile)."""
        self.host = host
        self.ledger.refuse_after_tests(host)

    def guard(self, library: ModuleType, transport: Any) -> Any:
        """``transport`` (of ``library``: httpx or httpx2), refusing a request once the test
        ended; None (the client's default, reaching the server, which refuses it) as it is."""
        return None if transport is None else _guard_class(library)(transport, self)

    def refuse(self, library: ModuleType, request: Any) -> Any:
        """Record a late ``request`` and answer it with a 404 that says why."""
        assert self.ended_at is not None
        path = request.url.path.removeprefix(urllib.parse.urlsplit(self.base_url).path)
        late = self.ledger.add(self.test, request.method, path, time.time() - self.ended_at)
        return library.Response(404, json={"error": {"message": _refusal(late)}}, request=request)


def _refusal(late: LateRequest) -> str:
    """What the app gets for a late request: why, and how to fix it."""
    return (
        f"The mock of {late.test} is gone: this request ({late.method} {late.path}) came after the "
        f"test ended, so nothing checks what it gets. To fix it, {FIX}. The pytest plugin fails the run."
    )


@functools.cache
def _guard_class(library: ModuleType) -> type:
    class LateGuard(library.BaseTransport, library.AsyncBaseTransport):  # type: ignore[name-defined]
        """A client's transport, refusing a request once its test has ended."""

        def __init__(self, transport: Any, scope: TestScope) -> None:
            self.transport, self.scope = transport, scope

        def handle_request(self, request: Any) -> Any:
            if self.scope.ended_at is not None:
                return self.scope.refuse(library, request)
            return self.transport.handle_request(request)

        async def handle_async_request(self, request: Any) -> Any:
            if self.scope.ended_at is not None:
                return self.scope.refuse(library, request)
            return await self.transport.handle_async_request(request)

        def close(self) -> None:
            self.transport.close()

        async def aclose(self) -> None:
            await self.transport.aclose()

    return LateGuard


class _Server(Protocol):
    """A server fixture (``harness.plugin.fixtures.MockLLMServer``), as read here."""

    base_url: str
    deleted: httpx.Response | None


@dataclass(eq=False)
class LateRequests:
    """The late requests of this pytest process not reported yet, and what is needed to
    attribute the server's: which test owned each session, on which server."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    pending: list[LateRequest] = field(default_factory=list)
    sessions: dict[tuple[str, str], tuple[str, float]] = field(default_factory=dict)
    """(server, session id) -> the test that owned the session, and when it was deleted."""
    servers: set[str] = field(default_factory=set)
    seen: set[tuple[str, int]] = field(default_factory=set)
    counts: dict[str, int] = field(default_factory=dict)
    host_owner: tuple[str, float] | None = None
    """The last test that served the in-process host, and when it ended."""
    refusing: contextlib.ExitStack = field(default_factory=contextlib.ExitStack)
    refused_host: str | None = None

    def add(self, test: str, method: str, path: str, after_s: float) -> LateRequest:
        """Record a late request to ``test``'s mock."""
        with self.lock:
            index = self.counts[test] = self.counts.get(test, 0) + 1
            late = LateRequest(test, method, path, index, after_s)
            self.pending.append(late)
        return late

    def refuse_after_tests(self, host: str) -> None:
        """Refuse ``host`` (and report each request) from now until the session ends; the
        interceptions of the tests that serve it, entered later, serve it while they run."""
        if self.refused_host is None:
            from mockllm import refuse_hosts

            self.refused_host = host
            self.refusing.enter_context(refuse_hosts(self._refused, hosts=(host,)))

    def _refused(self, shown: str) -> str:
        method, _, url = shown.partition(" ")
        test, ended_at = self.host_owner or ("an earlier test", time.time())
        return _refusal(self.add(test, method, urllib.parse.urlsplit(url).path, time.time() - ended_at))

    def session_closed(self, process: _Server, session: _Server, test: str) -> None:
        """``test``'s session on ``process`` is deleted: later model calls to it are late.
        Fails with the late requests so far (the server lists them in the ``DELETE``'s reply)."""
        self.servers.add(process.base_url)
        session_id = session.base_url.rsplit("/", 1)[-1]
        self.sessions[process.base_url, session_id] = (test, time.time())
        reply = session.deleted
        if reply is not None and reply.status_code == 200:
            self.server_reported(process.base_url, reply.json().get("late", []))
        self.check()

    def server_reported(self, server: str, records: list[dict[str, Any]]) -> None:
        """Take the server's late requests (``GET /_mockllm/late``): those to our sessions, once."""
        for record in records:
            owner = self.sessions.get((server, record["session"]))
            if owner is None or (server, record["index"]) in self.seen:
                continue
            self.seen.add((server, record["index"]))
            test, ended_at = owner
            self.add(test, record["method"], record["path"], max(0.0, record["at"] - ended_at))

    def collect(self, verify: ssl.SSLContext) -> None:
        """Read the late requests of every server still running."""
        import httpx

        for url in sorted(self.servers):
            try:
                with httpx.Client(verify=verify) as client:
                    records = client.get(f"{url}/_mockllm/late").raise_for_status().json()
            except httpx.TransportError:  # stopped already: what it held was read at each test's end
                continue
            self.server_reported(url, records)

    def check(self) -> None:
        """Fail with every late request not reported yet (each is reported once)."""
        __tracebackhide__ = True
        with self.lock:
            found, self.pending = self.pending, []
        if not found:
            return
        by_test: dict[str, list[LateRequest]] = {}
        for late in found:
            by_test.setdefault(late.test, []).append(late)
        said = "\n".join(
            f"{test}: {len(lates)} request(s) reached its mock after the test ended, so no check saw them:\n"
            + "\n".join(f"  - {late.describe()}" for late in lates)
            for test, lates in by_test.items()
        )
        raise UnscriptedRequestsError(
            f"{said}\nTo fix it, {FIX}. It is reported here, at the next check, as the test had ended."
        )


_KEY = pytest.StashKey[LateRequests]()


def late_requests(config: pytest.Config) -> LateRequests:
    """This pytest process's ``LateRequests``."""
    ledger = config.stash.get(_KEY, None)
    if ledger is None:
        ledger = config.stash[_KEY] = LateRequests()
        config.add_cleanup(ledger.refusing.close)
    return ledger
