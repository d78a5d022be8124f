"""The LLM planner and the task executor (ADR-002).

``TaskExecutor.run(query)`` asks the model for a plan, validates it, and runs its steps
in order. A planning failure (invalid JSON, an invalid plan, a model error) is asked
again with the fallback planner prompt (``planner_retries``, once by default); when that
fails too, or a step fails (division by zero…), the run switches to the fallback plan:
one MainLLMAgent ``generateResponse`` step with empty ``args`` and the user's query as
its ``prompt``.

One conversation per run, so a single instruction chain in the query scripts it: the
planning call is turn 0 (``[query]``); each MainLLMAgent call appends the model's last
reply and the step's prompt (``[query, plan, prompt]`` is turn 1, and so on). When the
fallback re-sends the query, that copy goes without its instruction block, which would
otherwise restart the script. After a model error while planning, no reply was added,
so the fallback's call is turn 0 again.

Events (``harness.events.Event``): ``plan_requested`` (transient), ``plan_created``
(persisted: thought, steps, fallback and its reason), ``step_start`` (transient),
``message_chunk`` (transient, MainLLMAgent text), ``step_complete`` / ``step_error``
(persisted), ``plan_complete`` (transient, on success) or ``error`` (persisted).
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from harness.events import Event, Listener, Persistence
from harness.exceptions import HarnessError
from harness.systems.agent.emitter import EventEmitter
from harness.systems.agent.store import EventStore, InMemoryMessageQueue, SQLiteEventStore
from harness.systems.llm import (
    AssistantTurn,
    ConversationItem,
    ModelClient,
    ModelError,
    TextDelta,
    TurnComplete,
    UserMessage,
)
from harness.systems.planner.calculator import CalculationError, calculate
from harness.systems.planner.models import ActionStep, Plan, PlanValidationError, parse_plan
from harness.systems.planner.prompts import fallback_planner_prompt, planner_prompt
from harness.systems.quoting import quotable

__all__ = ["PlanningResult", "StepError", "TaskExecutor", "fallback_plan", "interpolate"]

PLANNER_PERSISTENCE = {
    "plan_requested": Persistence.TRANSIENT,
    "plan_created": Persistence.PERSISTED,
    "step_start": Persistence.TRANSIENT,
    "message_chunk": Persistence.TRANSIENT,
    "step_complete": Persistence.PERSISTED,
    "step_error": Persistence.PERSISTED,
    "plan_complete": Persistence.TRANSIENT,
    "error": Persistence.PERSISTED,
}
_PLACEHOLDER = re.compile(r"\{\{\s*step(\d+)_result\s*\}\}")
_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.S)


class StepError(HarnessError):
    """A step could not run; the message says which and why."""


def fallback_plan(query: str) -> Plan:
    """One MainLLMAgent step answering the query itself."""
    return Plan(
        thought="Planning failed; answer the request directly.",
        steps=[ActionStep(agent="MainLLMAgent", action="generateResponse", args={}, prompt=query)],
    )


def interpolate(prompt: str, results: list[str]) -> str:
    """Replace ``{{stepN_result}}`` (N from 1) with earlier step results."""

    def value(match: re.Match[str]) -> str:
        n = int(match.group(1))
        if not 1 <= n <= len(results):
            raise StepError(
                f"the prompt refers to {{{{step{n}_result}}}}, but only {len(results)} earlier step result(s) exist"
            )
        return results[n - 1]

    return _PLACEHOLDER.sub(value, prompt)


@dataclass
class PlanningResult:
    success: bool
    plan: Plan
    fallback_reason: str | None
    results: list[str] = field(default_factory=list)
    final_text: str | None = None
    error: str | None = None
    events: list[Event] = field(default_factory=list)


Action = Callable[[ActionStep, "_Run"], Awaitable[str]]


@dataclass
class _Run:
    query: str
    emitter: EventEmitter
    conversation: list[ConversationItem]
    results: list[str]
    fallback: bool = False
    """Running the fallback plan: its prompt is the user's own text, never interpolated."""


