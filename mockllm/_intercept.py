"""Host interception: unmodified code that calls the providers' default URLs is served
by the mock, in process, with no socket.

Inside ``with intercept() as mock:`` every request to ``api.openai.com`` or
``api.anthropic.com`` — whatever its path — is answered by the engine (a path it does
not route gets the engine's 404, never the network); requests to any other host go
out untouched. Clients are caught at their network transport, so a client built on a
custom transport (``HTTPX2Transport``, ``MockTransport``) is left alone::

    import openai
    from mockllm import InstructionChain
    from mockllm._intercept import intercept

    script = InstructionChain(instruction_chain=[
        {"messages": [{"text_message": {"text": "Hello from the mock"}}]},
    ]).tagged("Say hello")
    with intercept() as mock:
        client = openai.OpenAI(api_key="test")  # default base URL, default client
        reply = client.chat.completions.create(
            model="gpt-mock", messages=[{"role": "user", "content": script}])
    assert reply.choices[0].message.content == "Hello from the mock"
    assert mock.journal[-1].path == "/v1/chat/completions"

Two libraries are covered:

- ``httpx`` clients (openai 2.x, most other code) through respx, the maintained mocking
  library for httpx: one respx router, kept while any interception is active, with one
  catch-all route that serves the intercepted hosts and passes every other request
  through.
- ``httpx2`` clients (openai>=3, anthropic>=1), which respx does not patch, through a
  small patch of ``httpx2.HTTPTransport.handle_request`` and
  ``httpx2.AsyncHTTPTransport.handle_async_request`` — the same place the httpx2 fork
  of pytest-httpx patches. (The httpx2 mocking packages on PyPI, pytest-httpx2 and
  httpx2-pytest, are pytest fixtures only, not context managers, and little used.)

Interceptions nest and may be entered from several threads: the patches go in when the
first one starts and come out when the last one ends, and a request is served by the
most recently entered interception that covers its host. The state is per process, so
pytest-xdist workers do not see each other's.
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx
import httpx2

from mockllm._engine import MockLLM
from mockllm._exceptions import UnmockedRequestError
from mockllm._transports import HTTPX2Transport, response_for

__all__ = ["CLIENT_LIBRARIES", "DEFAULT_HOSTS", "UnmockedRequestError", "intercept"]

DEFAULT_HOSTS: tuple[str, ...] = ("api.openai.com", "api.anthropic.com")
CLIENT_LIBRARIES: tuple[str, ...] = ("httpx", "httpx2")
"""The client libraries ``intercept`` can cover."""


@dataclass(eq=False)
class _Interception:
    mock: MockLLM
    hosts: frozenset[str]
    clients: frozenset[str]
    """The client libraries it covers: "httpx", "httpx2"."""
    block_unmocked: bool = False
    blocked: list[str] = field(default_factory=list)
    httpx2_transport: HTTPX2Transport = field(init=False)

    def __post_init__(self) -> None:
        self.httpx2_transport = HTTPX2Transport(self.mock)


class _Registry:
    """The active interceptions of this process and the patches they need.

    Mutations hold the lock; request handling reads ``entries``, a tuple replaced
    whole, so it never needs the lock.
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.entries: tuple[_Interception, ...] = ()
        self.respx_router: Any = None
        self.httpx2_patch: _HTTPX2Patch | None = None

    def find(self, host: str, *, library: str) -> _Interception | None:
        for entry in reversed(self.entries):
            if library in entry.clients and host in entry.hosts:
                return entry
        return None

    def refuse(self, method: str, url: Any, *, library: str) -> None:
        """Raise for a request no interception serves, if one blocks unmocked hosts
        (respx's ``assert_all_mocked``); the blocker also remembers it for its exit."""
        blocker = next((e for e in reversed(self.entries)
                        if e.block_unmocked and library in e.clients), None)
        if blocker is None:
            return
        shown = f"{method} {url}"
        blocker.blocked.append(shown)
        hosts = ", ".join(sorted(blocker.hosts))
        raise UnmockedRequestError(
            f"intercept(block_unmocked=True) blocked {shown}: only {hosts} are served by the mock. "
            "Point the client at the mock, add the host to hosts=, or pass block_unmocked=False."
        )

    def add(self, entry: _Interception) -> None:
        with self.lock:
            if "httpx" in entry.clients and self.respx_router is None:
                self.respx_router = _start_respx_router(self)
            if "httpx2" in entry.clients and self.httpx2_patch is None:
                self.httpx2_patch = _HTTPX2Patch.install(self)
            self.entries = (*self.entries, entry)

    def remove(self, entry: _Interception) -> None:
        with self.lock:
            self.entries = tuple(e for e in self.entries if e is not entry)
            if self.respx_router is not None and not any("httpx" in e.clients for e in self.entries):
                router, self.respx_router = self.respx_router, None
                router.stop(quiet=True)
            if self.httpx2_patch is not None and not any("httpx2" in e.clients for e in self.entries):
                patch, self.httpx2_patch = self.httpx2_patch, None
                patch.uninstall()


