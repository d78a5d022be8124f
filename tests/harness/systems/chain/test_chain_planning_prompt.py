"""The planning prompt offers the model what the chain may use (seed 001 §2.3,
``createChainPlan``): every policy a gate may name and every data source named for the
query, each list in full, comma-separated."""

from __future__ import annotations

import json

from harness.systems.chain import ChainPlan, Policy
from tests.harness.systems.chain.chain_support import Bench, query


def policy(name: str) -> Policy:
    return Policy.model_validate(
        {"name": name, "rules": [{"patterns": [{"type": "expression", "check": "length", "value": 0}]}]}
    )


def test_the_planning_prompt_lists_every_policy_and_every_data_source_named() -> None:
    b = Bench(policies=[policy("screen"), policy("audit")])
    sources = ["am7://default/data.data/census", "am7://default/data.data/recipes"]
    plan = ChainPlan(
        plan_query=query("q", json.dumps({"steps": [{"stepType": "TOOL", "toolName": "describeAllModels"}]})),
        data_references=sources,
    )
    b.run(plan)
    prompt = b.prompts()[0]
    assert "policyName (one of: audit, screen)" in prompt
    assert f"data sources named for this query: {sources[0]}, {sources[1]}" in prompt
