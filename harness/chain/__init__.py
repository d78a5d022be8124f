"""harness.chain: the ChainExecutor of seeds 000/001 — TOOL, LLM, RAG_QUERY and
POLICY_GATE steps, dynamic step insertion, guards, events, MCP context blocks,
``am7://`` references (one resolver for named resources), permissions, character
records, a SQLite plan store and export as chat history."""

from harness.chain.access import EVERYTHING, Permissions
from harness.chain.characters import CHARACTER_TOOL_NAMES, Character, CharacterError, character_tools, read_character
from harness.chain.context import restore_context, save_context
from harness.chain.errors import PlanExecutionError
from harness.chain.executor import ABSOLUTE_MAX_STEPS, ChainExecutor, ChainListener
from harness.chain.export import MAGIC8_KEYS, TYPE_LABELS, chain_chat_history
from harness.chain.mcp_context import (
    CITATION_SCHEMA,
    FilteredContext,
    McpContextBlock,
    McpContextBuilder,
    filter_context,
    parse_context,
)
from harness.chain.models import ChainEvent, ChainPlan, PlanStep, PromptConfig, StepStatus, StepType
from harness.chain.policy import ChatOperationPattern, Condition, ExpressionPattern, Policy, PolicyDecision, Rule
from harness.chain.routing import MAX_INSERTED_PER_DECISION, ROUTE_PROMPT
from harness.chain.store import PlanStore, SQLitePlanStore
from harness.chain.uris import Am7Uri, UnknownReference, plan_uri, resolve_name
from harness.chain.vectors import InMemoryVectorStore, VectorHit, VectorStore

__all__ = [
    "ABSOLUTE_MAX_STEPS",
    "Am7Uri",
    "CHARACTER_TOOL_NAMES",
    "CITATION_SCHEMA",
    "ChainEvent",
    "ChainExecutor",
    "ChainListener",
    "ChainPlan",
    "Character",
    "CharacterError",
    "ChatOperationPattern",
    "Condition",
    "EVERYTHING",
    "ExpressionPattern",
    "FilteredContext",
    "InMemoryVectorStore",
    "MAGIC8_KEYS",
    "MAX_INSERTED_PER_DECISION",
    "McpContextBlock",
    "McpContextBuilder",
    "Permissions",
    "PlanExecutionError",
    "PlanStep",
    "PlanStore",
    "Policy",
    "PolicyDecision",
    "PromptConfig",
    "ROUTE_PROMPT",
    "Rule",
    "SQLitePlanStore",
    "StepStatus",
    "StepType",
    "TYPE_LABELS",
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
