"""The ChainExecutor: runs a plan's steps in order, dispatching by step type.

- ``{{name}}`` in a step's string inputs (and a RAG step's ``ragQuery``) is replaced from
  the chain context: the outputs of earlier steps, by ``outputName``. A missing name is
  an error naming it; a lone ``{{name}}`` keeps the value's own type.
- TOOL steps call a registered Python callable (sync or async), arguments bound by its
  signature; an unknown tool or mismatched arguments fail the step.
- LLM steps talk to the model over HTTP through a ``ModelClient``. A run keeps ONE
  conversation: the first call sends the plan query with the step's prompt, later calls
  append the previous reply and the next prompt, so one instruction chain in the plan
  query scripts every model call of the run — answers, routing decisions and a policy's
  chat operations, in the order they happen. Outputs of TOOL/RAG/gate steps that the
  model has not seen and the prompt does not quote are put before the prompt as MCP
  context blocks.
- After each LLM step a routing call (to the default model, whatever the step's chat
  config) asks for ``{complete, reason, nextSteps}``; at most
  3 steps are inserted after the current one (``dynamic``, ``parentStep``, renumbered)
  within the step limits. A reply that is not that JSON is a ``routingError`` event and
  is otherwise ignored. So a script gives each LLM step two turns: answer, then routing.
- RAG_QUERY steps search a ``VectorStore`` (``ragLimit``, scoped by
  ``vectorReferenceUri``) and output MCP context blocks; no result is still COMPLETED.
- POLICY_GATE steps evaluate a named ``Policy`` over the previous output (or
  ``inputs.fact``): PERMIT passes the (possibly rewritten) fact on; DENY marks the step
  GATED and ends the chain (``chainComplete`` with the reason).
- Events (``stepStart``, ``stepComplete``, ``stepError``, ``stepsInserted``,
  ``routingError``, ``chainComplete``, ``chainMaxSteps``, ``chainCancelled``) go to every
  listener with strictly increasing timestamps and the plan's ``am7://`` URI.
- Guards: at most ``ABSOLUTE_MAX_STEPS`` (50) and the plan's ``maxSteps``; two identical
  LLM outputs in a row stop the chain (stall). A run can be cancelled.
- With a ``PlanStore`` the plan is saved when it starts, after every step and at the
  end, whatever the end: the stored plan shows exactly what ran.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import re
import time
import uuid
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import PydanticUserError, ValidationError, validate_call

from harness.chain.context import context_uri, restore_context, save_context
from harness.chain.mcp_context import CITATION_SCHEMA, STEP_OUTPUT_SCHEMA, McpContextBuilder, parse_context
from harness.chain.models import ChainEvent, ChainPlan, PlanStep, StepStatus, StepType
from harness.chain.planning import PLAN_PROMPT, PlanningError, parse_plan_reply
from harness.chain.policy import Policy, evaluate_policy
from harness.chain.routing import ROUTE_PROMPT, RoutingError, parse_routing
from harness.chain.store import PlanStore
from harness.chain.uris import Am7Uri, plan_uri
from harness.chain.vectors import InMemoryVectorStore, VectorStore
from harness.llm import AssistantTurn, ConversationItem, ModelClient, ModelError, TurnComplete, UserMessage
from mockllm.instructions import strip_instructions

__all__ = ["ABSOLUTE_MAX_STEPS", "ChainExecutor", "ChainListener", "PlanExecutionError", "PromptConfig"]

ABSOLUTE_MAX_STEPS = 50
_VARIABLE = re.compile(r"\{\{\s*([A-Za-z_][\w.]*)\s*\}\}")
_PREVIEW = 100

ChainListener = Callable[[ChainEvent], "None | Awaitable[None]"]


class PlanExecutionError(Exception):
    """A step could not run: the step is FAILED, the message says why, and ``plan`` is
    the plan as it stood (also saved to the executor's store, if it has one)."""

    def __init__(self, message: str, plan: ChainPlan | None = None) -> None:
        super().__init__(message)
        self.plan = plan


class _Cancelled(Exception):
    pass


@dataclass(frozen=True)
class PromptConfig:
    """A named system prompt for LLM steps and chat operations."""

    system: str
    max_tokens: int = 1024


def _validated(tool: Callable[..., Any]) -> Callable[..., Any]:
    """``tool`` with its arguments checked against its annotations (unannotated: any)."""
    try:
        return validate_call(config={"arbitrary_types_allowed": True})(tool)
    except (TypeError, PydanticUserError):  # not a plain function (a builtin, say): call as it is
        return tool


def _preview(value: Any) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= _PREVIEW else text[:_PREVIEW - 1] + "…"


class ChainExecutor:
    """Executes chain plans with its tools, configs, policies, vector store and model.

    ``client`` is the default model; ``chat_configs`` name other ``ModelClient``s an LLM
    step can pick by ``chatConfigName``. ``organization`` scopes ``am7://`` references.
    Nothing of one run is kept on the executor, so runs may overlap.
    """

    def __init__(self, client: ModelClient | None = None, *,
                 tools: Mapping[str, Callable[..., Any]] | None = None,
                 prompt_configs: Mapping[str, PromptConfig] | None = None,
                 chat_configs: Mapping[str, ModelClient] | None = None,
                 policies: Iterable[Policy] | Mapping[str, Policy] | None = None,
                 vector_store: VectorStore | None = None,
                 store: PlanStore | None = None,
                 organization: str = "default",
                 routing: bool = True) -> None:
        self.client = client
        self.tools = dict(tools or {})
        self.prompt_configs = dict(prompt_configs or {})
        self.chat_configs = dict(chat_configs or {})
        if isinstance(policies, Mapping):
            self.policies = dict(policies)
        else:
            self.policies = {p.name: p for p in policies or ()}
        self.vector_store: VectorStore = vector_store if vector_store is not None else InMemoryVectorStore()
        self.store = store
        self.organization = organization
        self.routing = routing
        self._listeners: list[ChainListener] = []
        self._checked: dict[str, tuple[Callable[..., Any], Callable[..., Any]]] = {}

    def checked_tool(self, name: str, tool: Callable[..., Any]) -> Callable[..., Any]:
        """``tool`` wrapped to check its arguments, built once per registered tool (keyed
        by name: a callable object need not be hashable)."""
        cached = self._checked.get(name)
        if cached is None or cached[0] is not tool:
            cached = self._checked[name] = (tool, _validated(tool))
        return cached[1]

    def add_listener(self, listener: ChainListener) -> None:
        """Call ``listener`` (sync or async) with every event of every run."""
        self._listeners.append(listener)

    async def execute_chain(self, plan: ChainPlan, *, cancel: asyncio.Event | None = None,
                            listeners: Iterable[ChainListener] = ()) -> ChainPlan:
        """Run ``plan``; a copy is returned and the input is left as it was.

        Setting ``cancel`` (or cancelling the task) stops the run: the running step is
        SKIPPED, later steps stay PENDING, ``chainCancelled`` is emitted. A failing step
        raises ``PlanExecutionError``. ``listeners`` hear this run only.
        """
        run = _ChainRun(self, plan.model_copy(deep=True), cancel, [*self._listeners, *listeners])
        return await run.execute()

    def execute_chain_sync(self, plan: ChainPlan) -> ChainPlan:
        """``execute_chain`` for code that is not async."""
        return asyncio.run(self.execute_chain(plan))


class _ChainRun:
    def __init__(self, executor: ChainExecutor, plan: ChainPlan, cancel: asyncio.Event | None,
                 listeners: list[ChainListener]) -> None:
        self.executor = executor
        self.plan = plan
        plan.object_id = plan.object_id or uuid.uuid4().hex
        self.uri = plan_uri(executor.organization, plan.object_id)
        self.cancel = cancel
        self.listeners = listeners
        try:
            self.context: dict[str, Any] = restore_context(plan.chain_context_json)
        except ValueError as exc:
            raise PlanExecutionError(f"plan {plan.name!r}: {exc}", plan) from exc
        self.unseen: dict[str, Any] = {}  # non-LLM outputs the model has not been shown
        self.conversation: list[ConversationItem] = []
        self.last_llm_output: str | None = None
        self.truncated = False
        self._last_ms = 0

    # -- events and persistence ----------------------------------------------------------

    async def emit(self, event_type: str, step: PlanStep | None = None, **fields: Any) -> None:
        self._last_ms = max(self._last_ms + 1, time.time_ns() // 1_000_000)
        if step is not None:  # what the caller passes wins over the step's own fields
            fields = dict(step_number=step.step_number, step_type=step.step_type, step_status=step.step_status,
                          tool_name=step.tool_name, step_summary=step.summary_text) | fields
        event = ChainEvent(event_type=event_type, plan_name=self.plan.name, timestamp=self._last_ms,
                           total_steps=len(self.plan.steps), mcp_context_uri=self.uri, **fields)
        for listener in self.listeners:
            outcome = listener(event)
            if inspect.isawaitable(outcome):
                await outcome

    def save(self, *, leaving: bool = False) -> None:
        """Write the plan to the store. The context is serialised only when something
        reads it: the store, or the caller the plan is ``leaving`` the run for."""
        if self.executor.store is None and not leaving:
            return
        self.plan.chain_context_json = save_context(self.context, self.plan.object_id or "")
        if self.executor.store is not None:
            self.executor.store.save(self.plan, self.executor.organization)

    async def finish(self, event_type: str, **fields: Any) -> ChainPlan:
        self.plan.executed = True
        self.save(leaving=True)
        await self.emit(event_type, **fields)
        return self.plan

    # -- the loop ------------------------------------------------------------------------

    async def execute(self) -> ChainPlan:
        self.plan.steps = sorted(self.plan.steps, key=lambda s: s.step_number)
        if len({s.step_number for s in self.plan.steps}) < len(self.plan.steps) or any(
                s.step_number < 1 for s in self.plan.steps):
            for number, unnumbered in enumerate(self.plan.steps, start=1):  # steps written without numbers
                unnumbered.step_number = number
        limit = min(self.plan.max_steps, ABSOLUTE_MAX_STEPS)
        self.save()
        step: PlanStep | None = None
        try:
            if not self.plan.steps and self.plan.plan_query:
                await self.interruptible(self.create_steps(limit))
            index = 0
            while index < len(self.plan.steps):
                step = self.plan.steps[index]
                if self.cancel is not None and self.cancel.is_set():
                    raise _Cancelled
                if step.step_status is StepStatus.COMPLETED:  # resuming a saved plan
                    index += 1
                    continue
                if self.plan.total_executed_steps >= limit:
                    # A controlled stop: the steps not run stay PENDING.
                    return await self.finish("chainMaxSteps", error_message=f"the chain stopped at {limit} steps")
                ended = await self.run_step(step, index, limit)
                if ended is not None:
                    return ended
                index += 1
            step = None
            if self.truncated:
                return await self.finish("chainMaxSteps", error_message=f"the chain stopped at {limit} steps")
            return await self.finish("chainComplete")
        except (_Cancelled, asyncio.CancelledError) as exc:
            if step is not None and step.step_status is StepStatus.EXECUTING:
                step.step_status = StepStatus.SKIPPED
                step.summary_text = "cancelled while running"
            self.save(leaving=True)
            await self.emit("chainCancelled", error_message="the chain was cancelled")
            if isinstance(exc, asyncio.CancelledError):
                raise
            return self.plan

    async def run_step(self, step: PlanStep, index: int, limit: int) -> ChainPlan | None:
        """Run one step; returns the plan when the chain ends here."""
        self.plan.total_executed_steps += 1
        step.step_status = StepStatus.EXECUTING
        self.save()  # a status read while the step runs names it
        await self.emit("stepStart", step)
        try:
            output = await self.interruptible(self.dispatch(step))
        except PlanExecutionError as exc:
            step.step_status = StepStatus.FAILED
            step.summary_text = str(exc)
            self.save(leaving=True)
            await self.emit("stepError", step, error_message=str(exc))
            raise PlanExecutionError(str(exc), self.plan) from exc.__cause__
        step.output = output
        if step.step_status is StepStatus.GATED:
            self.save()
            await self.emit("stepComplete", step, output_preview=_preview(output))
            return await self.finish("chainComplete", error_message=f"halted: step {step.step_number} was gated "
                                                                    f"by policy {step.policy_name!r}")
        step.step_status = StepStatus.COMPLETED
        if step.output_name:
            self.context[step.output_name] = output
            if step.step_type is not StepType.LLM:
                self.unseen[step.output_name] = output
        self.plan.output = output
        self.save()
        await self.emit("stepComplete", step, output_preview=_preview(output))
        if step.step_type is StepType.LLM:
            if output == self.last_llm_output:
                return await self.finish("chainComplete", error_message="stalled: the same LLM output twice in a row")
            self.last_llm_output = output
            if self.executor.routing:
                await self.interruptible(self.route(step, index, limit))
        return None

    async def interruptible(self, work: Awaitable[Any]) -> Any:
        """Await ``work``, unless the run's cancel event is set first."""
        if self.cancel is None:
            return await work
        task = asyncio.ensure_future(work)
        waiter = asyncio.ensure_future(self.cancel.wait())
        try:
            await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiter.cancel()
            if not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
                raise _Cancelled
        return task.result()

    async def create_steps(self, limit: int) -> None:
        """Ask the model to plan a plan that has only its query."""
        prompt = PLAN_PROMPT.format(max_steps=limit, tools=", ".join(sorted(self.executor.tools)) or "none",
                                    prompts=", ".join(sorted(self.executor.prompt_configs)) or "none",
                                    policies=", ".join(sorted(self.executor.policies)) or "none")
        try:
            self.plan.steps = parse_plan_reply((await self.ask(prompt, "planning")).text, limit)
        except PlanningError as exc:
            self.save(leaving=True)
            await self.emit("stepError", error_message=f"planning failed: {exc}")
            raise PlanExecutionError(f"planning failed: {exc}", self.plan) from exc
        except PlanExecutionError as exc:
            self.save(leaving=True)
            await self.emit("stepError", error_message=str(exc))
            raise PlanExecutionError(str(exc), self.plan) from exc
        self.save()
        await self.emit("stepsInserted", step_number=0,
                        step_summary=f"{len(self.plan.steps)} step(s) planned for the query")

    async def route(self, step: PlanStep, index: int, limit: int) -> None:
        """Ask the model what comes next; insert at most 3 dynamic steps after ``step``."""
        prompt = ROUTE_PROMPT.format(query=strip_instructions(self.plan.plan_query), step_number=step.step_number,
                                     output=str(step.output)[:2000], context=", ".join(sorted(self.context)) or "none")
        try:
            decision = parse_routing((await self.ask(prompt, "routing")).text)
        except (RoutingError, PlanExecutionError) as exc:
            await self.emit("routingError", step, error_message=f"routing after step {step.step_number} ignored: {exc}")
            return
        new_steps = decision.next_steps
        if decision.complete or not new_steps:
            return
        pending = sum(1 for s in self.plan.steps[index + 1:] if s.step_status is StepStatus.PENDING)
        room = limit - self.plan.total_executed_steps - pending
        if len(new_steps) > room:
            self.truncated = True  # the chain will end at its step limit
            new_steps = new_steps[:max(room, 0)]
        if not new_steps:
            return
        for new in new_steps:
            new.dynamic, new.parent_step, new.step_status = True, step.step_number, StepStatus.PENDING
        self.plan.steps[index + 1:index + 1] = new_steps
        for number, s in enumerate(self.plan.steps, start=1):
            s.step_number = number
        self.save()
        await self.emit("stepsInserted", step, step_summary=f"{len(new_steps)} step(s) inserted after step "
                                                            f"{step.step_number}: {decision.reason}".strip())

    # -- steps ---------------------------------------------------------------------------

    async def dispatch(self, step: PlanStep) -> Any:
        if step.step_type is StepType.TOOL:
            return await self.tool_step(step)
        if step.step_type is StepType.LLM:
            return await self.llm_step(step)
        if step.step_type is StepType.RAG_QUERY:
            return await self.rag_step(step)
        if step.step_type is StepType.POLICY_GATE:
            return await self.gate_step(step)
        raise PlanExecutionError(f"step {step.step_number}: step type {step.step_type.value} cannot run here")

    def substitute(self, value: Any, step: PlanStep) -> Any:
        if isinstance(value, str):
            whole = _VARIABLE.fullmatch(value.strip())
            if whole:  # a lone reference keeps the value's own type
                return self.lookup(whole.group(1), step)
            return _VARIABLE.sub(lambda m: str(self.lookup(m.group(1), step)), value)
        if isinstance(value, list):
            return [self.substitute(v, step) for v in value]
        if isinstance(value, dict):
            return {k: self.substitute(v, step) for k, v in value.items()}
        return value

    def lookup(self, name: str, step: PlanStep) -> Any:
        if name not in self.context:
            known = ", ".join(sorted(self.context)) or "none yet"
            raise PlanExecutionError(f"step {step.step_number}: the chain context has no {{{{{name}}}}} "
                                     f"(known: {known})")
        return self.context[name]

    async def tool_step(self, step: PlanStep) -> Any:
        tool = self.executor.tools.get(step.tool_name or "")
        if tool is None:
            raise PlanExecutionError(f"step {step.step_number}: unknown tool {step.tool_name!r}; "
                                     f"registered: {sorted(self.executor.tools)}")
        arguments = self.substitute(step.inputs, step)
        try:
            inspect.signature(tool).bind(**arguments)
        except TypeError as exc:
            raise PlanExecutionError(f"step {step.step_number}: tool {step.tool_name!r} cannot take "
                                     f"{sorted(arguments)}: {exc}") from exc
        try:
            result = self.executor.checked_tool(step.tool_name or "", tool)(**arguments)
            if inspect.isawaitable(result):
                result = await result
        except ValidationError as exc:
            problems = "; ".join(f"argument {'.'.join(str(p) for p in e['loc'])!r}: {e['msg']} "
                                 f"(got {e['input']!r})" for e in exc.errors())
            raise PlanExecutionError(f"step {step.step_number}: tool {step.tool_name!r}: {problems}") from exc
        except Exception as exc:
            raise PlanExecutionError(f"step {step.step_number}: tool {step.tool_name!r} failed: "
                                     f"{type(exc).__name__}: {exc}") from exc
        step.summary_text = f"{step.tool_name} returned {_preview(result)}"
        return result

    def prompt_config(self, name: str | None, step: PlanStep) -> PromptConfig | None:
        if name is None:
            return None
        config = self.executor.prompt_configs.get(name)
        if config is None:
            raise PlanExecutionError(f"step {step.step_number}: no prompt config named {name!r}; "
                                     f"known: {sorted(self.executor.prompt_configs)}")
        return config

    def client_for(self, step: PlanStep) -> ModelClient | None:
        if step.chat_config_name is None:
            return self.executor.client
        client = self.executor.chat_configs.get(step.chat_config_name)
        if client is None:
            raise PlanExecutionError(f"step {step.step_number}: no chat config named {step.chat_config_name!r}; "
                                     f"known: {sorted(self.executor.chat_configs)}")
        return client

    def context_preamble(self, prompt_template: str) -> str:
        """MCP blocks for the outputs the model has not seen and the prompt does not quote."""
        quoted = set(_VARIABLE.findall(prompt_template))
        builder, raw = McpContextBuilder(), []
        for name, value in self.unseen.items():
            if name in quoted:
                continue
            if isinstance(value, str) and parse_context(value).blocks:
                raw.append(value)  # already MCP blocks (a RAG result)
            else:
                builder.add_resource(context_uri(self.plan.object_id or "", name), STEP_OUTPUT_SCHEMA,
                                     {"name": name, "value": value}, ephemeral=True)
        self.unseen.clear()
        return "\n".join([*raw, builder.build()]).strip()

    async def llm_step(self, step: PlanStep) -> str:
        config = self.prompt_config(step.prompt_config_name, step)
        client = self.client_for(step)
        template = str(step.inputs.get("prompt", step.description))
        prompt = str(self.substitute(template, step))
        preamble = self.context_preamble(template)
        turn = await self.ask(f"{preamble}\n\n{prompt}" if preamble else prompt, f"step {step.step_number}",
                              config, client)
        text = turn.text
        if "<mcp:context" in text:
            text = parse_context(text).content
        if not text.strip():
            raise PlanExecutionError(f"step {step.step_number}: the model returned an empty response")
        step.summary_text = _preview(text)
        return text

    async def rag_step(self, step: PlanStep) -> str:
        # A query quoting the scripted plan query must not carry its instruction block on.
        query = strip_instructions(str(self.substitute(step.rag_query if step.rag_query is not None
                                                       else step.inputs.get("query", step.description), step)))
        scope = None
        if step.vector_reference_uri:
            try:
                ref = Am7Uri.parse(step.vector_reference_uri)
            except ValueError as exc:
                raise PlanExecutionError(f"step {step.step_number}: vectorReferenceUri: {exc}") from exc
            scope = str(ref)
            # Another organization's object is "not found", never "forbidden".
            if ref.organization != self.executor.organization or not self.executor.vector_store.contains(scope):
                raise PlanExecutionError(f"step {step.step_number}: not found: {step.vector_reference_uri} "
                                         f"(404: no such document in organization {self.executor.organization!r})")
        if step.rag_limit < 0:
            raise PlanExecutionError(f"step {step.step_number}: ragLimit must be >= 0, got {step.rag_limit}")
        hits = self.executor.vector_store.search(query, step.rag_limit, scope)
        if inspect.isawaitable(hits):
            hits = await hits
        hits = list(hits)[:step.rag_limit]
        step.summary_text = f"{len(hits)} result(s) for {query!r}"
        return McpContextBuilder().add_resource(
            f"am7://vector/citations/{self.plan.object_id}-{step.step_number}", CITATION_SCHEMA,
            {"query": query, "results": [h.as_json() for h in hits]}, ephemeral=True).build()

    async def gate_step(self, step: PlanStep) -> str:
        policy = self.executor.policies.get(step.policy_name or "")
        if policy is None:
            raise PlanExecutionError(f"step {step.step_number}: no policy named {step.policy_name!r}; "
                                     f"known: {sorted(self.executor.policies)}")
        fact = self.substitute(step.inputs["fact"], step) if "fact" in step.inputs else self.plan.output
        # A structured fact (a tool's JSON: an identity operation's SCIM resource, say) is
        # judged as the JSON a client would see, so patterns can match its fields.
        fact = "" if fact is None else fact if isinstance(fact, str) else json.dumps(fact, default=str)

        async def chat(prompt: str, config_name: str | None) -> str:
            return (await self.ask(prompt, f"step {step.step_number} (policy {policy.name})",
                                   self.prompt_config(config_name, step), self.client_for(step))).text

        decision = await evaluate_policy(policy, fact, chat)
        rules = [line for line in decision.trace if line.startswith("rule ") and ") -> " in line]
        step.summary_text = f"{decision.effect} by policy {policy.name}: " + "; ".join(rules)
        if not decision.permit:
            step.step_status = StepStatus.GATED
        return decision.fact

    async def ask(self, prompt: str, label: str, config: PromptConfig | None = None,
                  client: ModelClient | None = None) -> AssistantTurn:
        """One model turn in the run's conversation (the plan query opens it)."""
        client = client if client is not None else self.executor.client
        if client is None:
            raise PlanExecutionError(f"{label}: an LLM call needs a model client (ChainExecutor(client=...))")
        first = not self.conversation
        self.conversation.append(UserMessage(f"{self.plan.plan_query}\n\n{prompt}" if first and self.plan.plan_query
                                             else prompt))
        turn: AssistantTurn | None = None
        try:
            async for event in client.stream_turn(self.conversation, system=config.system if config else None,
                                                  max_tokens=config.max_tokens if config else 1024):
                if isinstance(event, TurnComplete):
                    turn = event.turn
        except ModelError as exc:
            self.conversation.pop()  # the conversation stays alternating for the next call
            raise PlanExecutionError(f"{label}: the model call failed: {exc.message}") from exc
        if turn is None:
            self.conversation.pop()
            raise PlanExecutionError(f"{label}: the model's stream ended without a reply")
        self.conversation.append(turn)
        return turn
