"""One run of a chain plan: the step loop, its guards, events and saving.

The run owns what one execution needs — its copy of the plan, the chain context, the
one conversation with the model, its clock — so runs of one executor may overlap.
Steps are performed by ``harness.systems.chain.steps``; planning from the query and routing
after LLM steps are model calls in the same conversation.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import uuid
from collections.abc import Awaitable
from typing import Any

from harness.events import EventClock, Listener, notify
from harness.systems.chain.context import restore_context, save_context
from harness.systems.chain.errors import PlanExecutionError
from harness.systems.chain.models import ChainEvent, ChainPlan, PlanStep, PromptConfig, StepStatus, StepType
from harness.systems.chain.planning import PLAN_PROMPT, PlanningError, parse_plan_reply
from harness.systems.chain.routing import ROUTE_PROMPT, RoutingError, parse_routing
from harness.systems.chain.settings import ChainSettings
from harness.systems.chain.steps import perform, preview
from harness.systems.chain.uris import plan_uri
from harness.systems.llm import AssistantTurn, ConversationItem, ModelClient, ModelError, TurnComplete, UserMessage
from harness.systems.quoting import quotable

__all__ = ["ABSOLUTE_MAX_STEPS", "ChainRun"]

ABSOLUTE_MAX_STEPS = 50


class _Cancelled(Exception):
    pass


_OUTCOMES = {"chainComplete": "completed", "chainMaxSteps": "maxSteps", "chainStalled": "stalled"}
"""The outcome each ending records (``finish``); a gate's ``chainComplete`` says ``gated``."""


