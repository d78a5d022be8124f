"""Policies for POLICY_GATE steps: named policies of rules over patterns.

A ``Policy`` combines its rules, and a ``Rule`` its patterns, by a condition: ``ALL``
(every one matches), ``ANY`` (at least one) or ``NONE`` (not one). Patterns:

- ``ExpressionPattern`` — ``length`` (with ``op``), ``contains``, ``regex``, ``equals``
  over the fact;
- ``ChatOperationPattern`` — asks the LLM: ``validate`` expects a reply starting
  ``PERMIT`` or ``DENY``; ``rewrite`` replaces the fact with the reply (so a gate can
  turn a casual greeting formal), and matches when the reply is not empty.

Every rule and pattern is evaluated (no short cut) and traced, so a decision shows how
it was reached. The fact a gate passes on is the fact after its rewrites.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = [
    "ChatOperationPattern",
    "Condition",
    "ExpressionPattern",
    "Policy",
    "PolicyDecision",
    "Rule",
    "evaluate_policy",
]

Chat = Callable[[str, "str | None"], Awaitable[str]]
"""Asks the model: (prompt, prompt config name) -> reply text."""

_OPS: dict[str, Callable[[Any, Any], bool]] = {
    ">": operator.gt,
    ">=": operator.ge,
    "<": operator.lt,
    "<=": operator.le,
    "==": operator.eq,
    "!=": operator.ne,
}


class Condition(str, Enum):
    ALL = "ALL"
    ANY = "ANY"
    NONE = "NONE"

    def combine(self, results: list[bool]) -> bool:
        if self is Condition.ALL:
            return all(results)
        if self is Condition.ANY:
            return any(results)
        return not any(results)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class ExpressionPattern(_Model):
    """A check of the fact's text: ``length`` compares its character count with
    ``value`` by ``op``; ``contains``/``equals`` compare text; ``regex`` searches."""

    type: Literal["expression"] = "expression"
    check: Literal["length", "contains", "regex", "equals"]
    value: int | str
    op: Literal[">", ">=", "<", "<=", "==", "!="] = ">"
    ignore_case: bool = Field(default=False, alias="ignoreCase")

    @field_validator("value")
    @classmethod
    def _regex_compiles(cls, value: Any, info: Any) -> Any:
        if info.data.get("check") == "regex":
            try:
                re.compile(str(value))
            except re.error as exc:
                raise ValueError(f"invalid regex {value!r}: {exc}") from exc
        return value

    def matches(self, fact: str) -> bool:
        if self.check == "length":
            return _OPS[self.op](len(fact), int(self.value))
        text, value = (fact.lower(), str(self.value).lower()) if self.ignore_case else (fact, str(self.value))
        if self.check == "contains":
            return value in text
        if self.check == "equals":
            return text.strip() == value.strip()
        return re.search(str(self.value), fact, re.I if self.ignore_case else 0) is not None

    def describe(self) -> str:
        if self.check == "length":
            return f"length {self.op} {self.value}"
        return f"{self.check} {self.value!r}"


class ChatOperationPattern(_Model):
    """Asks the model to ``validate`` or ``rewrite`` the fact, following ``instruction``."""

    type: Literal["chat_operation"] = "chat_operation"
    mode: Literal["validate", "rewrite"]
    instruction: str
    prompt_config_name: str | None = Field(default=None, alias="promptConfigName")

    def prompt(self, fact: str) -> str:
        if self.mode == "validate":
            return f"{self.instruction}\nAnswer PERMIT or DENY first, then the reason.\n<fact>\n{fact}\n</fact>"
        return f"{self.instruction}\nAnswer with the rewritten text only.\n<fact>\n{fact}\n</fact>"

    def describe(self) -> str:
        return f"chat {self.mode}: {self.instruction[:60]}"


Pattern = Annotated[ExpressionPattern | ChatOperationPattern, Field(discriminator="type")]


class Rule(_Model):
    name: str = ""
    condition: Condition = Condition.ALL
    patterns: list[Pattern] = Field(min_length=1)


class Policy(_Model):
    """A named policy: ``rules`` combined by ``condition``."""

    name: str = Field(min_length=1)
    condition: Condition = Condition.ALL
    rules: list[Rule] = Field(min_length=1)


@dataclass
class PolicyDecision:
    permit: bool
    fact: str
    trace: list[str] = field(default_factory=list)

    @property
    def effect(self) -> str:
        return "PERMIT" if self.permit else "DENY"


async def evaluate_policy(policy: Policy, fact: str, chat: Chat) -> PolicyDecision:
    """Evaluate ``policy`` over ``fact``; ``chat`` runs chat-operation patterns."""
    decision = PolicyDecision(permit=False, fact=fact)
    rule_results = []
    for number, rule in enumerate(policy.rules, start=1):
        results = []
        for pattern in rule.patterns:
            if isinstance(pattern, ExpressionPattern):
                matched = pattern.matches(decision.fact)
            else:
                reply = (await chat(pattern.prompt(decision.fact), pattern.prompt_config_name)).strip()
                if pattern.mode == "rewrite":
                    matched = bool(reply)
                    if matched:
                        decision.fact = reply
                else:
                    matched = reply.upper().startswith("PERMIT")
            results.append(matched)
            decision.trace.append(
                f"rule {rule.name or number}: {pattern.describe()} -> {'match' if matched else 'no match'}"
            )
        outcome = rule.condition.combine(results)
        rule_results.append(outcome)
        decision.trace.append(
            f"rule {rule.name or number} ({rule.condition.value}) -> {'holds' if outcome else 'fails'}"
        )
    decision.permit = policy.condition.combine(rule_results)
    decision.trace.append(f"policy {policy.name} ({policy.condition.value}) -> {decision.effect}")
    return decision
