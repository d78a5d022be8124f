"""Host interception: unmodified code that calls the providers' default URLs is served
by the mock, in process, with no socket.

Inside ``with intercept() as mock:`` every request to a provider's default host
(``mockllm._hosts.DEFAULT_HOSTS``: OpenAI's, Anthropic's, Gemini's and Vertex AI's, an
Azure OpenAI resource's, a local Ollama's) — whatever its path — is answered by the
engine (a path it does not route gets the engine's 404, never the network); requests
to any other host go out untouched. Clients are caught at their network transport, so a client built on a
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

Leaving the block applies the verdict's rule (``mockllm._verdict``), as respx's
``assert_all_mocked``/``assert_all_called`` do: a request that got the fallback reply
or an unscripted 4xx, a scripted step never reached, or a tool call the request did not
declare raises ``StrictnessError`` listing each one (``allow_fallback=True`` and the
others opt out). ``intercept(mockllm)`` takes the pytest fixture too. ``refuse_hosts``
is the other half: it refuses the providers' hosts outright (the pytest fixtures use it
so that a client not pointed at the mock never reaches a real provider).

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

from mockllm._aiohttp_guard import refuse_aiohttp
from mockllm._bedrock_guard import refuse_bedrock
from mockllm._engine import MockLLM
from mockllm._exceptions import StrictnessError, UnmockedRequestError
from mockllm._hosts import DEFAULT_HOSTS, HostPatterns, telemetry_refusal
from mockllm._transports import HTTPX2Transport, HTTPXTransport, import_httpx2
from mockllm._verdict import Problem, ProblemKind, verify_findings

__all__ = ["CLIENT_LIBRARIES", "DEFAULT_HOSTS", "UnmockedRequestError", "intercept", "refuse_hosts"]

CLIENT_LIBRARIES: tuple[str, ...] = ("httpx", "httpx2")
"""The client libraries ``intercept`` can cover."""


@dataclass(eq=False)
class _Interception:
    mock: MockLLM | None
    """None for a refusal (``refuse_hosts``): its hosts are refused, not served."""
    hosts: HostPatterns
    clients: frozenset[str]
    """The client libraries it covers: "httpx", "httpx2"."""
    block_unmocked: bool = False
    blocked: list[str] = field(default_factory=list)
    refusal: Callable[[str], str] | None = None
    """For a refusal: the message for a refused request, given ``METHOD URL``."""
    transports: dict[str, Any] = field(init=False)

    def __post_init__(self) -> None:
        self.transports = {}
        if self.mock is not None:
            self.transports["httpx"] = HTTPXTransport(self.mock)
            if "httpx2" in self.clients:
                self.transports["httpx2"] = HTTPX2Transport(self.mock)

    def serve(self, request: Any, library: str) -> Any:
        """The in-process transport for ``request``, or raise if this entry refuses it."""
        if self.mock is None:
            shown = f"{request.method} {request.url}"
            telemetry = telemetry_refusal(request.url.host, request.url.path, shown)
            if telemetry is not None:
                raise UnmockedRequestError(telemetry)
            self.blocked.append(shown)
            assert self.refusal is not None
            raise UnmockedRequestError(self.refusal(shown))
        return self.transports[library]


class _Registry:
    """The active interceptions of this process and the patches they need.

    Mutations hold the lock; request handling reads ``entries``, a tuple replaced
    whole, so it never needs the lock.
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.entries: tuple[_Interception, ...] = ()
        self.patches: dict[str, _TransportPatch] = {}

    def find(self, url: Any, *, library: str) -> _Interception | None:
        host, port = url.host, url.port
        for entry in reversed(self.entries):
            if library in entry.clients and entry.hosts.covers(host, port):
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
        hosts = blocker.hosts
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
            entry = registry.find(request.url, library=library)
            if entry is None:
                registry.refuse(request.method, request.url, library=library)
                return original_sync(transport, request)
            return entry.serve(request, library).handle_request(request)

        async def handle_async_request(transport: Any, request: Any) -> Any:
            entry = registry.find(request.url, library=library)
            if entry is None:
                registry.refuse(request.method, request.url, library=library)
                return await original_async(transport, request)
            return await entry.serve(request, library).handle_async_request(request)

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


def _as_mock(mock: Any) -> MockLLM:
    """``mock`` itself, or the ``MockLLM`` a fixture wraps (the ``mockllm`` fixture)."""
    if mock is None:
        return MockLLM()
    if isinstance(mock, MockLLM):
        return mock
    inner = getattr(mock, "mock", None)
    if isinstance(inner, MockLLM):
        return inner
    if isinstance(getattr(mock, "base_url", None), str):
        raise TypeError(
            f"intercept() serves requests in process from a MockLLM; {mock!r} is a mock server on "
            f"{mock.base_url}. Point the client at its base_url, or use the in-process mockllm fixture."
        )
    raise TypeError(f"mock must be a MockLLM, the mockllm fixture or None, not {mock!r}.")


def _intercept_opt_out(name: str) -> str:
    if name == "allow_real_providers":
        return "intercept(block_unmocked=False)"
    return f"intercept(..., {name}=True) (or MockLLM({name}=True))"


