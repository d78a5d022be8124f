"""harness: what runs against the mock — chain executor, agent runner, planner,
invariants, golden snapshots, scenarios and the pytest plugin.

The doors, all importable from here::

    model_client, ModelClient                      one streamed assistant turn over HTTP
    AgentRunner, AgentOptions, AgentResult,        the agent loop of the seed flows
      Tool, ToolRegistry
    ChainExecutor, ChainPlan, PlanStep,            the chain executor and its plans
      ChainEvent, Policy, InMemoryVectorStore,
      VectorStore
    TaskExecutor                                   the action-schema planner
    check_*_flow, check_*                          the invariants over event sequences
    GoldenExtension, ScenarioGoldenExtension       syrupy extensions writing golden tables
    volatile                                       a matcher opting a golden's fields in as volatile
    ScenarioRunner, RunnerContext, ScenarioRun,    the scenario runner contract
      MockClients, register_runner, speaks
    HarnessError                                   the root of every exception raised
                                                   here (tree in ``harness.exceptions``)

Names load on first use (PEP 562), so ``import harness`` and the pytest plugin stay
cheap and work without the optional extras; a door whose extra is missing fails with
the ``pip install`` command that brings it. The subpackages (``harness.systems.chain``,
``harness.systems.agent`` …) hold the rest: stores, policies' parts, prompts and constants.

PYTEST_DONT_REWRITE: ``python -m harness replay`` imports this package before it starts
pytest in the same process; this module has no assertions to rewrite, and the marker
keeps pytest from warning that it could not.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from harness.exceptions import EXTRAS as _EXTRAS
from harness.exceptions import HarnessError, MissingExtra
from harness.exceptions import missing_extra as _missing_extra
from harness.exceptions import not_installed as _not_installed

if TYPE_CHECKING:
    from harness.golden.assertion import FallbackRefused
    from harness.golden.extension import GoldenExtension, ScenarioGoldenExtension
    from harness.golden.records import volatile
    from harness.invariants.flows import (
        check_approval_flow,
        check_attachment_flow,
        check_chain_flow,
        check_error_flow,
        check_extended_thinking_flow,
        check_simple_message_flow,
        check_tool_use_flow,
    )
    from harness.invariants.report import InvariantError
    from harness.invariants.rules import (
        check_approval_ordering,
        check_common,
        check_event_indexes,
        check_final_content_matches_chunks,
        check_persistence_states,
        check_sequence_numbers,
        check_terminal_event,
        check_thinking_before_text,
        check_tool_pairing,
        check_user_message_first,
    )
    from harness.plugin.strict import UnscriptedRequestsError, UnusedStepsError
    from harness.scenarios.contract import MockClients, RunnerContext, ScenarioRun, ScenarioRunner, speaks
    from harness.scenarios.model import ScenarioError
    from harness.scenarios.registry import RunnerNotFound, register_runner
    from harness.systems.agent.runner import AgentOptions, AgentResult, AgentRunner
    from harness.systems.agent.tools import Tool, ToolError, ToolRegistry
    from harness.systems.chain.errors import PlanExecutionError
    from harness.systems.chain.executor import ChainExecutor
    from harness.systems.chain.models import ChainEvent, ChainPlan, PlanStep
    from harness.systems.chain.policy import Policy
    from harness.systems.chain.vectors import InMemoryVectorStore, VectorStore
    from harness.systems.llm import model_client
    from harness.systems.llm.client import ModelClient, ModelError
    from harness.systems.planner.executor import TaskExecutor

# name -> the module that defines it; imported on first access.
_LAZY = {
    "ModelClient": "harness.systems.llm.client",
    "ModelError": "harness.systems.llm.client",
    "model_client": "harness.systems.llm",
    "AgentOptions": "harness.systems.agent.runner",
    "AgentResult": "harness.systems.agent.runner",
    "AgentRunner": "harness.systems.agent.runner",
    "Tool": "harness.systems.agent.tools",
    "ToolError": "harness.systems.agent.tools",
    "ToolRegistry": "harness.systems.agent.tools",
    "ChainEvent": "harness.systems.chain.models",
    "ChainPlan": "harness.systems.chain.models",
    "PlanStep": "harness.systems.chain.models",
    "ChainExecutor": "harness.systems.chain.executor",
    "PlanExecutionError": "harness.systems.chain.errors",
    "Policy": "harness.systems.chain.policy",
    "InMemoryVectorStore": "harness.systems.chain.vectors",
    "VectorStore": "harness.systems.chain.vectors",
    "TaskExecutor": "harness.systems.planner.executor",
    "InvariantError": "harness.invariants.report",
    "check_approval_ordering": "harness.invariants.rules",
    "check_common": "harness.invariants.rules",
    "check_event_indexes": "harness.invariants.rules",
    "check_final_content_matches_chunks": "harness.invariants.rules",
    "check_persistence_states": "harness.invariants.rules",
    "check_sequence_numbers": "harness.invariants.rules",
    "check_terminal_event": "harness.invariants.rules",
    "check_thinking_before_text": "harness.invariants.rules",
    "check_tool_pairing": "harness.invariants.rules",
    "check_user_message_first": "harness.invariants.rules",
    "check_approval_flow": "harness.invariants.flows",
    "check_attachment_flow": "harness.invariants.flows",
    "check_chain_flow": "harness.invariants.flows",
    "check_error_flow": "harness.invariants.flows",
    "check_extended_thinking_flow": "harness.invariants.flows",
    "check_simple_message_flow": "harness.invariants.flows",
    "check_tool_use_flow": "harness.invariants.flows",
    "GoldenExtension": "harness.golden.extension",
    "ScenarioGoldenExtension": "harness.golden.extension",
    "FallbackRefused": "harness.golden.assertion",
    "volatile": "harness.golden.records",
    "MockClients": "harness.scenarios.contract",
    "RunnerContext": "harness.scenarios.contract",
    "ScenarioRun": "harness.scenarios.contract",
    "ScenarioRunner": "harness.scenarios.contract",
    "speaks": "harness.scenarios.contract",
    "RunnerNotFound": "harness.scenarios.registry",
    "register_runner": "harness.scenarios.registry",
    "ScenarioError": "harness.scenarios.model",
    "UnusedStepsError": "harness.plugin.strict",
    "UnscriptedRequestsError": "harness.plugin.strict",
}

__all__ = [
    "AgentOptions",
    "AgentResult",
    "AgentRunner",
    "ChainEvent",
    "ChainExecutor",
    "ChainPlan",
    "FallbackRefused",
    "GoldenExtension",
    "HarnessError",
    "InMemoryVectorStore",
    "InvariantError",
    "MissingExtra",
    "MockClients",
    "ModelClient",
    "ModelError",
    "PlanExecutionError",
    "PlanStep",
    "Policy",
    "RunnerContext",
    "RunnerNotFound",
    "ScenarioError",
    "ScenarioGoldenExtension",
    "ScenarioRun",
    "ScenarioRunner",
    "TaskExecutor",
    "Tool",
    "ToolError",
    "ToolRegistry",
    "UnscriptedRequestsError",
    "UnusedStepsError",
    "VectorStore",
    "check_approval_flow",
    "check_approval_ordering",
    "check_attachment_flow",
    "check_chain_flow",
    "check_common",
    "check_error_flow",
    "check_event_indexes",
    "check_extended_thinking_flow",
    "check_final_content_matches_chunks",
    "check_persistence_states",
    "check_sequence_numbers",
    "check_simple_message_flow",
    "check_terminal_event",
    "check_thinking_before_text",
    "check_tool_pairing",
    "check_tool_use_flow",
    "check_user_message_first",
    "model_client",
    "register_runner",
    "speaks",
    "volatile",
]


def __getattr__(name: str) -> Any:
    module_name = _LAZY.get(name)
    if module_name is None:
        raise AttributeError(f"module 'harness' has no attribute {name!r}")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        package = _not_installed(exc)
        if isinstance(exc, MissingExtra) or package not in _EXTRAS:
            raise
        raise _missing_extra(package, needed_by=f"harness.{name}") from exc
    value = getattr(module, name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
