"""Chain records (seeds 000/001): plan, step, chain event, their two enums, and the
named prompt configs LLM steps use.

Fields keep the seeds' names in JSON (``stepType``, ``maxSteps``…) and snake_case in
Python. Every new field has the seeds' default, so a plan saved before it existed loads.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from harness.events import EventRecord

__all__ = ["CHAIN_ENDINGS", "ChainEvent", "ChainPlan", "PlanStep", "PromptConfig", "StepStatus", "StepType"]

CHAIN_ENDINGS = frozenset({"chainComplete", "chainMaxSteps", "chainStalled", "chainCancelled"})
"""The events that end a run that did not fail, each its own outcome: ``completed`` (or
``gated``), ``maxSteps``, ``stalled``, ``cancelled``. A failed run ends with its
``stepError`` instead."""


class StepType(str, Enum):
    UNKNOWN = "UNKNOWN"
    TOOL = "TOOL"
    LLM = "LLM"
    RAG_QUERY = "RAG_QUERY"
    POLICY_GATE = "POLICY_GATE"


class StepStatus(str, Enum):
    UNKNOWN = "UNKNOWN"
    PENDING = "PENDING"
    EXECUTING = "EXECUTING"
    COMPLETED = "COMPLETED"
    FAILED = "FAILED"
    GATED = "GATED"
    SKIPPED = "SKIPPED"


class _Record(BaseModel):
    model_config = ConfigDict(populate_by_name=True, use_enum_values=False, validate_assignment=True)

    def to_json(self) -> str:
        return self.model_dump_json(by_alias=True)


class PlanStep(_Record):
    """One step. ``inputs`` are the tool's arguments (or, for an LLM step, ``prompt``);
    string values may refer to the chain context as ``{{name}}``. ``output_name`` is the
    context key the step's output is stored under."""

    step_number: int = Field(default=0, alias="stepNumber")
    description: str = ""
    tool_name: str | None = Field(default=None, alias="toolName")
    inputs: dict[str, Any] = Field(default_factory=dict)
    output_name: str | None = Field(default=None, alias="outputName")
    output: Any = None
    step_type: StepType = Field(default=StepType.TOOL, alias="stepType")
    step_status: StepStatus = Field(default=StepStatus.PENDING, alias="stepStatus")
    prompt_config_name: str | None = Field(default=None, alias="promptConfigName")
    chat_config_name: str | None = Field(default=None, alias="chatConfigName")
    policy_name: str | None = Field(default=None, alias="policyName")
    rag_query: str | None = Field(default=None, alias="ragQuery")
    rag_limit: int = Field(default=10, alias="ragLimit")
    dynamic: bool = False
    parent_step: int = Field(default=-1, alias="parentStep")
    summary_text: str | None = Field(default=None, alias="summaryText")
    vector_reference_uri: str | None = Field(default=None, alias="vectorReferenceUri")


class ChainPlan(_Record):
    """A plan. ``object_id`` is given on the first run when missing; the plan is then
    known as ``am7://<organization>/tool.plan/<object_id>``."""

    object_id: str | None = Field(default=None, alias="objectId")
    name: str = "chain"
    plan_query: str = Field(default="", alias="planQuery")
    executed: bool = False
    steps: list[PlanStep] = Field(default_factory=list)
    output: Any = None
    max_steps: int = Field(default=20, alias="maxSteps")
    total_executed_steps: int = Field(default=0, alias="totalExecutedSteps")
    context_blocks: str | None = Field(default=None, alias="chainContextJson")
    """The chain context as MCP context blocks (``harness.systems.chain.save_context``)."""
    chain_mode: bool = Field(default=False, alias="chainMode")
    """True once the chain executor has made or run the plan (the seed's "ChainExecutor,
    not the legacy PlanExecutor")."""
    stream_session_id: str | None = Field(default=None, alias="streamSessionId")
    """The WebSocket session that started the plan (set by the service's WebSocket door)."""
    mcp_session_id: str | None = Field(default=None, alias="mcpSessionId")
    """The MCP session whose ``am7_chain_execute`` call started the plan (set by the MCP door)."""
    chat_config_name: str | None = Field(default=None, alias="chatConfigName")
    """The chat config the plan was asked for: LLM steps that name none use it."""
    prompt_config_name: str | None = Field(default=None, alias="promptConfigName")
    """The prompt config the plan was asked for: LLM steps that name none use it."""
    data_references: list[str] = Field(default_factory=list, alias="dataReferences")
    """``am7://`` data sources the plan was asked to use: a plan made from the query is
    told of them (for its RAG_QUERY steps' ``vectorReferenceUri``)."""
    outcome: str | None = None
    """How the last run ended, as the executor recorded it: ``running`` while it lasts
    (a plan stored so after its process died was cut off), then ``completed``,
    ``failed``, ``cancelled``, ``gated``, ``maxSteps`` or ``stalled``; None if never run."""
    error: str | None = None
    """Why the last run failed or stopped (the ending's message), else None."""


class ChainEvent(_Record, EventRecord):
    """A progress event (never persisted by itself; the executor hands it to listeners).
    ``as_event`` is the run's ``harness.events.Event`` for goldens and invariants."""

    RUN_FIELDS: ClassVar[frozenset[str]] = frozenset({"plan_name", "mcp_context_uri"})

    event_type: str = Field(alias="eventType")
    plan_name: str = Field(default="", alias="planName")
    step_number: int | None = Field(default=None, alias="stepNumber")
    total_steps: int | None = Field(default=None, alias="totalSteps")
    step_type: StepType | None = Field(default=None, alias="stepType")
    step_status: StepStatus | None = Field(default=None, alias="stepStatus")
    step_summary: str | None = Field(default=None, alias="stepSummary")
    tool_name: str | None = Field(default=None, alias="toolName")
    output_preview: str | None = Field(default=None, alias="outputPreview")
    error_message: str | None = Field(default=None, alias="errorMessage")
    timestamp: int = 0
    mcp_context_uri: str | None = Field(default=None, alias="mcpContextUri")


@dataclass(frozen=True)
class PromptConfig:
    """A named system prompt for LLM steps and chat operations."""

    system: str
    max_tokens: int = 1024
