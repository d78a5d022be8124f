"""harness.systems.chain: the ChainExecutor of seeds 000/001 — TOOL, LLM, RAG_QUERY and
POLICY_GATE steps, dynamic step insertion, guards, events, MCP context blocks,
``am7://`` references (one resolver for named resources), permissions, character
records, a SQLite plan store and export as chat history."""

from harness.systems.chain.access import Permissions
from harness.systems.chain.characters import Character, CharacterError, character_tools, read_character
from harness.systems.chain.context import restore_context, save_context
from harness.systems.chain.errors import PlanExecutionError
from harness.systems.chain.executor import ChainExecutor, ChainListener
from harness.systems.chain.export import chain_chat_history
from harness.systems.chain.mcp_context import (
    FilteredContext,
    McpContextBlock,
    McpContextBuilder,
    filter_context,
    parse_context,
)
from harness.systems.chain.models import ChainEvent, ChainPlan, PlanStep, PromptConfig, StepStatus, StepType
from harness.systems.chain.policy import (
    ChatOperationPattern,
    Condition,
    ExpressionPattern,
    Policy,
    PolicyDecision,
    Rule,
)
from harness.systems.chain.store import PlanStore, SQLitePlanStore
from harness.systems.chain.uris import Am7Uri, UnknownReference, plan_uri, resolve_name
from harness.systems.chain.vectors import InMemoryVectorStore, VectorHit, VectorStore

__all__ = [
    "Am7Uri",
    "ChainEvent",
    "ChainExecutor",
    "ChainListener",
    "ChainPlan",
    "Character",
    "CharacterError",
    "ChatOperationPattern",
    "Condition",
    "ExpressionPattern",
    "FilteredContext",
    "InMemoryVectorStore",
    "McpContextBlock",
    "McpContextBuilder",
    "Permissions",
    "PlanExecutionError",
    "PlanStep",
    "PlanStore",
    "Policy",
    "PolicyDecision",
    "PromptConfig",
    "Rule",
    "SQLitePlanStore",
    "StepStatus",
    "StepType",
    "UnknownReference",
    "VectorHit",
    "VectorStore",
    "chain_chat_history",
    "character_tools",
    "filter_context",
    "parse_context",
    "plan_uri",
    "read_character",
    "resolve_name",
    "restore_context",
    "save_context",
]
