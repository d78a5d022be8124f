"""What a caller of the chain service asks for: ``ChainRequest``, the body every door
(REST, WebSocket, MCP) reads, validated before anything runs."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from harness.systems.chain import PlanStep
from harness.systems.service.body_checks import nested_deeper_than, non_finite_path, surrogate_path
from harness.systems.service.errors import BadRequest
from harness.validation_problems import validation_problems

__all__ = ["MAX_NESTING", "ChainRequest"]


class ChainRequest(BaseModel):
    """What a caller asks for: a query, and optionally the steps (else the model plans
    them from the query as the run's first call, told of the data references)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    query: str = Field(min_length=1, alias="planQuery")
    steps: list[PlanStep] | None = None
    max_steps: int = Field(default=20, ge=1, alias="maxSteps")
    chat_config: str | None = Field(default=None, alias="chatConfigName")
    prompt_config: str | None = Field(default=None, alias="promptConfigName")
    chat_config_uri: str | None = Field(default=None, alias="chatConfigUri")
    prompt_config_uri: str | None = Field(default=None, alias="promptConfigUri")
    data_references: list[str] = Field(default_factory=list, alias="dataReferences")
    name: str = "chain"

    @classmethod
    def parse(cls, data: Any) -> ChainRequest:
        """Validate ``data``; a ``BadRequest`` names the field and the problem (nesting
        past ``MAX_NESTING``, lone surrogates and non-finite numbers too: none could be
        stored or sent back as JSON)."""
        if nested_deeper_than(data, MAX_NESTING):
            raise BadRequest(f"invalid chain request: the body is nested more than {MAX_NESTING} levels deep")
        where = surrogate_path(data)
        if where is not None:
            raise BadRequest(
                f"invalid chain request: body.{where}: holds a lone UTF-16 surrogate, "
                "which is not valid Unicode; send well-formed UTF-8 text"
            )
        where = non_finite_path(data)
        if where is not None:
            raise BadRequest(
                f"invalid chain request: body.{where}: is not a finite number (JSON has no Infinity or NaN)"
            )
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            problems = "; ".join(validation_problems(exc, "body"))
            raise BadRequest(f"invalid chain request: {problems}") from exc


MAX_NESTING = 64
"""Deepest nesting of arrays and objects a chain request may use."""
