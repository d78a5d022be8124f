"""The ChainExecutor: runs a plan's steps in order, dispatching by step type.

This part runs TOOL and LLM steps with dynamic step insertion; RAG_QUERY and POLICY_GATE
steps and context save/restore are still to come and fail their step with a clear
message meanwhile.

- ``{{name}}`` in a step's string inputs is replaced from the chain context (the outputs
  of earlier steps, by ``outputName``); a missing name is an error naming it.
- TOOL steps call a registered Python callable (sync or async), arguments bound by its
  signature; an unknown tool or mismatched arguments fail the step.
- LLM steps talk to the model over HTTP through a ``ModelClient``. A run keeps ONE
  conversation: the first LLM call sends the plan query with the step's prompt, later
  calls append the previous reply and the next prompt, so one instruction chain in the
  plan query scripts every LLM call of the run.
- After each LLM step a routing call (``ROUTE_PROMPT``) asks for
  ``{complete, reason, nextSteps}``; at most 3 steps are inserted after the current one
  (``dynamic``, ``parentStep``, renumbered), within the step limits. A reply that is not
  that JSON is reported as ``routingError`` and ignored. Scripts give each LLM step two
  turns: its answer, then its routing decision.
- Events (``stepStart``, ``stepComplete``, ``stepError``, ``stepsInserted``,
  ``routingError``, ``chainComplete``, ``chainMaxSteps``) go to every listener, with
  strictly increasing timestamps.
- Guards: at most ``ABSOLUTE_MAX_STEPS`` (50) and the plan's ``maxSteps``; two identical
  LLM outputs in a row stop the chain (stall).
"""

from __future__ import annotations

import inspect
import json
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from harness.chain.models import ChainEvent, ChainPlan, PlanStep, StepStatus, StepType
from harness.llm import (
    AssistantTurn,
    ConversationItem,
    ModelClient,
    ModelError,
    TurnComplete,
    UserMessage,
)
from mockllm.instructions import strip_instructions

__all__ = ["ABSOLUTE_MAX_STEPS", "ChainExecutor", "ChainListener", "PlanExecutionError", "PromptConfig"]

ABSOLUTE_MAX_STEPS = 50
_VARIABLE = re.compile(r"\{\{\s*([A-Za-z_][\w.]*)\s*\}\}")
_PREVIEW = 100

ChainListener = Callable[[ChainEvent], "None | Awaitable[None]"]
MAX_INSERTED_PER_DECISION = 3

ROUTE_PROMPT = """Decide what the chain should do next.
Plan query: {query}
Output of step {step_number}: {output}
Context available: {context}
Step types you may add: TOOL (toolName, inputs), LLM (inputs.prompt, promptConfigName),
RAG_QUERY (ragQuery), POLICY_GATE (policyName).
Answer with JSON only: {{"complete": true|false, "reason": "...", "nextSteps": [{{"stepType": "...",
"toolName": "...", "description": "...", "inputs": {{}}}}]}} with at most 3 nextSteps."""


class PlanExecutionError(Exception):
    """A step could not run; the step is FAILED and the message says why."""


@dataclass(frozen=True)
class PromptConfig:
    """A named system prompt for LLM steps."""

    system: str
    max_tokens: int = 1024


class ChainExecutor:
    """Executes chain plans with its tools, prompt configs and model client."""

    def __init__(self, client: ModelClient | None = None, *,
                 tools: dict[str, Callable[..., Any]] | None = None,
                 prompt_configs: dict[str, PromptConfig] | None = None) -> None:
        self.client = client
        self.tools = dict(tools or {})
        self.prompt_configs = dict(prompt_configs or {})
        self._listeners: list[ChainListener] = []

    def add_listener(self, listener: ChainListener) -> None:
        self._listeners.append(listener)

    async def execute_chain(self, plan: ChainPlan) -> ChainPlan:
        """Run ``plan`` (a copy is returned; the input is left as it was)."""
        run = _ChainRun(self, plan.model_copy(deep=True))
        return await run.execute()