def _aiohttp_refusal(shown: str) -> str:
    return (
        f"intercept() refused {shown}: the request went through aiohttp, which the mock cannot serve in "
        "process (it serves httpx and httpx2 clients). Give the SDK an httpx client (google-genai: "
        "http_options=HttpOptions(httpx_async_client=...)), or point it at a mock server (mockllm_server, "
        "python -m mockllm serve)."
    )


@contextmanager
def intercept(
    mock: Any = None,
    *,
    hosts: Iterable[str] = DEFAULT_HOSTS,
    clients: Iterable[str] = CLIENT_LIBRARIES,
    block_unmocked: bool = False,
    allow_fallback: bool | None = None,
    allow_unused_steps: bool | None = None,
    allow_undeclared_tools: bool | None = None,
    allow_impossible_replies: bool | None = None,
) -> Iterator[MockLLM]:
    """Serve every request to ``hosts`` from ``mock`` (a ``MockLLM``, the ``mockllm``
    pytest fixture, or None for a new ``MockLLM``) while the block runs, for the client
    libraries named in ``clients`` (``"httpx"``, ``"httpx2"``, both by default; httpx2
    where it is installed); yield the mock in use so that the test can read
    ``mock.journal``.

    When the block ends without an exception, the verdict's rule applies
    (``mockllm._verdict``), as respx's ``assert_all_mocked``/``assert_all_called`` do:
    a ``StrictnessError`` lists every request that got the fallback reply or an
    unscripted 4xx, every scripted step never reached, every tool call the request did
    not declare, every scripted reply no provider could give to its request (past its
    output-token limit, breaking its structured output). ``allow_fallback``,
    ``allow_unused_steps``, ``allow_undeclared_tools``, ``allow_impossible_replies`` opt out
    (None: the mock's own settings, ``MockLLM(allow_fallback=True)``).

    An aiohttp client's request to ``hosts`` (google-genai's async client where aiohttp
    is installed) cannot be served in process: it is refused, and fails the block, instead
    of reaching the network.

    ``block_unmocked=True`` refuses a request to any other host with an
    ``UnmockedRequestError`` that shows it, and, in case the code under test caught that
    (the SDKs turn it into a connection error), raises it again when the block ends."""
    mock = _as_mock(mock)
    covered = _checked_clients(clients)
    # Without httpx2 installed no httpx2 client exists, so there is nothing to catch.
    if "httpx2" in covered and importlib.util.find_spec("httpx2") is None:
        if covered == {"httpx2"}:
            import_httpx2('intercept(clients=("httpx2",))')  # says how to install it
        covered -= {"httpx2"}
    allowances = mock.allowances.overridden(
        allow_fallback=allow_fallback,
        allow_unused_steps=allow_unused_steps,
        allow_undeclared_tools=allow_undeclared_tools,
        allow_impossible_replies=allow_impossible_replies,
    )
    entry = _Interception(mock, HostPatterns.parse(hosts), covered, block_unmocked=bool(block_unmocked))
    _registry.add(entry)
    try:
        with refuse_aiohttp(entry.hosts.covers, _aiohttp_refusal, entry.blocked):
            yield mock
    finally:
        _registry.remove(entry)
    served = entry.hosts
    blocked = [
        Problem(kind=ProblemKind.UNMOCKED_HOST, summary=f"{shown} (intercept(block_unmocked=True) serves {served})")
        for shown in entry.blocked
    ]
    findings = mock.findings().plus(blocked)
    verify_findings(
        findings, allowances, opt_out=_intercept_opt_out, error=UnmockedRequestError if blocked else StrictnessError
    )


@contextmanager
def refuse_hosts(
    message: Callable[[str], str],
    hosts: Iterable[str] = DEFAULT_HOSTS,
    clients: Iterable[str] = CLIENT_LIBRARIES,
    *,
    bedrock_message: Callable[[str], str] | None = None,
) -> Iterator[list[str]]:
    """Refuse every request to ``hosts`` (the providers' default hosts) with an
    ``UnmockedRequestError`` of ``message(\"METHOD URL\")``, before any connection, while
    the block runs; yield the list of refused requests (``METHOD URL``), which the
    caller reports when the block ends (the SDKs turn the error into a connection
    error the app may swallow). An ``intercept()`` entered inside the block serves its
    hosts as usual: the most recent one wins. The pytest fixtures use this so that a
    client not pointed at the mock never reaches a real provider.

    boto3 clients (botocore) are refused AWS Bedrock's hosts too, with
    ``bedrock_message`` (default ``message``): ``mockllm._bedrock_guard``; aiohttp
    clients (google-genai's async client where aiohttp is installed) are refused
    ``hosts``: ``mockllm._aiohttp_guard``."""
    covered = _checked_clients(clients)
    if "httpx2" in covered and importlib.util.find_spec("httpx2") is None:
        covered -= {"httpx2"}
    entry = _Interception(None, HostPatterns.parse(hosts), covered, refusal=message)
    _registry.add(entry)
    try:
        with (
            refuse_bedrock(bedrock_message or message, entry.blocked),
            refuse_aiohttp(entry.hosts.covers, message, entry.blocked),
        ):
            yield entry.blocked
    finally:
        _registry.remove(entry)
