"""The scenario runner contract: what a runner receives and what it returns.

A runner plays one scenario under one protocol against the mock. It is a function
(sync or async) of one ``RunnerContext``::

    async def run(context: RunnerContext) -> ScenarioRun | list[event]:
        client = context.openai(is_async=True)       # official SDK, already on the mock
        ...
        return events                                 # dicts, models, dataclasses or Events

The context holds the ``scenario`` (the validated file: ``prompt``, ``tagged_prompt()``
with the script, ``tools``, ``options``…), the ``protocol`` to speak
(``anthropic-messages``, ``openai-chat`` or ``openai-responses``) and the mock: its
``base_url`` (``openai_base_url`` with ``/v1``) for a client of the runner's own, or
ready clients (``openai()``, ``anthropic()``, ``httpx2_client()``, ``httpx_client()``,
the harness's ``model_client()``) which are closed after the run. During the run the
environment points at the mock too (``OPENAI_BASE_URL``, ``OPENAI_API_KEY``,
``ANTHROPIC_BASE_URL``, ``ANTHROPIC_API_KEY``), and in process the mock's host is
intercepted, so a client the runner (or the app it drives) builds itself, from
``openai_base_url`` or from the environment, is served by the mock.

It returns the run's events (then the run counts as a success) or a ``ScenarioRun``
saying whether it succeeded, with what error and final text; the scenario's ``expect``
is checked against that, and the events become the scenario's golden.

A runner that cannot speak every protocol says which it can, with ``speaks``::

    @speaks("anthropic-messages", "openai-chat")
    async def run(context): ...

``protocols: all`` then skips the others with that reason; naming one explicitly is a
collection error. The bundled runners (``agent``, ``chain``, ``planner``) follow this
contract too (``harness.scenarios.runners``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, Union

from mockllm import PROTOCOLS

if TYPE_CHECKING:
    from harness.scenarios.model import Scenario
    from harness.systems.llm import ModelClient

__all__ = ["MockClients", "RunnerContext", "ScenarioRun", "ScenarioRunner", "speaks", "spoken_protocols"]


@dataclass
class ScenarioRun:
    """What a run produced: its events and how it ended."""

    events: list[Any]
    success: bool = True
    error: str | None = None
    final_text: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    unsent_scripts: str | None = field(default=None, repr=False)
    """Set by the playback (``harness.scenarios.playback.run_scenario``), not by a runner:
    which of the scenario's scripts no request to the mock carried, or None."""
    unspoken_protocol: str | None = field(default=None, repr=False)
    """Set by the playback, not by a runner: why the run, which reached the mock only in
    other protocols, is no run of the item's protocol, or None."""


class MockClients(Protocol):
    """The mock as a runner reaches it (the plugin's ``MockLLMFixture`` and
    ``MockLLMServer`` are two implementations)."""

    base_url: str

    @property
    def openai_base_url(self) -> str: ...

    @property
    def anthropic_base_url(self) -> str: ...

    def openai(self, *, is_async: bool = False, **kwargs: Any) -> Any: ...

    def anthropic(self, *, is_async: bool = False, **kwargs: Any) -> Any: ...

    def httpx2_client(self, *, is_async: bool = False) -> Any: ...

    def httpx_client(self, *, is_async: bool = False) -> Any: ...

    def model_client(self, protocol: str = "anthropic-messages", **kwargs: Any) -> ModelClient: ...


RunnerResult = Union[ScenarioRun, Sequence[Any]]


class ScenarioRunner(Protocol):
    """Plays a scenario: ``(context) -> events | ScenarioRun``, or an awaitable of it."""

    def __call__(self, context: RunnerContext, /) -> RunnerResult | Awaitable[RunnerResult]: ...


R = TypeVar("R", bound=Callable[..., Any])


def speaks(*protocols: str) -> Callable[[R], R]:
    """Declare the protocols a runner supports (default: all of ``PROTOCOLS``)."""
    unknown = sorted(set(protocols) - set(PROTOCOLS))
    if unknown or not protocols:
        raise ValueError(f"speaks() takes protocols among {list(PROTOCOLS)}; got {list(protocols)!r}")

    def mark(runner: R) -> R:
        runner.mockllm_protocols = tuple(protocols)  # type: ignore[attr-defined]
        return runner

    return mark


def spoken_protocols(runner: Callable[..., Any]) -> tuple[str, ...]:
    """The protocols ``runner`` declared with ``speaks``, else all of them."""
    return tuple(getattr(runner, "mockllm_protocols", PROTOCOLS))


@dataclass
class RunnerContext:
    """What a runner receives (see the module docstring)."""

    scenario: Scenario
    protocol: str
    mock: MockClients
    seed: int = 0
    _opened: list[Any] = field(default_factory=list, repr=False)

    @property
    def base_url(self) -> str:
        """The mock's base URL, without ``/v1`` (Anthropic clients use it as is)."""
        return self.mock.base_url

    @property
    def openai_base_url(self) -> str:
        """The mock's base URL for OpenAI clients (``…/v1``)."""
        return self.mock.openai_base_url

    def _keep(self, client: Any) -> Any:
        self._opened.append(client)
        return client

    def openai(self, *, is_async: bool = False, **kwargs: Any) -> Any:
        """An ``openai.OpenAI`` (``AsyncOpenAI`` with ``is_async=True``) on the mock."""
        return self._keep(self.mock.openai(is_async=is_async, **kwargs))

    def anthropic(self, *, is_async: bool = False, **kwargs: Any) -> Any:
        """An ``anthropic.Anthropic`` (``AsyncAnthropic`` with ``is_async=True``) on the mock."""
        return self._keep(self.mock.anthropic(is_async=is_async, **kwargs))

    def httpx2_client(self, *, is_async: bool = False) -> Any:
        return self._keep(self.mock.httpx2_client(is_async=is_async))

    def httpx_client(self, *, is_async: bool = False) -> Any:
        return self._keep(self.mock.httpx_client(is_async=is_async))

    def model_client(self, **kwargs: Any) -> ModelClient:
        """The harness's streaming ``ModelClient`` for this context's protocol."""
        return self._keep(self.mock.model_client(self.protocol, **kwargs))

    async def aclose(self) -> None:
        """Close every client handed out (the runner need not)."""
        for client in reversed(self._opened):
            close = getattr(client, "aclose", None) or getattr(client, "close", None)
            if close is not None:
                await _settled(close())
        self._opened.clear()


async def _settled(outcome: Any) -> Any:
    from harness.events import settled

    return await settled(outcome)


async def play(runner: ScenarioRunner, context: RunnerContext) -> ScenarioRun:
    """Run ``runner`` on ``context`` (awaiting it if async), close its clients, and
    return its result as a ``ScenarioRun``."""
    try:
        result = await _settled(runner(context))
    finally:
        await context.aclose()
    if isinstance(result, ScenarioRun):
        return result
    if isinstance(result, Sequence) and not isinstance(result, (str, bytes)):
        return ScenarioRun(list(result))
    raise TypeError(
        f"the runner for scenario {context.scenario.name!r} returned a {type(result).__name__}; "
        "a runner returns the run's events (a list) or a harness.scenarios.contract.ScenarioRun"
    )
