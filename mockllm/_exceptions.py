"""Every exception mockllm raises derives from ``MockLLMError``::

    MockLLMError
    ├── RequestRejected            a request the real provider answers with a 4xx; the
    │   │                          engine turns it into that provider's error body
    │   └── HeldNotFound           a held id (thread, response, conversation) not held here
    │       ├── ThreadNotFound     an Assistants thread or run id (mockllm._wire.anthropic_threads)
    │       └── ResponsesStateError  a Responses ``previous_response_id`` or conversation
    │                              (mockllm._wire.openai_responses_state)
    ├── UnknownProtocol            a protocol name no codec speaks (also a ValueError)
    ├── InvalidScript              a script or match of the wrong type (also a TypeError)
    ├── ScriptValidationError      a script model built in Python with bad fields: one
    │                              problem a line (also pydantic's ValidationError)
    ├── ScriptLimitReached         ``MockLLM.script`` past ``Limits.max_scripts`` or
    │                              ``Limits.scripts_bytes`` (reset or remove scripts)
    ├── StrictnessError            a test's verdict cannot be trusted: a fallback reply, an
    │   │                          unscripted 4xx, an unused step, an undeclared tool call
    │   │                          (``mockllm._verdict``; also an AssertionError)
    │   └── UnmockedRequestError   a request to a host the mock does not serve, refused
    │                              (``intercept(block_unmocked=True)``, the pytest fixtures)
    ├── FileError                  a file that cannot be used, as ``path:line: reason``
    │   │                          (also a ValueError; ``mockllm.testing``, the base of
    │   │                          test tooling's file errors too: the harness's ScenarioError)
    │   └── RecordingError         a recording file (mockllm._recording.format)
    ├── SecretInRecording          a recording about to be written holds a key-shaped
    │                              string (mockllm._recording.scrub; also a ValueError)
    ├── StateError                 the mock's state cannot be used (mockllm._state; also
    │   │                          a ValueError)
    │   ├── StateConfigError       a ``serve --state`` value or its store is wrong (startup)
    │   └── StateUnavailable       the shared store stopped answering mid-run (a 503)
    ├── EventStreamError           bytes that are not a well-formed AWS event stream
    │                              (mockllm._wire.eventstream; also a ValueError)
    └── MissingExtraError          an optional package (httpx2) is not installed; the
                                   message names the extra (mockllm._optional; also a
                                   ModuleNotFoundError)

``MockLLM.handle`` and the server never raise these to a client: a rejected request is
an HTTP reply. They reach the caller of the Python API (``explain``, ``MockLLM.script``,
``intercept``). A scripting model (``InstructionChain``, ``Instruction``, the specs) built
with bad fields raises ``ScriptValidationError``: still pydantic's ``ValidationError``
(``errors()`` as ever), its message the problems one a line, as a scenario file reports them.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

__all__ = [
    "FileError",
    "InvalidScript",
    "MockLLMError",
    "RequestRejected",
    "ScriptLimitReached",
    "ScriptValidationError",
    "StrictnessError",
    "UnknownProtocol",
    "UnmockedRequestError",
]


class MockLLMError(Exception):
    """The root of mockllm's exceptions."""


class FileError(MockLLMError, ValueError):
    """A file that cannot be used: ``path``, the ``line`` where it goes wrong (``None``
    when no line is to blame) and the ``reason``; the message is ``path:line: reason``."""

    def __init__(self, path: Path | str, line: int | None, reason: str) -> None:
        where = f"{path}:{line}" if line is not None else str(path)
        super().__init__(f"{where}: {reason}")
        self.path = Path(path)
        self.line = line
        self.reason = reason


class RequestRejected(MockLLMError):
    """A request the real provider would answer with a 4xx.

    ``param`` names the offending field where the provider would (OpenAI's ``param``).
    The engine renders it with the codec's own error body.
    """

    def __init__(self, message: str, *, status: int = 400, type: str | None = None, param: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.type = type
        self.param = param


class UnknownProtocol(MockLLMError, ValueError):
    """A protocol name that no wire codec speaks."""


class InvalidScript(MockLLMError, TypeError):
    """A script (or its match) given to ``MockLLM.script`` in a form it cannot use."""


class ScriptValidationError(MockLLMError, ValidationError):
    """A scripting model built with bad fields. ``errors()`` is pydantic's; the message is
    ``problems``, one ``where: what`` a line (built by ``mockllm._validation``)."""

    problems: list[str]

    def __str__(self) -> str:
        problems = getattr(self, "problems", None) or [ValidationError.__str__(self)]
        count = f"{len(problems)} problems" if len(problems) > 1 else "1 problem"
        return f"invalid {self.title} ({count}):\n" + "\n".join(f"  {problem}" for problem in problems)


class ScriptLimitReached(MockLLMError):
    """Registering one more script would pass the mock's limits (``Limits.max_scripts``
    scripts or ``Limits.scripts_bytes`` of their JSON); the server answers it with a 409.
    ``MockLLM.reset`` or removing scripts makes room."""


class StrictnessError(MockLLMError, AssertionError):
    """The mock saw something that makes a passing test untrustworthy (a fallback reply,
    an unscripted 4xx, a scripted step never reached, a tool call the request did not
    declare, a request to a provider host it does not serve); the message lists each
    one and names the opt-out (``mockllm._verdict``)."""


class UnmockedRequestError(StrictnessError):
    """A request went to a host no interception serves while ``block_unmocked`` was on,
    or to a provider host while a pytest fixture refuses them."""
