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
    explain                                         why a request got its reply
    assert_trajectory                               the tool calls an app made, as expected
    StreamShape, StreamFaults                       how a stream is cut and delivered; faults in it
    mockllm.strategies                              hypothesis strategies over them (imported when used)
    MockLLMError                                    the root of every exception raised here

Everything else lives in ``_``-private modules and may change without notice.
"""

from __future__ import annotations

import typing as _typing

from mockllm._engine import JournalEntry, MockLLM, UnusedStep
from mockllm._exceptions import (
    InvalidScript,
    MockLLMError,
    RequestRejected,
    ScriptLimitReached,
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
)
from mockllm._intercept import intercept
from mockllm._limits import Limits
from mockllm._mock_response import MockResponse
from mockllm._registered import RegisteredScript, ScriptMatch
from mockllm._server import create_app, serve
from mockllm._shapes import StreamFaults, StreamShape
from mockllm._trajectory import assert_trajectory
from mockllm._transports import HTTPX2Transport, HTTPXTransport
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
    "RegisteredScript",
    "RequestRejected",
    "ScriptLimitReached",
    "ScriptMatch",
    "StreamFaults",
    "StreamShape",
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
    "serve",
]


def __getattr__(name: str) -> _typing.Any:
    # ``mockllm.strategies`` after a bare ``import mockllm``: imported on first use, so
    # that ``import mockllm`` never needs hypothesis.
    if name == "strategies":
        import importlib

        return importlib.import_module("mockllm.strategies")
    raise AttributeError(f"module 'mockllm' has no attribute {name!r}")
