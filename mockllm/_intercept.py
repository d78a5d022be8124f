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

Two libraries are covered, the same way: ``httpx`` clients (openai 2.x, anthropic 0.x,
LiteLLM, most other code) and ``httpx2`` clients (openai>=3, anthropic>=1), through a
small patch of each library's network transports (``HTTPTransport.handle_request`` and
``AsyncHTTPTransport.handle_async_request``) — the place pytest-httpx and the httpx2
fork of it patch. A request to an intercepted host is handed to the library's
in-process transport (``HTTPXTransport``, ``HTTPX2Transport``); any other request goes on
to the original method, so a respx or pytest-httpx mock of the same client still sees
it. ``httpx2`` is optional: where it is not installed there is no httpx2 client to
catch, and only ``httpx`` is patched.

Interceptions nest and may be entered from several threads: the patches go in when the
first one starts and come out when the last one ends, and a request is served by the
most recently entered interception that covers its host. The state is per process, so
pytest-xdist workers do not see each other's.
"""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import httpx

from mockllm._engine import MockLLM
from mockllm._exceptions import UnmockedRequestError
from mockllm._transports import HTTPX2Transport, HTTPXTransport, import_httpx2

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
    transports: dict[str, Any] = field(init=False)

    def __post_init__(self) -> None:
        self.transports = {"httpx": HTTPXTransport(self.mock)}
        if "httpx2" in self.clients:
            self.transports["httpx2"] = HTTPX2Transport(self.mock)


class _Registry:
    """The active interceptions of this process and the patches they need.

    Mutations hold the lock; request handling reads ``entries``, a tuple replaced
    whole, so it never needs the lock.
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.entries: tuple[_Interception, ...] = ()
        self.patches: dict[str, _TransportPatch] = {}

    def find(self, host: str, *, library: str) -> _Interception | None:
        for entry in reversed(self.entries):
            if library in entry.clients and host in entry.hosts:
                return entry
        return None

    def refuse(self, method: str, url: Any, *, library: str) -> None:
        """Raise for a request no interception serves, if one blocks unmocked hosts
        (respx's ``assert_all_mocked``); the blocker also remembers it for its exit."""
        blocker = next((e for e in reversed(self.entries) if e.block_unmocked and library in e.clients), None)
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
            for library in entry.clients:
                if library not in self.patches:
                    self.patches[library] = _TransportPatch.install(self, library)
            self.entries = (*self.entries, entry)

    def remove(self, entry: _Interception) -> None:
        with self.lock:
            self.entries = tuple(e for e in self.entries if e is not entry)
            for library in list(self.patches):
                if not any(library in e.clients for e in self.entries):
                    self.patches.pop(library).uninstall()


_registry = _Registry()


def _module(library: str) -> ModuleType:
    return httpx if library == "httpx" else import_httpx2('intercept(clients=("httpx2",))')


@dataclass
class _TransportPatch:
    """One library's two patched methods and the originals they replaced."""

    module: ModuleType
    original_sync: Callable[..., Any]
    original_async: Callable[..., Any]
    patched_sync: Callable[..., Any]
    patched_async: Callable[..., Any]

    @classmethod
    def install(cls, registry: _Registry, library: str) -> _TransportPatch:
        # Closures per installation (not module-level functions): if another library
        # patched over ours and we could not take ours out, a later installation must
        # not call back into the earlier one and loop.
        module = _module(library)
        original_sync = module.HTTPTransport.handle_request
        original_async = module.AsyncHTTPTransport.handle_async_request

        def handle_request(transport: Any, request: Any) -> Any:
            entry = registry.find(request.url.host, library=library)
            if entry is None:
                registry.refuse(request.method, request.url, library=library)
                return original_sync(transport, request)
            return entry.transports[library].handle_request(request)

        async def handle_async_request(transport: Any, request: Any) -> Any:
            entry = registry.find(request.url.host, library=library)
            if entry is None:
                registry.refuse(request.method, request.url, library=library)
                return await original_async(transport, request)
            return await entry.transports[library].handle_async_request(request)

        module.HTTPTransport.handle_request = handle_request
        module.AsyncHTTPTransport.handle_async_request = handle_async_request
        return cls(module, original_sync, original_async, handle_request, handle_async_request)

    def uninstall(self) -> None:
        # If someone patched over ours since, leave theirs: it will restore ours, which
        # passes every request through while no interception is active.
        if self.module.HTTPTransport.handle_request is self.patched_sync:
            self.module.HTTPTransport.handle_request = self.original_sync
        if self.module.AsyncHTTPTransport.handle_async_request is self.patched_async:
            self.module.AsyncHTTPTransport.handle_async_request = self.original_async


# -- the public context manager --------------------------------------------------------


def _checked_hosts(hosts: Any) -> frozenset[str]:
    if isinstance(hosts, str) or not isinstance(hosts, Iterable):
        raise TypeError(f"hosts must be a tuple of host names such as ('api.openai.com',), not {hosts!r}.")
    checked = []
    for host in hosts:
        if not isinstance(host, str) or not host or any(c in host for c in "/:@ "):
            raise ValueError(
                f"hosts must hold bare host names such as 'api.openai.com' (no scheme, port or path); got {host!r}."
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
        raise ValueError(
            f"clients is empty, so nothing would be intercepted; name at least one of {list(CLIENT_LIBRARIES)}."
        )
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
    ``"httpx2"``, both by default; httpx2 where it is installed); yield the mock in use
    so that the test can read ``mock.journal``.

    ``block_unmocked=True`` refuses a request to any other host with an
    ``UnmockedRequestError`` that shows it, and, in case the code under test caught that
    (the SDKs turn it into a connection error), raises it again when the block ends."""
    if mock is None:
        mock = MockLLM()
    elif not isinstance(mock, MockLLM):
        raise TypeError(f"mock must be a MockLLM or None, not {mock!r}.")
    covered = _checked_clients(clients)
    # Without httpx2 installed no httpx2 client exists, so there is nothing to catch.
    if "httpx2" in covered and importlib.util.find_spec("httpx2") is None:
        if covered == {"httpx2"}:
            import_httpx2('intercept(clients=("httpx2",))')  # says how to install it
        covered -= {"httpx2"}
    entry = _Interception(mock, _checked_hosts(hosts), covered, block_unmocked=bool(block_unmocked))
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