class ChainRun:
    """Runs ``plan`` (the caller's copy) once on ``executor``; see ``execute``."""

    def __init__(
        self,
        executor: ChainSettings,
        plan: ChainPlan,
        cancel: asyncio.Event | None,
        listeners: list[Listener[ChainEvent]],
    ) -> None:
        self.executor = executor
        self.plan = plan
        plan.object_id = plan.object_id or uuid.uuid4().hex
        plan.chain_mode = True  # run by the chain executor, whoever made it
        self.uri = plan_uri(executor.organization, plan.object_id)
        self.cancel = cancel
        self.listeners = listeners
        try:
            self.context: dict[str, Any] = restore_context(plan.context_blocks)
        except ValueError as exc:
            raise PlanExecutionError(f"plan {plan.name!r}: {exc}", plan) from exc
        self.unseen: dict[str, Any] = {}  # non-LLM outputs the model has not been shown
        self.conversation: list[ConversationItem] = []
        self.last_llm: PlanStep | None = None  # the latest LLM step, while no other kind has run since
        self.truncated = False
        self.clock = EventClock()

    # -- events and persistence ----------------------------------------------------------

    async def emit(self, event_type: str, step: PlanStep | None = None, **fields: Any) -> None:
        if step is not None:  # what the caller passes wins over the step's own fields
            fields = (
                dict(
                    step_number=step.step_number,
                    step_type=step.step_type,
                    step_status=step.step_status,
                    tool_name=step.tool_name,
                    step_summary=step.summary_text,
                )
                | fields
            )
        event = ChainEvent(
            event_type=event_type,
            plan_name=self.plan.name,
            timestamp=self.clock.now(),
            total_steps=len(self.plan.steps),
            mcp_context_uri=self.uri,
            **fields,
        )
        await notify(self.listeners, event)

    def save(self) -> None:
        """Write the plan to the executor's store, if it has one (the context with it)."""
        if self.executor.store is not None:
            self.save_for_caller()

    def save_for_caller(self) -> None:
        """The plan leaves the run (returned, or carried by an error): its context is
        written into it, and it is stored. Serialising the context costs, so it is done
        only when something reads it."""
        self.plan.context_blocks = save_context(self.context, self.plan.object_id or "")
        if self.executor.store is not None:
            self.executor.store.save(self.plan, self.executor.organization)

    def record_outcome(self, outcome: str, error: str | None) -> None:
        """Write how the run ended into the plan (status reads it from the store)."""
        self.plan.outcome, self.plan.error = outcome, error

    async def finish(self, event_type: str, *, outcome: str | None = None, **fields: Any) -> ChainPlan:
        self.plan.executed = True
        self.record_outcome(outcome or _OUTCOMES[event_type], fields.get("error_message"))
        self.save_for_caller()
        await self.emit(event_type, **fields)
        return self.plan

    # -- the loop ------------------------------------------------------------------------

    async def execute(self) -> ChainPlan:
        self.plan.steps = sorted(self.plan.steps, key=lambda s: s.step_number)
        if len({s.step_number for s in self.plan.steps}) < len(self.plan.steps) or any(
            s.step_number < 1 for s in self.plan.steps
        ):
            for number, unnumbered in enumerate(self.plan.steps, start=1):  # steps written without numbers
                unnumbered.step_number = number
        limit = min(self.plan.max_steps, ABSOLUTE_MAX_STEPS)
        self.adopt_plan_configs(self.plan.steps)
        self.record_outcome("running", None)
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
        except PlanExecutionError as exc:
            if self.plan.outcome == "running":  # failed before any step (planning, routing)
                self.record_outcome("failed", str(exc))
                self.save_for_caller()
            raise
        except (_Cancelled, asyncio.CancelledError) as exc:
            if step is not None and step.step_status is StepStatus.EXECUTING:
                step.step_status = StepStatus.SKIPPED
                step.summary_text = "cancelled while running"
            self.record_outcome("cancelled", "the chain was cancelled")
            self.save_for_caller()
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
            output = await self.interruptible(perform(self, step))
        except PlanExecutionError as exc:
            step.step_status = StepStatus.FAILED
            step.summary_text = str(exc)
            self.record_outcome("failed", str(exc))
            self.save_for_caller()
            await self.emit("stepError", step, error_message=str(exc))
            raise PlanExecutionError(str(exc), self.plan) from exc.__cause__
        step.output = output
        if step.step_status is StepStatus.GATED:
            self.save()
            await self.emit("stepComplete", step, output_preview=preview(output))
            return await self.finish(
                "chainComplete",
                outcome="gated",
                error_message=f"halted: step {step.step_number} was gated by policy {step.policy_name!r}",
            )
        step.step_status = StepStatus.COMPLETED
        if step.output_name:
            self.context[step.output_name] = output
            if step.step_type is not StepType.LLM:
                self.unseen[step.output_name] = output
        self.plan.output = output
        self.save()
        await self.emit("stepComplete", step, output_preview=preview(output))
        if step.step_type is not StepType.LLM:
            self.last_llm = None  # another kind of step in between: the next LLM output starts afresh
            return None
        previous, self.last_llm = self.last_llm, step
        if previous is not None and output == previous.output:
            return await self.finish(
                "chainStalled",
                error_message=f"steps {previous.step_number} and "
                f"{step.step_number} gave the same LLM output twice in a row",
            )
        if self.executor.routing:
            await self.interruptible(self.route(step, index, limit))
        return None

    def adopt_plan_configs(self, steps: list[PlanStep]) -> None:
        """LLM steps that name no chat or prompt config take the plan's (what it was asked for)."""
        for step in steps:
            if step.step_type is StepType.LLM:
                step.chat_config_name = step.chat_config_name or self.plan.chat_config_name
                step.prompt_config_name = step.prompt_config_name or self.plan.prompt_config_name

    async def interruptible(self, work: Awaitable[Any]) -> Any:
        """Await ``work``, unless the run's cancel event is set first."""
        if self.cancel is None:
            return await work
        if self.cancel.is_set():  # cancelled before the work began: never start it
            if inspect.iscoroutine(work):
                work.close()
            raise _Cancelled
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
        executor = self.executor
        prompt = PLAN_PROMPT.format(
            max_steps=limit,
            tools=", ".join(sorted(executor.tools)) or "none",
            prompts=", ".join(sorted(executor.prompt_configs)) or "none",
            policies=", ".join(sorted(executor.policies)) or "none",
            sources=", ".join(self.plan.data_references) or "none named",
        )
        try:
            # More steps than maxSteps are kept (up to the ceiling): the step limit then ends
            # the run as it ends any plan too long for it, and says so (chainMaxSteps).
            self.plan.steps = parse_plan_reply((await self.ask(prompt, "planning")).text, ABSOLUTE_MAX_STEPS)
            self.adopt_plan_configs(self.plan.steps)
        except (PlanningError, PlanExecutionError) as exc:
            message = f"planning failed: {exc}" if isinstance(exc, PlanningError) else str(exc)
            self.save_for_caller()
            await self.emit("stepError", error_message=message)
            raise PlanExecutionError(message, self.plan) from exc
        self.save()
        await self.emit(
            "stepsInserted", step_number=0, step_summary=f"{len(self.plan.steps)} step(s) planned for the query"
        )

    async def route(self, step: PlanStep, index: int, limit: int) -> None:
        """Ask the model what comes next; insert at most 3 dynamic steps after ``step``."""
        prompt = ROUTE_PROMPT.format(
            query=quotable(self.plan.plan_query),
            step_number=step.step_number,
            output=str(step.output)[:2000],
            context=", ".join(sorted(self.context)) or "none",
        )
        try:
            decision = parse_routing((await self.ask(prompt, "routing")).text)
        except (RoutingError, PlanExecutionError) as exc:
            await self.emit("routingError", step, error_message=f"routing after step {step.step_number} ignored: {exc}")
            return
        new_steps = decision.next_steps
        if decision.complete or not new_steps:
            return
        pending = sum(1 for s in self.plan.steps[index + 1 :] if s.step_status is StepStatus.PENDING)
        room = limit - self.plan.total_executed_steps - pending
        if len(new_steps) > room:
            self.truncated = True  # the chain will end at its step limit
            new_steps = new_steps[: max(room, 0)]
        if not new_steps:
            return
        for new in new_steps:
            new.dynamic, new.parent_step, new.step_status = True, step.step_number, StepStatus.PENDING
        self.adopt_plan_configs(new_steps)
        self.plan.steps[index + 1 : index + 1] = new_steps
        for number, s in enumerate(self.plan.steps, start=1):
            s.step_number = number
        self.save()
        await self.emit(
            "stepsInserted",
            step,
            step_summary=f"{len(new_steps)} step(s) inserted after step {step.step_number}: {decision.reason}".strip(),
        )

    async def ask(
        self, prompt: str, label: str, config: PromptConfig | None = None, client: ModelClient | None = None
    ) -> AssistantTurn:
        """One model turn in the run's conversation (the plan query opens it)."""
        client = client if client is not None else self.executor.client
        if client is None:
            raise PlanExecutionError(f"{label}: an LLM call needs a model client (ChainExecutor(client=...))")
        first = not self.conversation
        self.conversation.append(
            UserMessage(f"{self.plan.plan_query}\n\n{prompt}" if first and self.plan.plan_query else prompt)
        )
        turn: AssistantTurn | None = None
        try:
            async for event in client.stream_turn(
                self.conversation,
                system=config.system if config else None,
                max_tokens=config.max_tokens if config else 1024,
            ):
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
