"""harness.chain: the ChainExecutor of seeds 000/001 — TOOL, LLM, RAG_QUERY and
POLICY_GATE steps, dynamic step insertion, guards, events, MCP context blocks,
``am7://`` references, a SQLite plan store and export as chat history."""

from harness.chain.context import restore_context, save_context
from harness.chain.errors import PlanExecutionError
from harness.chain.executor import ChainExecutor, ChainListener
from harness.chain.export import chain_chat_history
from harness.chain.mcp_context import (
    FilteredContext,
    McpContextBlock,
    McpContextBuilder,
    filter_context,
    parse_context,
)
from harness.chain.models import ChainEvent, ChainPlan, PlanStep, PromptConfig, StepStatus, StepType
from harness.chain.policy import ChatOperationPattern, Condition, ExpressionPattern, Policy, PolicyDecision, Rule
from harness.chain.store import PlanStore, SQLitePlanStore
from harness.chain.uris import Am7Uri, plan_uri
from harness.chain.vectors import InMemoryVectorStore, VectorHit, VectorStore

__all__ = [
    "Am7Uri",
    "ChainEvent",
    "ChainExecutor",
    "ChainListener",
    "ChainPlan",
    "ChatOperationPattern",
    "Condition",
    "ExpressionPattern",
    "FilteredContext",
    "InMemoryVectorStore",
    "McpContextBlock",
    "McpContextBuilder",
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
    "VectorHit",
    "VectorStore",
    "chain_chat_history",
    "filter_context",
    "parse_context",
    "plan_uri",
    "restore_context",
    "save_context",
]