_registry = _Registry()


# -- httpx, through respx ------------------------------------------------------------


def _import_respx() -> Any:
    try:
        import respx
    except ImportError as exc:
        raise ImportError(
            "Intercepting httpx clients needs respx, which is not installed. "
            "Install it with `pip install respx`, or pass clients=(\"httpx2\",) to intercept only httpx2 clients."
        ) from exc
    return respx


class _SyncOrAsyncStream(httpx.SyncByteStream, httpx.AsyncByteStream):
    """A body sent in pieces (paced, or rendered as it is read) that either kind of client can read.

    respx calls a side effect the same way for sync and async clients, so the side
    effect cannot tell which stream to build; this one holds both.
    """

    def __init__(self, sync: Iterable[bytes], async_: Any) -> None:
        self._sync = sync
        self._async = async_

    def __iter__(self) -> Iterator[bytes]:
        return iter(self._sync)

    def __aiter__(self) -> AsyncIterator[bytes]:
        return self._async.__aiter__()


def _serve_httpx(registry: _Registry) -> Callable[[httpx.Request], httpx.Response | httpx.Request]:
    def side_effect(request: httpx.Request) -> httpx.Response | httpx.Request:
        entry = registry.find(request.url.host, library="httpx")
        if entry is None:
            registry.refuse(request.method, request.url, library="httpx")
            return request  # respx's way to say "pass this one through"
        reply = entry.mock.handle(request.method, request.url.path, request.headers, request.read())
        response = response_for(httpx, reply, request, is_async=False)
        if reply.length is None:  # sent in pieces: the stream must match the client's kind
            async_response = response_for(httpx, reply, request, is_async=True)
            response.stream = _SyncOrAsyncStream(response.stream, async_response.stream)
        return response

    return side_effect


def _start_respx_router(registry: _Registry) -> Any:
    respx = _import_respx()
    router = respx.mock(assert_all_mocked=False, assert_all_called=False)
    router.route(name="mockllm").mock(side_effect=_serve_httpx(registry))
    router.start()
    return router


# -- httpx2, through a patch of its network transports ---------------------------------


