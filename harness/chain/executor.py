"""The ChainExecutor: runs a plan's steps in order, dispatching by step type.

This first part runs TOOL and LLM steps; RAG_QUERY and POLICY_GATE steps, dynamic step
insertion and context save/restore are still to come and fail their step with a clear
message meanwhile.

- ``{{name}}`` in a step's string inputs is replaced from the chain context (the outputs
  of earlier steps, by ``outputName``); a missing name is an error naming it.
- TOOL steps call a registered Python callable (sync or async), arguments bound by its
  signature; an unknown tool or mismatched arguments fail the step.
- LLM steps talk to the model over HTTP through a ``ModelClient``. A run keeps ONE
  conversation: the first LLM call sends the plan query with the step's prompt, later
  calls append the previous reply and the next prompt, so one instruction chain in the
  plan query scripts every LLM call of the run.
- Events (``stepStart``, ``stepComplete``, ``stepError``, ``chainComplete``,
  ``chainMaxSteps``) go to every listener, with strictly increasing timestamps.
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
from harness.llm import AssistantTurn, ConversationItem, ModelClient, ModelError, TurnComplete, UserMessage

__all__ = ["ABSOLUTE_MAX_STEPS", "ChainExecutor", "ChainListener", "PlanExecutionError", "PromptConfig"]

ABSOLUTE_MAX_STEPS = 50
_VARIABLE = re.compile(r"\{\{\s*([A-Za-z_][\w.]*)\s*\}\}")
_PREVIEW = 100

ChainListener = Callable[[ChainEvent], "None | Awaitable[None]"]


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
        self._last_ms = 0

    async def emit(self, event_type: str, step: PlanStep | None = None, **fields: Any) -> None:
        self._last_ms = max(self._last_ms + 1, time.time_ns() // 1_000_000)
        event = ChainEvent(event_type=event_type, plan_name=self.plan.name, timestamp=self._last_ms,
                           total_steps=len(self.plan.steps), **fields)
        if step is not None:
            event = event.model_copy(update=dict(step_number=step.step_number, step_type=step.step_type,
                                                 step_status=step.step_status, tool_name=step.tool_name,
                                                 step_summary=step.summary_text))
        for listener in self.executor._listeners:
            outcome = listener(event)
            if inspect.isawaitable(outcome):
                await outcome

    async def execute(self) -> ChainPlan:
        steps = sorted(self.plan.steps, key=lambda s: s.step_number)
        self.plan.steps = steps
        limit = min(self.plan.max_steps, ABSOLUTE_MAX_STEPS)
        for step in steps:
            if self.plan.total_executed_steps >= limit:
                # A controlled stop: the steps not run stay PENDING.
                self.plan.executed = True
                self.plan.chain_context_json = json.dumps(self.context, default=str)
                await self.emit("chainMaxSteps", error_message=f"the chain stopped at {limit} steps")
                return self.plan
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
                    await self.emit("chainComplete", error_message="stalled: the same LLM output twice in a row")
                    self.plan.executed = True
                    return self.plan
                self.last_llm_output = output
        self.plan.executed = True
        self.plan.chain_context_json = json.dumps(self.context, default=str)
        await self.emit("chainComplete")
        return self.plan

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
        client = self.executor.client
        if client is None:
            raise PlanExecutionError(f"step {step.step_number}: an LLM step needs a model client")
        config = None
        if step.prompt_config_name is not None:
            config = self.executor.prompt_configs.get(step.prompt_config_name)
            if config is None:
                raise PlanExecutionError(f"step {step.step_number}: no prompt config named "
                                         f"{step.prompt_config_name!r}; known: {sorted(self.executor.prompt_configs)}")
        prompt = str(self.substitute(step.inputs.get("prompt", step.description), step))
        if not self.conversation:
            self.conversation.append(UserMessage(f"{self.plan.plan_query}\n\n{prompt}" if self.plan.plan_query else prompt))
        else:
            self.conversation.append(UserMessage(prompt))
        turn: AssistantTurn | None = None
        try:
            async for event in client.stream_turn(self.conversation, system=config.system if config else None,
                                                  max_tokens=config.max_tokens if config else 1024):
                if isinstance(event, TurnComplete):
                    turn = event.turn
        except ModelError as exc:
            raise PlanExecutionError(f"step {step.step_number}: the model call failed: {exc.message}") from exc
        if turn is None or not turn.text.strip():
            raise PlanExecutionError(f"step {step.step_number}: the model returned an empty response")
        self.conversation.append(turn)
        return turn.text