class _ChainRun:
    def __init__(self, executor: ChainExecutor, plan: ChainPlan) -> None:
        self.executor = executor
        self.plan = plan
        self.context: dict[str, Any] = json.loads(plan.chain_context_json) if plan.chain_context_json else {}
        self.conversation: list[ConversationItem] = []
        self.last_llm_output: str | None = None
        self.truncated = False
        self._last_ms = 0

    async def emit(self, event_type: str, step: PlanStep | None = None, **fields: Any) -> None:
        self._last_ms = max(self._last_ms + 1, time.time_ns() // 1_000_000)
        if step is not None:  # what the caller passes wins over the step's own fields
            fields = dict(step_number=step.step_number, step_type=step.step_type, step_status=step.step_status,
                          tool_name=step.tool_name, step_summary=step.summary_text) | fields
        event = ChainEvent(event_type=event_type, plan_name=self.plan.name, timestamp=self._last_ms,
                           total_steps=len(self.plan.steps), **fields)
        for listener in self.executor._listeners:
            outcome = listener(event)
            if inspect.isawaitable(outcome):
                await outcome

    async def execute(self) -> ChainPlan:
        self.plan.steps = sorted(self.plan.steps, key=lambda s: s.step_number)
        limit = min(self.plan.max_steps, ABSOLUTE_MAX_STEPS)
        index = 0
        while index < len(self.plan.steps):
            step = self.plan.steps[index]
            if self.plan.total_executed_steps >= limit:
                # A controlled stop: the steps not run stay PENDING.
                return await self.finish("chainMaxSteps", error_message=f"the chain stopped at {limit} steps")
            self.plan.total_executed_steps += 1
            step.step_status = StepStatus.EXECUTING
            await self.emit("stepStart", step)
            try:
                output = await self.dispatch(step)
            except PlanExecutionError as exc:
                step.step_status = StepStatus.FAILED
                step.summary_text = str(exc)
                await self.emit("stepError", step, error_message=str(exc))
                raise
            step.output = output
            step.step_status = StepStatus.COMPLETED
            if step.output_name:
                self.context[step.output_name] = output
            self.plan.output = output
            await self.emit("stepComplete", step, output_preview=str(output)[:_PREVIEW])
            if step.step_type is StepType.LLM:
                if output == self.last_llm_output:
                    return await self.finish("chainComplete", error_message="stalled: the same LLM output twice in a row")
                self.last_llm_output = output
                await self.route(step, index, limit)
            index += 1
        if self.truncated:
            return await self.finish("chainMaxSteps", error_message=f"the chain stopped at {limit} steps")
        return await self.finish("chainComplete")

    async def finish(self, event_type: str, **fields: Any) -> ChainPlan:
        self.plan.executed = True
        self.plan.chain_context_json = json.dumps(self.context, default=str)
        await self.emit(event_type, **fields)
        return self.plan

    async def route(self, step: PlanStep, index: int, limit: int) -> None:
        """Ask the model what comes next; insert at most 3 dynamic steps after ``step``.

        A reply that is not the routing JSON is logged (``routingError``) and ignored:
        routing never fails a step.
        """
        prompt = ROUTE_PROMPT.format(query=strip_instructions(self.plan.plan_query), step_number=step.step_number,
                                     output=str(step.output)[:2000], context=", ".join(sorted(self.context)) or "none")
        try:
            text = (await self.ask(prompt, None, 1024)).text.strip()
            decision = json.loads(text[text.find("{"): text.rfind("}") + 1] if "{" in text else text)
            if not isinstance(decision, dict):
                raise ValueError("the routing reply is not a JSON object")
            proposed = decision.get("nextSteps") or []
            new_steps = [PlanStep.model_validate(p) for p in proposed[:MAX_INSERTED_PER_DECISION]]
        except (ValueError, TypeError, PlanExecutionError) as exc:
            await self.emit("routingError", step, error_message=f"routing after step {step.step_number} ignored: {exc}")
            return
        if decision.get("complete", True) or not new_steps:
            return
        room = limit - self.plan.total_executed_steps - sum(
            1 for s in self.plan.steps[index + 1:] if s.step_status is StepStatus.PENDING)
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
        await self.emit("stepsInserted", step, step_summary=f"{len(new_steps)} step(s) inserted after step "
                                                            f"{step.step_number}: {decision.get('reason', '')}".strip())

    async def dispatch(self, step: PlanStep) -> Any:
        if step.step_type is StepType.TOOL:
            return await self.tool_step(step)
        if step.step_type is StepType.LLM:
            return await self.llm_step(step)
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
            result = tool(**arguments)
            if inspect.isawaitable(result):
                result = await result
        except Exception as exc:
            raise PlanExecutionError(f"step {step.step_number}: tool {step.tool_name!r} failed: {exc}") from exc
        return result

    async def llm_step(self, step: PlanStep) -> str:
        config = None
        if step.prompt_config_name is not None:
            config = self.executor.prompt_configs.get(step.prompt_config_name)
            if config is None:
                raise PlanExecutionError(f"step {step.step_number}: no prompt config named "
                                         f"{step.prompt_config_name!r}; known: {sorted(self.executor.prompt_configs)}")
        prompt = str(self.substitute(step.inputs.get("prompt", step.description), step))
        turn = await self.ask(prompt, config.system if config else None, config.max_tokens if config else 1024,
                              step=step)
        if not turn.text.strip():
            raise PlanExecutionError(f"step {step.step_number}: the model returned an empty response")
        return turn.text

    async def ask(self, prompt: str, system: str | None, max_tokens: int, step: PlanStep | None = None) -> AssistantTurn:
        """One model turn in the run's conversation (the plan query opens it)."""
        client = self.executor.client
        label = f"step {step.step_number}" if step is not None else "routing"
        if client is None:
            raise PlanExecutionError(f"{label}: an LLM call needs a model client")
        first = not self.conversation
        self.conversation.append(UserMessage(f"{self.plan.plan_query}\n\n{prompt}" if first and self.plan.plan_query
                                             else prompt))
        turn: AssistantTurn | None = None
        try:
            async for event in client.stream_turn(self.conversation, system=system, max_tokens=max_tokens):
                if isinstance(event, TurnComplete):
                    turn = event.turn
        except ModelError as exc:
            raise PlanExecutionError(f"{label}: the model call failed: {exc.message}") from exc
        if turn is None:
            raise PlanExecutionError(f"{label}: the model's stream ended without a reply")
        self.conversation.append(turn)
        return turn