@dataclass
class _HTTPX2Patch:
    """The two patched methods and the originals they replaced."""

    original_sync: Callable[..., Any]
    original_async: Callable[..., Any]
    patched_sync: Callable[..., Any]
    patched_async: Callable[..., Any]

    @classmethod
    def install(cls, registry: _Registry) -> _HTTPX2Patch:
        # Closures per installation (not module-level functions): if another library
        # patched over ours and we could not take ours out, a later installation must
        # not call back into the earlier one and loop.
        original_sync = httpx2.HTTPTransport.handle_request
        original_async = httpx2.AsyncHTTPTransport.handle_async_request

        def handle_request(transport: httpx2.HTTPTransport, request: httpx2.Request) -> httpx2.Response:
            entry = registry.find(request.url.host, library="httpx2")
            if entry is None:
                registry.refuse(request.method, request.url, library="httpx2")
                return original_sync(transport, request)
            return entry.httpx2_transport.handle_request(request)

        async def handle_async_request(
            transport: httpx2.AsyncHTTPTransport, request: httpx2.Request
        ) -> httpx2.Response:
            entry = registry.find(request.url.host, library="httpx2")
            if entry is None:
                registry.refuse(request.method, request.url, library="httpx2")
                return await original_async(transport, request)
            return await entry.httpx2_transport.handle_async_request(request)

        httpx2.HTTPTransport.handle_request = handle_request  # type: ignore[method-assign]
        httpx2.AsyncHTTPTransport.handle_async_request = handle_async_request  # type: ignore[method-assign]
        return cls(original_sync, original_async, handle_request, handle_async_request)

    def uninstall(self) -> None:
        # If someone patched over ours since, leave theirs: it will restore ours, which
        # passes every request through while no interception is active.
        if httpx2.HTTPTransport.handle_request is self.patched_sync:
            httpx2.HTTPTransport.handle_request = self.original_sync  # type: ignore[method-assign]
        if httpx2.AsyncHTTPTransport.handle_async_request is self.patched_async:
            httpx2.AsyncHTTPTransport.handle_async_request = self.original_async  # type: ignore[method-assign]


# -- the public context manager --------------------------------------------------------


def _checked_hosts(hosts: Any) -> frozenset[str]:
    if isinstance(hosts, str) or not isinstance(hosts, Iterable):
        raise TypeError(f"hosts must be a tuple of host names such as ('api.openai.com',), not {hosts!r}.")
    checked = []
    for host in hosts:
        if not isinstance(host, str) or not host or any(c in host for c in "/:@ "):
            raise ValueError(
                f"hosts must hold bare host names such as 'api.openai.com' (no scheme, port or path); "
                f"got {host!r}."
            )
        checked.append(host.lower())
    if not checked:
        raise ValueError("hosts is empty, so nothing would be intercepted; name at least one host.")
    return frozenset(checked)


def _checked_clients(clients: Any) -> frozenset[str]:
    if isinstance(clients, str) or not isinstance(clients, Iterable):
        raise TypeError(f"clients must be a tuple of client library names such as ('httpx2',), not {clients!r}.")
    checked = frozenset(clients)
    unknown = sorted(map(repr, checked - set(CLIENT_LIBRARIES)))
    if unknown:
        raise ValueError(f"clients names {', '.join(unknown)}; intercept covers {list(CLIENT_LIBRARIES)}.")
    if not checked:
        raise ValueError(f"clients is empty, so nothing would be intercepted; name at least one of "
                         f"{list(CLIENT_LIBRARIES)}.")
    return checked


@contextmanager
def intercept(
    mock: MockLLM | None = None,
    *,
    hosts: Iterable[str] = DEFAULT_HOSTS,
    clients: Iterable[str] = CLIENT_LIBRARIES,
    block_unmocked: bool = False,
) -> Iterator[MockLLM]:
    """Serve every request to ``hosts`` from ``mock`` (a new ``MockLLM`` if None) while
    the block runs, for the client libraries named in ``clients`` (``"httpx"``,
    ``"httpx2"``, both by default); yield the mock in use so that the test can read
    ``mock.journal``.

    ``block_unmocked=True`` refuses a request to any other host with an
    ``UnmockedRequestError`` that shows it, and, in case the code under test caught that
    (the SDKs turn it into a connection error), raises it again when the block ends."""
    if mock is None:
        mock = MockLLM()
    elif not isinstance(mock, MockLLM):
        raise TypeError(f"mock must be a MockLLM or None, not {mock!r}.")
    entry = _Interception(mock, _checked_hosts(hosts), _checked_clients(clients),
                          block_unmocked=bool(block_unmocked))
    if "httpx" in entry.clients:
        _import_respx()  # fail before anything is patched
    _registry.add(entry)
    try:
        yield mock
    finally:
        _registry.remove(entry)
    if entry.blocked:
        listing = "\n".join(f"  - {shown}" for shown in entry.blocked)
        raise UnmockedRequestError(
            f"{len(entry.blocked)} request(s) went to hosts the mock does not serve "
            f"(intercept(block_unmocked=True) serves {', '.join(sorted(entry.hosts))}):\n{listing}"
        )
