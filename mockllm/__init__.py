"""mockllm: a deterministic mock LLM scripted by instruction chains.

A test puts an instruction chain in a user message (or registers one with
``MockLLM.script``); the mock answers each request by counting the assistant turns since
that message. ``explain`` tells why a request got the reply it did.

The doors, all importable from here::

    MockLLM, JournalEntry, UnusedStep, Limits       the engine, its journal and its caps
    InstructionChain, Instruction, ...Spec          the scripting models
    HTTPXTransport, HTTPX2Transport                 in-process transports (no socket)
    intercept                                       patch httpx/httpx2 clients in a block
    create_app, serve                               the HTTP server (Starlette)
    RecordingLibrary, RecordingSession, Recorder,   record real traffic and replay it
    RequestMatcher, RecordingError, SecretInRecording  (docs/recording.md)
    explain                                         why a request got its reply
    assert_trajectory                               the tool calls an app made, as expected
    validation_problems, reject_unknown_keys        a script's problems, one a line
    MockLLMError                                    the root of every exception raised here

Everything else lives in ``_``-private modules and may change without notice.
"""

from __future__ import annotations

from mockllm._engine import JournalEntry, MockLLM, UnusedStep
from mockllm._exceptions import (
    InvalidScript,
    MockLLMError,
    RequestRejected,
    ScriptLimitReached,
    ScriptValidationError,
    UnknownProtocol,
    UnmockedRequestError,
)
from mockllm._explain import explain
from mockllm._instructions import (
    INSTRUCTION_END,
    INSTRUCTION_START,
    ContentSpec,
    ErrorSpec,
    Instruction,
    InstructionChain,
    TextMessage,
    TimingSpec,
    ToolCallMessage,
    ToolCallSpec,
    reject_unknown_keys,
)
from mockllm._intercept import intercept
from mockllm._limits import Limits
from mockllm._mock_response import MockResponse
from mockllm._recording.format import RecordingError
from mockllm._recording.matching import RequestMatcher
from mockllm._recording.recorder import Recorder
from mockllm._recording.replay import RecordingLibrary
from mockllm._recording.scrub import SecretInRecording
from mockllm._recording.session import RecordingSession
from mockllm._registered import RegisteredScript, ScriptMatch
from mockllm._server import create_app, serve
from mockllm._trajectory import assert_trajectory
from mockllm._transports import HTTPX2Transport, HTTPXTransport
from mockllm._validation import validation_problems
from mockllm._wire.registry import PROTOCOLS

__version__ = "0.1.0"

__all__ = [
    "INSTRUCTION_END",
    "INSTRUCTION_START",
    "PROTOCOLS",
    "ContentSpec",
    "ErrorSpec",
    "HTTPX2Transport",
    "HTTPXTransport",
    "Instruction",
    "InstructionChain",
    "InvalidScript",
    "JournalEntry",
    "Limits",
    "MockLLM",
    "MockLLMError",
    "MockResponse",
    "Recorder",
    "RecordingError",
    "RecordingLibrary",
    "RecordingSession",
    "RegisteredScript",
    "RequestMatcher",
    "RequestRejected",
    "ScriptLimitReached",
    "ScriptMatch",
    "ScriptValidationError",
    "SecretInRecording",
    "TextMessage",
    "TimingSpec",
    "ToolCallMessage",
    "ToolCallSpec",
    "UnknownProtocol",
    "UnmockedRequestError",
    "UnusedStep",
    "__version__",
    "assert_trajectory",
    "create_app",
    "explain",
    "intercept",
    "reject_unknown_keys",
    "serve",
    "validation_problems",
]
