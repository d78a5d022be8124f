"""Late requests: a request that reached a test's mock after the test ended.

An app that starts a thread, a task or a pool job calling the model, and returns before
it finishes, passes its test: the fixture's teardown checked the mock, and the request
came after. Nothing checks what such a request got, so the plugin fails the run instead,
naming the test the request belonged to:

- the clients the fixtures build (``mockllm.openai()`` …) send through a transport that,
  once the test has ended, refuses the request (a 404 saying why) and records it here;
  a sync one is not closed at teardown (its transport is), or the app would get a
  "client has been closed" error that nobody sees;
- the ``mockllm_server`` fixture's server refuses a model call to a deleted session the
  same way and keeps it (``GET /_mockllm/late``, and the reply to each session's
  ``DELETE``); the fixture reads them there and attributes them by session.

``LateRequests`` (one per pytest process, kept on the config) reports what it holds at the
next check: the teardown of the next test that uses either fixture, or the end of the
session (a session-scoped fixture's teardown, so that under xdist the error reaches the
controller). A request that comes after the session's last check is not seen.
"""

from __future__ import annotations

import functools
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING, Any

import pytest

from harness.plugin.strict import UnscriptedRequestsError

if TYPE_CHECKING:
    from harness.plugin.fixtures import MockLLMServer

__all__ = ["LateRequest", "LateRequests", "TestScope", "late_requests"]

FIX = (
    "join the thread, await the task or wait for the pool job that sends it before the test "
    "returns (or in a fixture of the test's that uses the mock, whose teardown comes first)"
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
    """A test's in-process mock, as the late-request check sees it: its test, and when
    the test ended (None while it runs)."""

    __test__ = False

    ledger: LateRequests
    test: str
    base_url: str = ""
    """The mock's URL (a server session's path is taken off the paths shown)."""
    ended_at: float | None = None

    def end(self) -> None:
        if self.ended_at is None:
            self.ended_at = time.time()

    def guard(self, library: ModuleType, transport: Any) -> Any:
        """``transport`` (of ``library``: httpx or httpx2), refusing a request once the test
        ended; None (the client's default, reaching the server, which refuses it) as it is."""
        return None if transport is None else _guard_class(library)(transport, self)

    def refuse(self, library: ModuleType, request: Any) -> Any:
        """Record a late ``request`` and answer it with a 404 that says why."""
        assert self.ended_at is not None
        path = request.url.path.removeprefix(urllib.parse.urlsplit(self.base_url).path)
        late = self.ledger.add(self.test, request.method, path, time.time() - self.ended_at)
        message = (
            f"The mock of {self.test} is gone: this request ({late.method} {late.path}) came after the "
            f"test ended, so nothing checks what it gets. To fix it, {FIX}. The pytest plugin fails the run."
        )
        return library.Response(404, json={"error": {"message": message}}, request=request)


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


@dataclass(frozen=True)
class _Session:
    test: str
    ended_at: float


@dataclass(eq=False)
class LateRequests:
    """The late requests of this pytest process not reported yet, and what is needed to
    attribute the server's: which test owned each session, on which server."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    pending: list[LateRequest] = field(default_factory=list)
    sessions: dict[tuple[str, str], _Session] = field(default_factory=dict)
    servers: set[str] = field(default_factory=set)
    seen: set[tuple[str, int]] = field(default_factory=set)
    counts: dict[str, int] = field(default_factory=dict)

    def add(self, test: str, method: str, path: str, after_s: float) -> LateRequest:
        """Record a late request to ``test``'s mock."""
        with self.lock:
            index = self.counts[test] = self.counts.get(test, 0) + 1
            late = LateRequest(test, method, path, index, after_s)
            self.pending.append(late)
        return late

    def session_closed(self, process: MockLLMServer, session: MockLLMServer, test: str) -> None:
        """``test``'s session on ``process`` is deleted: later model calls to it are late.
        Fails with the late requests so far (the server lists them in the ``DELETE``'s reply)."""
        self.servers.add(process.base_url)
        session_id = session.base_url.rsplit("/", 1)[-1]
        self.sessions[process.base_url, session_id] = _Session(test, time.time())
        reply = getattr(session, "deleted", None)
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
            self.add(owner.test, record["method"], record["path"], max(0.0, record["at"] - owner.ended_at))

    def collect(self) -> None:
        """Read the late requests of every server still running."""
        import httpx

        from harness.plugin.fixtures import tls_context

        for url in sorted(self.servers):
            try:
                with httpx.Client(verify=tls_context()) as client:
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
    return ledger