class TaskExecutor:
    """Plans with the model, then runs the plan's steps with the registered agents."""

    def __init__(self, client: ModelClient, *, store: EventStore | None = None, planner_retries: int = 1) -> None:
        if planner_retries < 0:
            raise ValueError(f"planner_retries must be >= 0, got {planner_retries!r}")
        self.client = client
        self.planner_retries = planner_retries
        """Planning failures re-asked with the fallback planner prompt before the fallback plan
        (seed 004: ``getFallbackPlannerPrompt``); once by default, never with 0."""
        self._owned_store: SQLiteEventStore | None = None  # closed by close(); a given store is the caller's
        if store is None:
            store = self._owned_store = SQLiteEventStore()
        self.store: EventStore = store
        self.queue = InMemoryMessageQueue()
        self._agents: dict[str, dict[str, Action]] = {
            "CalculatorAgent": {"calculate": self._calculate},
            "MainLLMAgent": {"generateResponse": self._generate_response},
        }

    def register(self, agent: str, action: str, run: Action) -> None:
        """Add an agent action: ``async run(step, run) -> str``."""
        self._agents.setdefault(agent, {})[action] = run

    def close(self) -> None:
        if self._owned_store is not None:
            self._owned_store.close()

    @property
    def agents(self) -> dict[str, list[str]]:
        return {name: sorted(actions) for name, actions in self._agents.items()}

    async def run(
        self, query: str, session_id: str = "planner", on_event: Listener[Event] | None = None
    ) -> PlanningResult:
        emitter = EventEmitter(session_id, self.store, self.queue, on_event, PLANNER_PERSISTENCE)
        run = _Run(query, emitter, [UserMessage(query)], [])
        await emitter.emit("plan_requested", query=query)
        plan, reason = await self._plan(run)
        run.fallback = reason is not None
        await emitter.emit(
            "plan_created",
            thought=plan.thought,
            steps=[s.model_dump() for s in plan.steps],
            fallback=reason is not None,
            **({"reason": reason} if reason else {}),
        )
        try:
            await self._execute(plan, run)
        except StepError as exc:
            if reason is not None:  # the fallback plan itself failed
                await emitter.emit("error", error=str(exc))
                return PlanningResult(False, plan, reason, run.results, None, str(exc), emitter.events)
            reason = f"step failed: {exc}"
            plan = fallback_plan(query)
            run.results, run.fallback = [], True
            await emitter.emit(
                "plan_created",
                thought=plan.thought,
                steps=[s.model_dump() for s in plan.steps],
                fallback=True,
                reason=reason,
            )
            try:
                await self._execute(plan, run)
            except StepError as again:
                await emitter.emit("error", error=str(again))
                return PlanningResult(False, plan, reason, run.results, None, str(again), emitter.events)
        await emitter.emit("plan_complete", reason="success")
        return PlanningResult(
            True, plan, reason, run.results, run.results[-1] if run.results else None, None, emitter.events
        )

    async def _plan(self, run: _Run) -> tuple[Plan, str | None]:
        reason, answered = "no plan", False
        for attempt in range(1 + self.planner_retries):
            if answered:  # a reply to correct; after a model error there is none, so ask the same again
                run.conversation.append(UserMessage(f"That plan could not be used ({reason}). Plan again."))
            prompt = planner_prompt(self.agents) if attempt == 0 else fallback_planner_prompt(self.agents)
            try:
                turn = await self._ask(run, system=prompt, stream_events=False)
            except ModelError as exc:
                reason, answered = f"the planner's model call failed: {exc.message}", False
                continue
            answered = True
            text = turn.text.strip()
            fenced = _FENCE.match(text)
            try:
                return parse_plan(json.loads(fenced.group(1) if fenced else text)), None
            except ValueError as exc:
                reason = str(exc) if isinstance(exc, PlanValidationError) else f"the plan is not valid JSON: {exc}"
        return fallback_plan(run.query), reason

    async def _execute(self, plan: Plan, run: _Run) -> None:
        for index, step in enumerate(plan.steps, start=1):
            await run.emitter.emit("step_start", step=index, agent=step.agent, action=step.action)
            action = self._agents.get(step.agent, {}).get(step.action)
            try:
                if action is None:
                    raise StepError(f"step {index}: no agent action {step.agent}.{step.action}; known: {self.agents}")
                result = await action(step, run)
            except StepError as exc:
                await run.emitter.emit("step_error", step=index, error=str(exc))
                raise
            run.results.append(result)
            await run.emitter.emit("step_complete", step=index, result=result)

    async def _ask(self, run: _Run, *, system: str | None = None, stream_events: bool = True) -> AssistantTurn:
        turn: AssistantTurn | None = None
        async for event in self.client.stream_turn(run.conversation, system=system):
            if isinstance(event, TextDelta) and stream_events:
                await run.emitter.emit("message_chunk", content=event.text, blockIndex=event.block_index)
            elif isinstance(event, TurnComplete):
                turn = event.turn
        if turn is None:
            raise ModelError("the model's stream ended without a complete turn", kind="stream")
        run.conversation.append(turn)
        return turn

    async def _calculate(self, step: ActionStep, run: _Run) -> str:
        try:
            return str(calculate(step.args.get("expression", "")))
        except CalculationError as exc:
            raise StepError(f"CalculatorAgent could not calculate {step.args.get('expression')!r}: {exc}") from exc

    async def _generate_response(self, step: ActionStep, run: _Run) -> str:
        if step.prompt is None or run.fallback:
            prompt = step.prompt if step.prompt is not None else run.query
        else:
            prompt = interpolate(step.prompt, run.results)
        if len(run.conversation) > 1 or not isinstance(run.conversation[-1], UserMessage):
            # A copy of the query would carry its instruction block again and restart the
            # script (the last tagged message wins); the block is already in message 0.
            run.conversation.append(UserMessage(quotable(prompt) if prompt == run.query else prompt))
        try:
            return (await self._ask(run)).text
        except ModelError as exc:
            raise StepError(f"MainLLMAgent's model call failed: {exc.message}") from exc
