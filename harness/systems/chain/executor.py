"""The ChainExecutor: runs a plan's steps in order, dispatching by step type.

- ``{{name}}`` in a step's string inputs (and a RAG step's ``ragQuery``) is replaced from
  the chain context: the outputs of earlier steps, by ``outputName``. A missing name is
  an error naming it; a lone ``{{name}}`` keeps the value's own type.
- TOOL steps call a registered Python callable (sync or async), arguments bound by its
  signature and checked by its annotations (``harness.systems.tool_calls``); an unknown tool or
  mismatched arguments fail the step.
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
- A plan with a query and no steps is planned by the model first, in the same
  conversation; the planning prompt names the plan's ``dataReferences``. An unusable
  plan fails the run (a ``stepError`` naming no step: ``planning failed: ...``). LLM
  steps that name no chat or prompt config take the plan's ``chatConfigName`` /
  ``promptConfigName``.
- Events (``stepStart``, ``stepComplete``, ``stepError``, ``stepsInserted``,
  ``routingError`` and the endings ``chainComplete``, ``chainMaxSteps``,
  ``chainStalled``, ``chainCancelled``) go to every listener (``harness.events.notify``)
  with strictly increasing timestamps (the run's ``EventClock``) and the plan's
  ``am7://`` URI. The plan records how the run ended (``outcome``, ``error``).
- Guards: at most ``ABSOLUTE_MAX_STEPS`` (50) and the plan's ``maxSteps``
  (``chainMaxSteps``); two LLM steps in a row with the same output — no other kind of
  step between them — stop the chain (``chainStalled``, the later step COMPLETED, the
  rest PENDING). A run can be cancelled.
- With a ``PlanStore`` the plan is saved when it starts, after every step and at the
  end, whatever the end: the stored plan shows exactly what ran.

The run loop is ``harness.systems.chain.run``; what each step type does, ``harness.systems.chain.steps``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from harness.events import Listener
from harness.systems.chain.access import EVERYTHING, Permissions
from harness.systems.chain.models import ChainEvent, ChainPlan, PromptConfig
from harness.systems.chain.policy import Policy
from harness.systems.chain.run import ABSOLUTE_MAX_STEPS, ChainRun
from harness.systems.chain.store import PlanStore
from harness.systems.chain.vectors import InMemoryVectorStore, VectorStore
from harness.systems.llm import ModelClient
from harness.systems.tool_calls import CheckedTool

__all__ = ["ABSOLUTE_MAX_STEPS", "ChainExecutor", "ChainListener"]

ChainListener = Listener[ChainEvent]


class ChainExecutor:
    """Executes chain plans with its tools, configs, policies, vector store and model.

    ``client`` is the default model; ``chat_configs`` name other ``ModelClient``s an LLM
    step can pick by ``chatConfigName``. ``organization`` scopes ``am7://`` references;
    ``permissions`` say which tools and documents the caller may use.
    Nothing of one run is kept on the executor, so runs may overlap.
    """

    def __init__(
        self,
        client: ModelClient | None = None,
        *,
        tools: Mapping[str, Callable[..., Any]] | None = None,
        prompt_configs: Mapping[str, PromptConfig] | None = None,
        chat_configs: Mapping[str, ModelClient] | None = None,
        policies: Iterable[Policy] | Mapping[str, Policy] | None = None,
        vector_store: VectorStore | None = None,
        store: PlanStore | None = None,
        organization: str = "default",
        routing: bool = True,
        permissions: Permissions = EVERYTHING,
    ) -> None:
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
        self.permissions = permissions  # what the caller may use (harness.systems.chain.access)
        self._listeners: list[ChainListener] = []
        self._checked: dict[str, CheckedTool] = {}

    def tool(self, name: str) -> CheckedTool | None:
        """The registered tool ``name``, its arguments checked (the check is built once per
        tool, keyed by name: a callable object need not be hashable); ``None`` if unknown."""
        handler = self.tools.get(name)
        if handler is None:
            return None
        checked = self._checked.get(name)
        if checked is None or checked.handler is not handler:
            checked = self._checked[name] = CheckedTool(name, handler)
        return checked

    def add_listener(self, listener: ChainListener) -> None:
        """Call ``listener`` (sync or async) with every event of every run."""
        self._listeners.append(listener)

    async def execute_chain(
        self, plan: ChainPlan, *, cancel: asyncio.Event | None = None, listeners: Iterable[ChainListener] = ()
    ) -> ChainPlan:
        """Run ``plan``; a copy is returned (``chainMode`` true) and the input is left as it was.

        Setting ``cancel`` (or cancelling the task) stops the run: the running step is
        SKIPPED, later steps stay PENDING, ``chainCancelled`` is emitted. A failing step
        raises ``PlanExecutionError``. ``listeners`` hear this run only.
        """
        run = ChainRun(self, plan.model_copy(deep=True), cancel, [*self._listeners, *listeners])
        return await run.execute()
