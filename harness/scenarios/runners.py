"""The bundled scenario runners — ``agent``, ``chain``, ``planner`` — on the same
contract as a user's runner (``harness.scenarios.contract``): each takes a
``RunnerContext`` and returns a ``ScenarioRun``. They talk to the mock through the
harness's ``ModelClient``, which speaks Anthropic Messages, OpenAI Chat Completions and,
where google-genai is installed (the ``gemini`` extra), Gemini; not OpenAI Responses,
Azure OpenAI or Ollama. They declare that with ``speaks``, so ``protocols: all`` runs
them under each of those.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Callable, Iterable
from typing import Any

from harness.events import Event
from harness.scenarios.contract import RunnerContext, ScenarioRun, speaks
from harness.scenarios.model import ScenarioTool
from harness.systems.agent import AgentOptions, AgentRunner, ApprovalManager, FileStore, Tool, ToolError, ToolRegistry
from harness.systems.agent.approvals import ApprovalRequest
from harness.systems.llm import installed_protocols

__all__ = ["MODEL_CLIENT_PROTOCOLS", "run_agent_scenario", "run_chain_scenario", "run_planner_scenario"]

MODEL_CLIENT_PROTOCOLS = installed_protocols()
"""What ``harness.systems.llm.model_client`` speaks here (Gemini only where google-genai
is installed), hence the bundled runners."""

# A scripted "timeout" decision waits this long; its outcome does not depend on it.
_TIMEOUT_DECISION_S = 0.01


_CHAIN_OPTIONS = ("chunk_words", "routing")
_PLANNER_OPTIONS = ("planner_retries",)


def _options(options: dict[str, Any], known: Iterable[str], runner: str) -> dict[str, Any]:
    """``options``, once every key is one the runner reads: a misspelt one would otherwise
    be ignored (or a ``TypeError`` naming no file), and the run would not be the one the
    scenario describes."""
    known = sorted(known)
    for name in options:
        if name not in known:
            close = difflib.get_close_matches(name, known, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ValueError(
                f"options.{name}: the {runner} runner has no option {name!r}{hint} Its options: {', '.join(known)}."
            )
    return options


def _canned(spec: ScenarioTool) -> Callable[..., Any]:
    """The scenario tool's handler: its canned result, or its error, whatever the arguments."""

    def handler(**arguments: Any) -> Any:
        if spec.error is not None:
            raise ToolError(spec.error)
        return spec.result

    return handler


@speaks(*MODEL_CLIENT_PROTOCOLS)
async def run_agent_scenario(context: RunnerContext) -> ScenarioRun:
    """Run ``scenario`` through ``harness.systems.agent.AgentRunner``.

    Tools return their canned results; approval decisions are taken in order
    (``approve``, ``reject``, ``timeout``; a request beyond the list times out). The
    scenario's ``turns`` are the session's next messages, each run by the same runner
    (and event store) after the previous one succeeded; the events of all the runs are
    returned in order, each run starting with its ``user_message_sent``.
    """
    scenario, client = context.scenario, context.model_client()
    decisions = list(scenario.approvals)

    def decide(request: ApprovalRequest) -> bool | None:
        decision = decisions.pop(0) if decisions else "timeout"
        return None if decision == "timeout" else decision == "approve"

    files = FileStore()
    for attachment in scenario.attachments:
        files.add(attachment.id, attachment.name, attachment.content, attachment.owner)
    runner = AgentRunner(
        client,
        tools=ToolRegistry(Tool(t.name, _canned(t), t.description, t.input_schema, t.approval) for t in scenario.tools),
        approvals=ApprovalManager(timeout_s=_TIMEOUT_DECISION_S, decide=decide),
        files=files,
    )
    known = [f.name for f in dataclasses.fields(AgentOptions) if f.name != "attachments"]
    options = AgentOptions(
        attachments=[a.id for a in scenario.attachments],
        **_options({k: v for k, v in scenario.options.items() if k != "attachments"}, known, "agent"),
    )
    events: list[Event] = []
    with runner:
        for prompt in [scenario.tagged_prompt(), *(turn.tagged_prompt() for turn in scenario.turns)]:
            result = await runner.run(prompt, scenario.session_id, None, scenario.user_id, options)
            events.extend(result.events)
            if not result.success:
                break
    return ScenarioRun(events, result.success, result.error, result.final_text)


@speaks(*MODEL_CLIENT_PROTOCOLS)
async def run_planner_scenario(context: RunnerContext) -> ScenarioRun:
    """Run ``scenario`` through ``harness.systems.planner.TaskExecutor`` (the query is the prompt)."""
    from harness.systems.planner import TaskExecutor

    scenario, client = context.scenario, context.model_client()
    executor = TaskExecutor(client, **_options(scenario.options, _PLANNER_OPTIONS, "planner"))
    try:
        result = await executor.run(scenario.tagged_prompt(), scenario.session_id)
    finally:
        executor.close()
    return ScenarioRun(result.events, result.success, result.error, result.final_text)


@speaks(*MODEL_CLIENT_PROTOCOLS)
async def run_chain_scenario(context: RunnerContext) -> ScenarioRun:
    """Run ``scenario`` through ``harness.systems.chain.ChainExecutor``: ``plan`` is the plan
    (without one the model plans from the prompt), tools return their canned results,
    ``documents`` fill the vector store, ``policies`` and ``prompt_configs`` are named."""
    from harness.systems.chain import (
        ChainEvent,
        ChainExecutor,
        ChainPlan,
        InMemoryVectorStore,
        PlanExecutionError,
        PromptConfig,
    )

    scenario, client = context.scenario, context.model_client()
    _options(scenario.options, _CHAIN_OPTIONS, "chain")
    store = InMemoryVectorStore(chunk_words=int(scenario.options.get("chunk_words", 40)))
    for document in scenario.documents:
        store.add_document(document.uri, document.text)

    from harness.systems.identity.seeding import seeded_identity_tools

    # With an identity section, the identity tools (createUser…) act in the executor's organization, "default".
    identity = seeded_identity_tools(scenario.identity) if scenario.identity is not None else {}
    tools = {**identity, **{t.name: _canned(t) for t in scenario.tools}}
    executor = ChainExecutor(
        client,
        tools=tools,
        prompt_configs={n: PromptConfig(s) for n, s in scenario.prompt_configs.items()},
        policies=scenario.policies,
        vector_store=store,
        routing=bool(scenario.options.get("routing", True)),
    )
    events: list[Event] = []

    def record(event: ChainEvent) -> None:
        events.append(event.as_event(len(events), scenario.session_id))

    executor.add_listener(record)
    plan = ChainPlan.model_validate(
        {**(scenario.plan or {}), "planQuery": scenario.tagged_prompt(), "objectId": scenario.name}
    )
    try:
        done = await executor.execute_chain(plan)
    except PlanExecutionError as exc:
        return ScenarioRun(events, False, str(exc))
    output = done.output if isinstance(done.output, str) or done.output is None else str(done.output)
    return ScenarioRun(events, True, None, output)
