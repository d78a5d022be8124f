"""Which code runs a scenario: a registry from the scenario's ``runner`` to a function.

A runner takes the scenario and a ``ModelClient`` already pointed at the mock, and
returns the run's events. The agent runner is registered here; others register with
``register_runner``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from harness.agent import AgentOptions, AgentRunner, ApprovalManager, FileStore, Tool, ToolError, ToolRegistry
from harness.agent.approvals import ApprovalRequest
from harness.events import Event
from harness.llm import ModelClient
from harness.scenarios.model import Scenario, ScenarioTool

__all__ = ["ScenarioRun", "get_runner", "register_runner", "run_agent_scenario"]


@dataclass
class ScenarioRun:
    events: list[Event]
    success: bool
    error: str | None = None
    final_text: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


Runner = Callable[[Scenario, ModelClient], Awaitable[ScenarioRun]]
_RUNNERS: dict[str, Runner] = {}

# A scripted "timeout" decision waits this long; its outcome does not depend on it.
_TIMEOUT_DECISION_S = 0.01


def register_runner(name: str, runner: Runner) -> None:
    """Make ``runner`` run the scenarios whose ``runner`` field is ``name``."""
    _RUNNERS[name] = runner


def get_runner(name: str) -> Runner:
    try:
        return _RUNNERS[name]
    except KeyError:
        raise LookupError(f"no runner is registered for runner: {name!r}; "
                          f"registered: {sorted(_RUNNERS)}") from None


def _canned(spec: ScenarioTool) -> Callable[..., Any]:
    """The scenario tool's handler: its canned result, or its error, whatever the arguments."""
    def handler(**arguments: Any) -> Any:
        if spec.error is not None:
            raise ToolError(spec.error)
        return spec.result
    return handler


async def run_agent_scenario(scenario: Scenario, client: ModelClient) -> ScenarioRun:
    """Run ``scenario`` through ``harness.agent.AgentRunner``.

    Tools return their canned results; approval decisions are taken in order
    (``approve``, ``reject``, ``timeout``; a request beyond the list times out).
    """
    decisions = list(scenario.approvals)

    def decide(request: ApprovalRequest) -> bool | None:
        decision = decisions.pop(0) if decisions else "timeout"
        return None if decision == "timeout" else decision == "approve"

    files = FileStore()
    for attachment in scenario.attachments:
        files.add(attachment.id, attachment.name, attachment.content, attachment.owner)
    runner = AgentRunner(
        client,
        tools=ToolRegistry(Tool(t.name, _canned(t), t.description, t.input_schema, t.approval)
                           for t in scenario.tools),
        approvals=ApprovalManager(timeout_s=_TIMEOUT_DECISION_S, decide=decide),
        files=files,
    )
    options = AgentOptions(attachments=[a.id for a in scenario.attachments],
                           **{k: v for k, v in scenario.options.items() if k != "attachments"})
    with runner:
        result = await runner.run(scenario.tagged_prompt(), scenario.session_id, None, scenario.user_id, options)
    return ScenarioRun(result.events, result.success, result.error, result.final_text)


register_runner("agent", run_agent_scenario)


async def run_planner_scenario(scenario: Scenario, client: ModelClient) -> ScenarioRun:
    """Run ``scenario`` through ``harness.planner.TaskExecutor`` (the query is the prompt)."""
    from harness.planner import TaskExecutor

    executor = TaskExecutor(client, **scenario.options)
    try:
        result = await executor.run(scenario.tagged_prompt(), scenario.session_id)
    finally:
        executor.close()
    return ScenarioRun(result.events, result.success, result.error, result.final_text)


register_runner("planner", run_planner_scenario)


async def run_chain_scenario(scenario: Scenario, client: ModelClient) -> ScenarioRun:
    """Run ``scenario`` through ``harness.chain.ChainExecutor``: ``plan`` is the plan
    (without one the model plans from the prompt), tools return their canned results,
    ``documents`` fill the vector store, ``policies`` and ``prompt_configs`` are named."""
    from harness.chain import ChainEvent, ChainExecutor, ChainPlan, InMemoryVectorStore, PlanExecutionError
    from harness.chain import PromptConfig

    store = InMemoryVectorStore(chunk_words=int(scenario.options.get("chunk_words", 40)))
    for document in scenario.documents:
        store.add_document(document.uri, document.text)

    from harness.identity.seeding import seeded_identity_tools

    # With an identity section, the identity tools (createUser…) act in the executor's organization, "default".
    identity = seeded_identity_tools(scenario.identity) if scenario.identity is not None else {}
    tools = {**identity, **{t.name: _canned(t) for t in scenario.tools}}
    executor = ChainExecutor(client, tools=tools,
                             prompt_configs={n: PromptConfig(s) for n, s in scenario.prompt_configs.items()},
                             policies=scenario.policies, vector_store=store,
                             routing=bool(scenario.options.get("routing", True)))
    events: list[Event] = []

    def record(event: ChainEvent) -> None:
        events.append(event.as_event(len(events), scenario.session_id))

    executor.add_listener(record)
    plan = ChainPlan.model_validate({**(scenario.plan or {}), "planQuery": scenario.tagged_prompt(),
                                     "objectId": scenario.name})
    try:
        done = await executor.execute_chain(plan)
    except PlanExecutionError as exc:
        return ScenarioRun(events, False, str(exc))
    output = done.output if isinstance(done.output, str) or done.output is None else str(done.output)
    return ScenarioRun(events, True, None, output)


register_runner("chain", run_chain_scenario)
