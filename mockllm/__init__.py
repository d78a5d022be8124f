"""mockllm: a deterministic mock LLM scripted by instruction chains.

A test puts an instruction chain in a user message (or registers one with
``MockLLM.script``); the mock answers each request by counting the assistant turns since
that message. ``explain`` tells why a request got the reply it did.

The doors, all importable from here::

    MockLLM, JournalEntry, UnusedStep, Limits       the engine, its journal and its caps
    Journal, Outcome, Recorded{Request,Reply,ToolCall}, UndeclaredToolCall
                                                    the journal's typed record and queries
    Findings, Problem, ProblemKind, Allowances,     the verdict: one rule at every door
    verify_findings, StrictnessError                (docs/strictness.md)
    InstructionChain, Instruction, ...Spec          the scripting models
    HTTPXTransport, HTTPX2Transport                 in-process transports (no socket)
    intercept, refuse_hosts                         patch httpx/httpx2 clients in a block
    create_app, serve                               the HTTP server (Starlette)
    RecordingLibrary, RecordingSession, Recorder,   record real traffic and replay it
    RequestMatcher, RecordingError, SecretInRecording  (docs/recording.md)
    explain                                         why a request got its reply
    assert_trajectory                               the tool calls an app made, as expected
    validation_problems, reject_unknown_keys        a script's problems, one a line
    StreamShape, StreamFaults                       how a stream is cut and delivered; faults in it
    mockllm.strategies                              hypothesis strategies over them (imported when used)
    MockLLMError                                    the root of every exception raised here

Everything else lives in ``_``-private modules and may change without notice.
"""

from __future__ import annotations

import typing as _typing

from mockllm._engine import MockLLM
from mockllm._exceptions import (
    InvalidScript,
    MockLLMError,
    RequestRejected,
    ScriptLimitReached,
    ScriptValidationError,
    StrictnessError,
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
from mockllm._intercept import intercept, refuse_hosts
from mockllm._journal import (
    Journal,
    JournalEntry,
    Outcome,
    RecordedReply,
    RecordedRequest,
    RecordedToolCall,
    UndeclaredToolCall,
)
from mockllm._limits import Limits
from mockllm._mock_response import MockResponse
from mockllm._recording.format import RecordingError
from mockllm._recording.matching import RequestMatcher
from mockllm._recording.recorder import Recorder
from mockllm._recording.replay import RecordingLibrary
from mockllm._recording.scrub import SecretInRecording
from mockllm._recording.session import RecordingSession
from mockllm._registered import RegisteredScript, ScriptMatch
from mockllm._serve import serve
from mockllm._server import create_app
from mockllm._shapes import StreamFaults, StreamShape
from mockllm._steps import UnusedStep
from mockllm._trajectory import assert_trajectory
from mockllm._transports import HTTPX2Transport, HTTPXTransport
from mockllm._validation import validation_problems
from mockllm._verdict import Allowances, Findings, Problem, ProblemKind, verify_findings
from mockllm._wire.registry import PROTOCOLS

__version__ = "0.1.0"

__all__ = [
    "INSTRUCTION_END",
    "INSTRUCTION_START",
    "PROTOCOLS",
    "Allowances",
    "ContentSpec",
    "ErrorSpec",
    "Findings",
    "HTTPX2Transport",
    "HTTPXTransport",
    "Instruction",
    "InstructionChain",
    "InvalidScript",
    "Journal",
    "JournalEntry",
    "Limits",
    "MockLLM",
    "MockLLMError",
    "MockResponse",
    "Outcome",
    "Problem",
    "ProblemKind",
    "RecordedReply",
    "RecordedRequest",
    "RecordedToolCall",
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
    "StrictnessError",
    "StreamFaults",
    "StreamShape",
    "TextMessage",
    "TimingSpec",
    "ToolCallMessage",
    "ToolCallSpec",
    "UndeclaredToolCall",
    "UnknownProtocol",
    "UnmockedRequestError",
    "UnusedStep",
    "__version__",
    "assert_trajectory",
    "create_app",
    "explain",
    "intercept",
    "refuse_hosts",
    "reject_unknown_keys",
    "serve",
    "validation_problems",
    "verify_findings",
]


def __getattr__(name: str) -> _typing.Any:
    # ``mockllm.strategies`` after a bare ``import mockllm``: imported on first use, so
    # that ``import mockllm`` never needs hypothesis.
    if name == "strategies":
        import importlib

        return importlib.import_module("mockllm.strategies")
    raise AttributeError(f"module 'mockllm' has no attribute {name!r}")
