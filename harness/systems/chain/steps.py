"""What each step type does: TOOL, LLM, RAG_QUERY and POLICY_GATE.

Each takes the run and the step, and returns the step's output (or raises
``PlanExecutionError``); the run loop (``harness.systems.chain.run``) does the rest — statuses,
events, the context, saving. A step sets its own ``summary_text``.

A step's prompt config, chat config and policy are named by name or by ``am7://`` URI
and resolved by ``harness.systems.chain.uris.resolve_name`` within the executor's organization,
as the service resolves a request's: another organization's is "not found (status
404)". The executor's ``permissions`` decide which tools a TOOL step may run and which
documents a RAG_QUERY step searches; a refusal is "forbidden (status 403)".
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol

from harness.systems.chain.access import forbidden
from harness.systems.chain.context import VARIABLE, context_uri, substitute
from harness.systems.chain.errors import PlanExecutionError
from harness.systems.chain.isolation import OrganizationVectors
from harness.systems.chain.mcp_context import CITATION_SCHEMA, STEP_OUTPUT_SCHEMA, McpContextBuilder, parse_context
from harness.systems.chain.models import ChainPlan, PlanStep, PromptConfig, StepStatus, StepType
from harness.systems.chain.policy import Policy, evaluate_policy
from harness.systems.chain.settings import ChainSettings
from harness.systems.chain.uris import (
    AM7_SCHEME,
    CHAT_CONFIG,
    POLICY,
    PROMPT_CONFIG,
    Am7Uri,
    UnknownReference,
    resolve_name,
)
from harness.systems.llm import AssistantTurn, ModelClient
from harness.systems.quoting import quotable
from harness.systems.tool_calls import ToolArgumentsError


class ChainRun(Protocol):
    """What a step reads and does on the run it belongs to (``harness.systems.chain.run``
    implements it; this module never imports it back)."""

    executor: ChainSettings
    plan: ChainPlan
    context: dict[str, Any]
    unseen: dict[str, Any]

    async def ask(
        self, prompt: str, label: str, config: PromptConfig | None = None, client: ModelClient | None = None
    ) -> AssistantTurn: ...


__all__ = ["perform", "preview"]

_PREVIEW = 100


def preview(value: Any) -> str:
    """``value`` as at most 100 characters of text (events and summaries show this)."""
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= _PREVIEW else text[: _PREVIEW - 1] + "…"


async def perform(run: ChainRun, step: PlanStep) -> Any:
    """Run ``step`` by its type; its output."""
    kind = _KINDS.get(step.step_type)
    if kind is None:
        raise PlanExecutionError(f"step {step.step_number}: step type {step.step_type.value} cannot run here")
    return await kind(run, step)


async def tool_step(run: ChainRun, step: PlanStep) -> Any:
    tool = run.executor.tool(step.tool_name or "")
    if tool is None:
        raise PlanExecutionError(
            f"step {step.step_number}: unknown tool {step.tool_name!r}; registered: {sorted(run.executor.tools)}"
        )
    if not run.executor.permissions.may_run(tool.name):
        raise PlanExecutionError(f"step {step.step_number}: {forbidden(f'tool {tool.name!r}', 'tools')}")
    arguments = substitute(step.inputs, run.context, step.step_number)
    try:
        result = await tool(arguments)
    except ToolArgumentsError as exc:
        raise PlanExecutionError(f"step {step.step_number}: {exc}") from exc
    except Exception as exc:
        raise PlanExecutionError(
            f"step {step.step_number}: tool {step.tool_name!r} failed: {type(exc).__name__}: {exc}"
        ) from exc
    step.summary_text = f"{step.tool_name} returned {preview(result)}"
    return result


def resolve(run: ChainRun, step: PlanStep, field: str, reference: str, type_: str, known: Mapping[str, Any]) -> Any:
    """The resource ``reference`` (a name or an ``am7://`` URI, from the step's ``field``)
    names among ``known``, in the executor's organization; else the step fails."""
    try:
        return known[resolve_name(reference, type_, run.executor.organization, known)]
    except ValueError as exc:
        raise PlanExecutionError(f"step {step.step_number}: {field}: {exc}") from exc
    except UnknownReference as exc:
        if not reference.startswith(AM7_SCHEME):  # a name: the names there are, to pick from
            raise PlanExecutionError(f"step {step.step_number}: {exc}") from exc
        raise PlanExecutionError(f"step {step.step_number}: {field}: {exc} (status 404)") from exc


def prompt_config(run: ChainRun, name: str | None, step: PlanStep) -> PromptConfig | None:
    if name is None:
        return None
    config: PromptConfig = resolve(run, step, "promptConfigName", name, PROMPT_CONFIG, run.executor.prompt_configs)
    return config


def client_for(run: ChainRun, step: PlanStep) -> ModelClient | None:
    if step.chat_config_name is None:
        return run.executor.client
    client: ModelClient = resolve(
        run, step, "chatConfigName", step.chat_config_name, CHAT_CONFIG, run.executor.chat_configs
    )
    return client


def context_preamble(run: ChainRun, prompt_template: str) -> str:
    """MCP blocks for the outputs the model has not seen and the prompt does not quote."""
    quoted = set(VARIABLE.findall(prompt_template))
    builder, raw = McpContextBuilder(), []
    for name, value in run.unseen.items():
        if name in quoted:
            continue
        if isinstance(value, str) and parse_context(value).blocks:
            raw.append(value)  # already MCP blocks (a RAG result)
        else:
            builder.add_resource(
                context_uri(run.plan.object_id or "", name),
                STEP_OUTPUT_SCHEMA,
                {"name": name, "value": value},
                ephemeral=True,
            )
    run.unseen.clear()
    return "\n".join([*raw, builder.build()]).strip()


async def llm_step(run: ChainRun, step: PlanStep) -> str:
    config = prompt_config(run, step.prompt_config_name, step)
    client = client_for(run, step)
    template = str(step.inputs.get("prompt", step.description))
    prompt = str(substitute(template, run.context, step.step_number))
    preamble = context_preamble(run, template)
    turn = await run.ask(f"{preamble}\n\n{prompt}" if preamble else prompt, f"step {step.step_number}", config, client)
    text = turn.text
    if "<mcp:context" in text:
        text = parse_context(text).content
    if not text.strip():
        raise PlanExecutionError(f"step {step.step_number}: the model returned an empty response")
    step.summary_text = preview(text)
    return text


async def rag_step(run: ChainRun, step: PlanStep) -> str:
    executor = run.executor
    # A query quoting the scripted plan query must not carry its instruction block on.
    query = quotable(
        str(
            substitute(
                step.rag_query if step.rag_query is not None else step.inputs.get("query", step.description),
                run.context,
                step.step_number,
            )
        )
    )
    # The store may hold other organizations' documents: the step sees its own only.
    store = OrganizationVectors(executor.vector_store, executor.organization, executor.permissions.may_search)
    scope = None
    if step.vector_reference_uri:
        try:
            scope = str(Am7Uri.parse(step.vector_reference_uri))
        except ValueError as exc:
            raise PlanExecutionError(f"step {step.step_number}: vectorReferenceUri: {exc}") from exc
        # Another organization's object is "not found", never "forbidden".
        if not store.contains(scope):
            raise PlanExecutionError(
                f"step {step.step_number}: not found: {step.vector_reference_uri} "
                f"(status 404: no such document in organization {executor.organization!r})"
            )
        if not executor.permissions.may_search(scope):
            raise PlanExecutionError(f"step {step.step_number}: {forbidden(f'document {scope}', 'vectors')}")
    if step.rag_limit < 0:
        raise PlanExecutionError(f"step {step.step_number}: ragLimit must be >= 0, got {step.rag_limit}")
    hits = await store.search(query, step.rag_limit, scope)
    step.summary_text = f"{len(hits)} result(s) for {query!r}"
    return (
        McpContextBuilder()
        .add_resource(
            f"am7://vector/citations/{run.plan.object_id}-{step.step_number}",
            CITATION_SCHEMA,
            {"query": query, "results": [h.as_json() for h in hits]},
            ephemeral=True,
        )
        .build()
    )


async def gate_step(run: ChainRun, step: PlanStep) -> str:
    policy: Policy = resolve(run, step, "policyName", step.policy_name or "", POLICY, run.executor.policies)
    fact = substitute(step.inputs["fact"], run.context, step.step_number) if "fact" in step.inputs else run.plan.output
    # A structured fact (a tool's JSON: an identity operation's SCIM resource, say) is
    # judged as the JSON a client would see, so patterns can match its fields.
    fact = "" if fact is None else fact if isinstance(fact, str) else json.dumps(fact, default=str)

    async def chat(prompt: str, config_name: str | None) -> str:
        return (
            await run.ask(
                prompt,
                f"step {step.step_number} (policy {policy.name})",
                prompt_config(run, config_name, step),
                client_for(run, step),
            )
        ).text

    decision = await evaluate_policy(policy, fact, chat)
    rules = [line for line in decision.trace if line.startswith("rule ") and ") -> " in line]
    step.summary_text = f"{decision.effect} by policy {policy.name}: " + "; ".join(rules)
    if not decision.permit:
        step.step_status = StepStatus.GATED
    return decision.fact


_KINDS: dict[StepType, Callable[[ChainRun, PlanStep], Awaitable[Any]]] = {
    StepType.TOOL: tool_step,
    StepType.LLM: llm_step,
    StepType.RAG_QUERY: rag_step,
    StepType.POLICY_GATE: gate_step,
}
