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

from typing import TYPE_CHECKING, Any

from harness.exceptions import EXTRAS as _EXTRAS
from harness.exceptions import MissingExtra as _MissingExtra
from harness.exceptions import missing_extra as _missing_extra
from harness.exceptions import not_installed as _not_installed
from harness.systems.lazy_names import LazyNames as _LazyNames

if TYPE_CHECKING:
    from harness.exceptions import HarnessError as HarnessError
    from harness.exceptions import MissingExtra as MissingExtra
    from harness.golden.extension import GoldenExtension as GoldenExtension
    from harness.golden.extension import ScenarioGoldenExtension as ScenarioGoldenExtension
    from harness.golden.records import volatile as volatile
    from harness.golden.refusal import FallbackRefused as FallbackRefused
    from harness.invariants.flows import check_approval_flow as check_approval_flow
    from harness.invariants.flows import check_attachment_flow as check_attachment_flow
    from harness.invariants.flows import check_chain_flow as check_chain_flow
    from harness.invariants.flows import check_error_flow as check_error_flow
    from harness.invariants.flows import check_extended_thinking_flow as check_extended_thinking_flow
    from harness.invariants.flows import check_simple_message_flow as check_simple_message_flow
    from harness.invariants.flows import check_tool_use_flow as check_tool_use_flow
    from harness.invariants.report import InvariantError as InvariantError
    from harness.invariants.rules import check_approval_ordering as check_approval_ordering
    from harness.invariants.rules import check_common as check_common
    from harness.invariants.rules import check_event_indexes as check_event_indexes
    from harness.invariants.rules import check_final_content_matches_chunks as check_final_content_matches_chunks
    from harness.invariants.rules import check_persistence_states as check_persistence_states
    from harness.invariants.rules import check_sequence_numbers as check_sequence_numbers
    from harness.invariants.rules import check_terminal_event as check_terminal_event
    from harness.invariants.rules import check_thinking_before_text as check_thinking_before_text
    from harness.invariants.rules import check_tool_pairing as check_tool_pairing
    from harness.invariants.rules import check_user_message_first as check_user_message_first
    from harness.plugin.strict import UnscriptedRequestsError as UnscriptedRequestsError
    from harness.plugin.strict import UnusedStepsError as UnusedStepsError
    from harness.scenarios.contract import MockClients as MockClients
    from harness.scenarios.contract import RunnerContext as RunnerContext
    from harness.scenarios.contract import ScenarioRun as ScenarioRun
    from harness.scenarios.contract import ScenarioRunner as ScenarioRunner
    from harness.scenarios.contract import speaks as speaks
    from harness.scenarios.model import ScenarioError as ScenarioError
    from harness.scenarios.registry import RunnerNotFound as RunnerNotFound
    from harness.scenarios.registry import register_runner as register_runner
    from harness.systems.agent.runner import AgentOptions as AgentOptions
    from harness.systems.agent.runner import AgentResult as AgentResult
    from harness.systems.agent.runner import AgentRunner as AgentRunner
    from harness.systems.agent.tools import Tool as Tool
    from harness.systems.agent.tools import ToolError as ToolError
    from harness.systems.agent.tools import ToolRegistry as ToolRegistry
    from harness.systems.chain.errors import PlanExecutionError as PlanExecutionError
    from harness.systems.chain.executor import ChainExecutor as ChainExecutor
    from harness.systems.chain.models import ChainEvent as ChainEvent
    from harness.systems.chain.models import ChainPlan as ChainPlan
    from harness.systems.chain.models import PlanStep as PlanStep
    from harness.systems.chain.policy import Policy as Policy
    from harness.systems.chain.vectors import InMemoryVectorStore as InMemoryVectorStore
    from harness.systems.chain.vectors import VectorStore as VectorStore
    from harness.systems.llm import model_client as model_client
    from harness.systems.llm.client import ModelClient as ModelClient
    from harness.systems.llm.client import ModelError as ModelError
    from harness.systems.planner.executor import TaskExecutor as TaskExecutor


# The doors are the imports above, written ``X as X`` (PEP 484's mark of a re-export): the
# one list of them, which type checkers read, and which ``LazyNames`` reads from this
# file's source to import each door the first time it is asked for.
_doors = _LazyNames(__name__)


def __getattr__(name: str) -> Any:
    try:
        return _doors(name)
    except ModuleNotFoundError as exc:
        package = _not_installed(exc)
        if isinstance(exc, _MissingExtra) or package not in _EXTRAS:
            raise
        raise _missing_extra(package, needed_by=f"harness.{name}") from exc


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_doors.names))
