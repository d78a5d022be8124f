"""mockllm: a deterministic mock LLM scripted by instruction chains.

A test puts an instruction chain in a user message (or registers one with
``MockLLM.script``); the mock answers each request by counting the assistant turns since
that message. ``explain`` tells why a request got the reply it did.

The doors, all importable from here::

    MockLLM, JournalEntry, UnusedStep, Limits       the engine, its journal and its caps
    Journal, Outcome, Recorded{Request,Reply,ToolCall}, UndeclaredToolCall,
    ImpossibleReply, ReplyBreach                    the journal's typed record and queries
    MintedIds                                       the ids a mock minted (from its journal)
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

from mockllm._lazy import door as _door
from mockllm._lazy import doors as _doors

if _TYPE_CHECKING:
    from mockllm._engine import MockLLM as MockLLM
    from mockllm._exceptions import InvalidScript as InvalidScript
    from mockllm._exceptions import MockLLMError as MockLLMError
    from mockllm._exceptions import RequestRejected as RequestRejected
    from mockllm._exceptions import ScriptLimitReached as ScriptLimitReached
    from mockllm._exceptions import ScriptValidationError as ScriptValidationError
    from mockllm._exceptions import StrictnessError as StrictnessError
    from mockllm._exceptions import UnknownProtocol as UnknownProtocol
    from mockllm._exceptions import UnmockedRequestError as UnmockedRequestError
    from mockllm._explain import explain as explain
    from mockllm._instructions import INSTRUCTION_END as INSTRUCTION_END
    from mockllm._instructions import INSTRUCTION_START as INSTRUCTION_START
    from mockllm._instructions import ContentSpec as ContentSpec
    from mockllm._instructions import ErrorSpec as ErrorSpec
    from mockllm._instructions import Instruction as Instruction
    from mockllm._instructions import InstructionChain as InstructionChain
    from mockllm._instructions import TextMessage as TextMessage
    from mockllm._instructions import TimingSpec as TimingSpec
    from mockllm._instructions import ToolCallMessage as ToolCallMessage
    from mockllm._instructions import ToolCallSpec as ToolCallSpec
    from mockllm._instructions import reject_unknown_keys as reject_unknown_keys
    from mockllm._intercept import intercept as intercept
    from mockllm._intercept import refuse_hosts as refuse_hosts
    from mockllm._journal import Journal as Journal
    from mockllm._journal import JournalEntry as JournalEntry
    from mockllm._journal import Outcome as Outcome
    from mockllm._journal import RecordedReply as RecordedReply
    from mockllm._journal import RecordedRequest as RecordedRequest
    from mockllm._journal import RecordedToolCall as RecordedToolCall
    from mockllm._journal import UndeclaredToolCall as UndeclaredToolCall
    from mockllm._limits import Limits as Limits
    from mockllm._mock_response import MockResponse as MockResponse
    from mockllm._recording.format import RecordingError as RecordingError
    from mockllm._recording.matching import RequestMatcher as RequestMatcher
    from mockllm._recording.recorder import Recorder as Recorder
    from mockllm._recording.replay import RecordingLibrary as RecordingLibrary
    from mockllm._recording.scrub import SecretInRecording as SecretInRecording
    from mockllm._recording.session import RecordingSession as RecordingSession
    from mockllm._registered import RegisteredScript as RegisteredScript
    from mockllm._registered import ScriptMatch as ScriptMatch
    from mockllm._reply_breach import ImpossibleReply as ImpossibleReply
    from mockllm._reply_breach import ReplyBreach as ReplyBreach
    from mockllm._serve import serve as serve
    from mockllm._server import create_app as create_app
    from mockllm._shapes import StreamFaults as StreamFaults
    from mockllm._shapes import StreamShape as StreamShape
    from mockllm._steps import UnusedStep as UnusedStep
    from mockllm._trajectory import assert_trajectory as assert_trajectory
    from mockllm._transports import HTTPX2Transport as HTTPX2Transport
    from mockllm._transports import HTTPXTransport as HTTPXTransport
    from mockllm._validation import validation_problems as validation_problems
    from mockllm._verdict import Allowances as Allowances
    from mockllm._verdict import Findings as Findings
    from mockllm._verdict import Problem as Problem
    from mockllm._verdict import ProblemKind as ProblemKind
    from mockllm._verdict import verify_findings as verify_findings
    from mockllm._wire.minted import MintedIds as MintedIds
    from mockllm._wire.registry import PROTOCOLS as PROTOCOLS


# The doors are the imports above (``as`` marks each a re-export for type checkers), the one
# list of them: the loader below reads it from this file's source the first time a door is
# asked for, and imports the door's module then (PEP 562). ``python -m mockllm serve`` thus
# imports only what serving needs (not httpx, rich and pygments, the recording and
# interception modules: about a fifth of its start), and ``import mockllm`` costs nothing
# until a name is used.

__version__ = "0.1.0"


def __getattr__(name: str) -> _Any:
    if name == "__all__":  # ``from mockllm import *``: every door, as the imports above list them
        value: _Any = sorted([*_doors(__name__), "__version__"])
    elif name == "strategies":  # after a bare ``import mockllm`` too, which never needs hypothesis
        value = _importlib.import_module("mockllm.strategies")
    else:
        return _door(__name__, name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_doors(__name__)))
