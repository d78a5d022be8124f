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
    explain                                         why a request got its reply
    MockLLMError                                    the root of every exception raised here

Everything else lives in ``_``-private modules and may change without notice.
"""

from __future__ import annotations

from mockllm._engine import MockLLM
from mockllm._exceptions import (
    InvalidScript,
    MockLLMError,
    RequestRejected,
    ScriptLimitReached,
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
from mockllm._registered import RegisteredScript, ScriptMatch
from mockllm._server import create_app, serve
from mockllm._steps import UnusedStep
from mockllm._transports import HTTPX2Transport, HTTPXTransport
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
    "RegisteredScript",
    "RequestRejected",
    "ScriptLimitReached",
    "ScriptMatch",
    "StrictnessError",
    "TextMessage",
    "TimingSpec",
    "ToolCallMessage",
    "ToolCallSpec",
    "UndeclaredToolCall",
    "UnknownProtocol",
    "UnmockedRequestError",
    "UnusedStep",
    "__version__",
    "create_app",
    "explain",
    "intercept",
    "refuse_hosts",
    "serve",
    "verify_findings",
]
