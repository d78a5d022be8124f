"""harness.systems.chain: the ChainExecutor of seeds 000/001 — TOOL, LLM, RAG_QUERY and
POLICY_GATE steps, dynamic step insertion, guards, events, MCP context blocks,
``am7://`` references (one resolver for named resources), permissions, character
records, a SQLite plan store and export as chat history."""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.systems.lazy_names import LazyNames

if TYPE_CHECKING:
    from harness.systems.chain.access import Permissions as Permissions
    from harness.systems.chain.characters import Character as Character
    from harness.systems.chain.characters import CharacterError as CharacterError
    from harness.systems.chain.characters import character_tools as character_tools
    from harness.systems.chain.characters import read_character as read_character
    from harness.systems.chain.context import restore_context as restore_context
    from harness.systems.chain.context import save_context as save_context
    from harness.systems.chain.errors import PlanExecutionError as PlanExecutionError
    from harness.systems.chain.executor import ChainExecutor as ChainExecutor
    from harness.systems.chain.executor import ChainListener as ChainListener
    from harness.systems.chain.export import chain_chat_history as chain_chat_history
    from harness.systems.chain.mcp_context import FilteredContext as FilteredContext
    from harness.systems.chain.mcp_context import McpContextBlock as McpContextBlock
    from harness.systems.chain.mcp_context import McpContextBuilder as McpContextBuilder
    from harness.systems.chain.mcp_context import filter_context as filter_context
    from harness.systems.chain.mcp_context import parse_context as parse_context
    from harness.systems.chain.models import ChainEvent as ChainEvent
    from harness.systems.chain.models import ChainPlan as ChainPlan
    from harness.systems.chain.models import PlanStep as PlanStep
    from harness.systems.chain.models import PromptConfig as PromptConfig
    from harness.systems.chain.models import StepStatus as StepStatus
    from harness.systems.chain.models import StepType as StepType
    from harness.systems.chain.policy import ChatOperationPattern as ChatOperationPattern
    from harness.systems.chain.policy import Condition as Condition
    from harness.systems.chain.policy import ExpressionPattern as ExpressionPattern
    from harness.systems.chain.policy import Policy as Policy
    from harness.systems.chain.policy import PolicyDecision as PolicyDecision
    from harness.systems.chain.policy import Rule as Rule
    from harness.systems.chain.store import PlanStore as PlanStore
    from harness.systems.chain.store import SQLitePlanStore as SQLitePlanStore
    from harness.systems.chain.uris import Am7Uri as Am7Uri
    from harness.systems.chain.uris import UnknownReference as UnknownReference
    from harness.systems.chain.uris import plan_uri as plan_uri
    from harness.systems.chain.uris import resolve_name as resolve_name
    from harness.systems.chain.vectors import InMemoryVectorStore as InMemoryVectorStore
    from harness.systems.chain.vectors import VectorHit as VectorHit
    from harness.systems.chain.vectors import VectorStore as VectorStore

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


# Imported when first used: what imports one module of the package (``access`` for the
# service's tokens, ``uris``) does not pay for the executor, the models and the model
# client (a quarter of a second of CPU), as a process that refuses to start need not.
__getattr__ = LazyNames(__name__)
