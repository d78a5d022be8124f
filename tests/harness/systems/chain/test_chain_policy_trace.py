"""A policy's evaluation traverses every rule and every pattern (seed 001, Group E
``testPolicyGateWithComplexRules``: "assert policy evaluation traverses both rules"),
and its decision says so: one trace line per pattern (what was checked, match or not),
one per rule (its condition, holds or fails), then the policy's effect."""

from __future__ import annotations

import asyncio

from harness.systems.chain import Policy
from harness.systems.chain.policy import evaluate_policy

INSTRUCTION = "Is this sentence about food, cooking or baking, and is it free of any rude words?"


def test_the_decision_traces_every_pattern_and_rule_of_the_policy() -> None:
    policy = Policy.model_validate(
        {
            "name": "screen",
            "condition": "ANY",
            "rules": [
                {"name": "long", "patterns": [{"type": "expression", "check": "length", "op": ">", "value": 10}]},
                {
                    "patterns": [
                        {"type": "expression", "check": "contains", "value": "cake"},
                        {"type": "chat_operation", "mode": "validate", "instruction": INSTRUCTION},
                    ]
                },
            ],
        }
    )
    asked: list[str] = []

    async def chat(prompt: str, config_name: str | None) -> str:
        asked.append(prompt)
        return "PERMIT: it is about bread."

    decision = asyncio.run(evaluate_policy(policy, "Cy bakes bread.", chat))
    assert decision.permit and decision.effect == "PERMIT" and decision.fact == "Cy bakes bread."
    assert decision.trace == [
        "rule long: length > 10 -> match",
        "rule long (ALL) -> holds",
        "rule 2: contains 'cake' -> no match",
        f"rule 2: chat validate: {INSTRUCTION[:60]} -> match",
        "rule 2 (ALL) -> fails",
        "policy screen (ANY) -> PERMIT",
    ]
    assert len(asked) == 1 and asked[0].startswith(INSTRUCTION)
