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

Names load on first use (PEP 562), so ``import mockllm`` is cheap and ``python -m mockllm
serve`` imports only what serving needs. Everything else lives in ``_``-private modules
and may change without notice.
"""

from __future__ import annotations

import importlib as _importlib
from typing import TYPE_CHECKING as _TYPE_CHECKING
from typing import Any as _Any

if _TYPE_CHECKING:
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

# Each door and the module that defines it, imported on first use (PEP 562): ``python -m
# mockllm serve`` then imports only what serving needs (not httpx, rich and pygments, the
# recording and interception modules: about a fifth of its start), and ``import mockllm``
# costs nothing until a name is used.
_LAZY = {
    "MockLLM": "mockllm._engine",
    "InvalidScript": "mockllm._exceptions",
    "MockLLMError": "mockllm._exceptions",
    "RequestRejected": "mockllm._exceptions",
    "ScriptLimitReached": "mockllm._exceptions",
    "ScriptValidationError": "mockllm._exceptions",
    "StrictnessError": "mockllm._exceptions",
    "UnknownProtocol": "mockllm._exceptions",
    "UnmockedRequestError": "mockllm._exceptions",
    "explain": "mockllm._explain",
    "INSTRUCTION_END": "mockllm._instructions",
    "INSTRUCTION_START": "mockllm._instructions",
    "ContentSpec": "mockllm._instructions",
    "ErrorSpec": "mockllm._instructions",
    "Instruction": "mockllm._instructions",
    "InstructionChain": "mockllm._instructions",
    "TextMessage": "mockllm._instructions",
    "TimingSpec": "mockllm._instructions",
    "ToolCallMessage": "mockllm._instructions",
    "ToolCallSpec": "mockllm._instructions",
    "reject_unknown_keys": "mockllm._instructions",
    "intercept": "mockllm._intercept",
    "refuse_hosts": "mockllm._intercept",
    "Journal": "mockllm._journal",
    "JournalEntry": "mockllm._journal",
    "Outcome": "mockllm._journal",
    "RecordedReply": "mockllm._journal",
    "RecordedRequest": "mockllm._journal",
    "RecordedToolCall": "mockllm._journal",
    "UndeclaredToolCall": "mockllm._journal",
    "Limits": "mockllm._limits",
    "MockResponse": "mockllm._mock_response",
    "RecordingError": "mockllm._recording.format",
    "RequestMatcher": "mockllm._recording.matching",
    "Recorder": "mockllm._recording.recorder",
    "RecordingLibrary": "mockllm._recording.replay",
    "SecretInRecording": "mockllm._recording.scrub",
    "RecordingSession": "mockllm._recording.session",
    "RegisteredScript": "mockllm._registered",
    "ScriptMatch": "mockllm._registered",
    "serve": "mockllm._serve",
    "create_app": "mockllm._server",
    "StreamFaults": "mockllm._shapes",
    "StreamShape": "mockllm._shapes",
    "UnusedStep": "mockllm._steps",
    "assert_trajectory": "mockllm._trajectory",
    "HTTPX2Transport": "mockllm._transports",
    "HTTPXTransport": "mockllm._transports",
    "validation_problems": "mockllm._validation",
    "Allowances": "mockllm._verdict",
    "Findings": "mockllm._verdict",
    "Problem": "mockllm._verdict",
    "ProblemKind": "mockllm._verdict",
    "verify_findings": "mockllm._verdict",
    "PROTOCOLS": "mockllm._wire.registry",
}

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


def __getattr__(name: str) -> _Any:
    # ``mockllm.strategies`` after a bare ``import mockllm`` too: that ``import mockllm``
    # never needs hypothesis.
    module = "mockllm.strategies" if name == "strategies" else _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'mockllm' has no attribute {name!r}")
    imported = _importlib.import_module(module)
    value = imported if name == "strategies" else getattr(imported, name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
