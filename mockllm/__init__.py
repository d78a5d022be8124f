"""mockllm: a deterministic mock LLM scripted by instruction chains.

A test puts an instruction chain in a user message; the mock answers each request by
counting the assistant turns since that message. See ``mockllm.explain`` to see why a
request got the reply it did.
"""

from __future__ import annotations

from mockllm.engine import JournalEntry, MockLLM
from mockllm.conversation import Conversation, Message
from mockllm.explain import explain, read_conversation, select
from mockllm.instructions import (
    INSTRUCTION_END,
    INSTRUCTION_START,
    ContentSpec,
    ErrorSpec,
    Instruction,
    InstructionChain,
    TimingSpec,
    ToolCallSpec,
)
from mockllm.plan import ReplyPlan
from mockllm.replies import build_reply_plan
from mockllm.selection import Selection
from mockllm.wire.registry import PROTOCOLS

__version__ = "0.1.0"

__all__ = [
    "INSTRUCTION_END",
    "INSTRUCTION_START",
    "PROTOCOLS",
    "ContentSpec",
    "Conversation",
    "ErrorSpec",
    "Instruction",
    "InstructionChain",
    "JournalEntry",
    "Message",
    "MockLLM",
    "ReplyPlan",
    "Selection",
    "TimingSpec",
    "ToolCallSpec",
    "build_reply_plan",
    "explain",
    "read_conversation",
    "select",
]
