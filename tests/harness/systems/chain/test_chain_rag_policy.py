"""RAG_QUERY and POLICY_GATE steps against the mock: seed Groups D and E, and RAG scoping."""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness.systems.chain import (
    ChainPlan,
    InMemoryVectorStore,
    PlanExecutionError,
    Policy,
    StepStatus,
    parse_context,
)
from harness.systems.chain.policy import ExpressionPattern
from tests.harness.systems.chain.chain_support import DONE, Bench, answers, llm, query, step


def results(output: str) -> list[dict[str, Any]]:
    (block,) = parse_context(output).blocks
    return block.data["results"]


def policy(name: str, *rules: dict[str, Any], condition: str = "ALL") -> Policy:
    return Policy.model_validate({"name": name, "condition": condition, "rules": list(rules)})


def rule(*patterns: dict[str, Any], condition: str = "ALL", name: str = "") -> dict[str, Any]:
    return {"name": name, "condition": condition, "patterns": list(patterns)}


ALWAYS = policy("always", rule({"type": "expression", "check": "length", "op": ">=", "value": 0}))
NEVER = policy("never", rule({"type": "expression", "check": "equals", "value": "this never matches"}))


# -- Group D: RAG_QUERY ---------------------------------------------------------------


def test_d1_rag_step_basic() -> None:
    done = Bench().run(ChainPlan(steps=[step(1, stepType="RAG_QUERY", ragQuery="population demographics", ragLimit=5)]))
    found = results(done.output)
    assert done.steps[0].step_status is StepStatus.COMPLETED
    assert 1 <= len(found) <= 5
    assert found[0]["uri"] == "am7://default/data.data/census" and "4,200 people" in found[0]["content"]
    assert done.steps[0].summary_text == f"{len(found)} result(s) for 'population demographics'"


def test_d2_rag_query_is_substituted_from_context() -> None:
    b = Bench()
    done = b.run(
        ChainPlan(
            plan_query=answers("Research", "population demographics"),
            steps=[
                llm(1, "Generate a search query about population demographics", outputName="searchQuery"),
                step(2, stepType="RAG_QUERY", ragQuery="{{searchQuery}}", ragLimit=10),
            ],
        )
    )
    found = results(done.output)
    assert parse_context(done.output).blocks[0].data["query"] == "population demographics"
    assert found and found[0]["uri"].endswith("/census")


def test_d3_rag_feeds_llm_steps() -> None:
    b = Bench()
    done = b.run(
        ChainPlan(
            plan_query=answers("Who bakes?", "Cy bakes bread.", "Final: Cy, the baker."),
            steps=[
                step(1, stepType="RAG_QUERY", ragQuery="who bakes bread", outputName="citations"),
                llm(2, "Using these citations: {{citations}}, answer: who bakes?", outputName="step2output"),
                llm(3, "Synthesize final answer from {{step2output}}"),
            ],
        )
    )
    prompts = b.prompts()
    assert "<mcp:context" in prompts[0] and "Cy is 41 and a baker" in prompts[0]
    assert prompts[2] == "Synthesize final answer from Cy bakes bread."
    assert done.output == "Final: Cy, the baker."


def test_d4_no_results_is_completed() -> None:
    done = Bench().run(
        ChainPlan(steps=[step(1, stepType="RAG_QUERY", ragQuery="f3b0c442-98fc-1c14-9afb-f4c8996fb924")])
    )
    assert done.steps[0].step_status is StepStatus.COMPLETED and results(done.output) == []
    assert done.steps[0].summary_text.startswith("0 result(s)")


def test_d5_rag_limit_is_enforced() -> None:
    store = InMemoryVectorStore(chunk_words=3)
    for i in range(8):
        store.add_document(f"am7://default/data.data/doc{i}", f"Bread recipe {i}. Bread again {i}.")
    assert len(store.search("bread", 100)) > 2
    done = Bench(vector_store=store).run(ChainPlan(steps=[step(1, stepType="RAG_QUERY", ragQuery="bread", ragLimit=2)]))
    assert len(results(done.output)) == 2


def test_rag_scope_by_vector_reference_uri() -> None:
    done = Bench().run(
        ChainPlan(
            steps=[step(1, stepType="RAG_QUERY", ragQuery="bread", vectorReferenceUri="am7://default/data.data/people")]
        )
    )
    found = results(done.output)
    assert found and {r["uri"] for r in found} == {"am7://default/data.data/people"}
    assert {r["vectorReferenceObjectId"] for r in found} == {"people"}


@pytest.mark.parametrize(
    ("uri", "message"),
    [
        ("am7://other-org/data.data/people", "not found: am7://other-org/data.data/people (status 404"),
        ("am7://default/data.data/missing", "not found: am7://default/data.data/missing (status 404"),
        ("https://example.com/doc", "vectorReferenceUri: not an am7:// URI"),
    ],
)
def test_rag_scope_outside_the_organization_is_not_found(uri: str, message: str) -> None:
    b = Bench()
    with pytest.raises(PlanExecutionError, match="step 1: " + message.replace("(", r"\(")) as caught:
        b.run(ChainPlan(steps=[step(1, stepType="RAG_QUERY", ragQuery="bread", vectorReferenceUri=uri)]))
    assert caught.value.plan is not None and caught.value.plan.steps[0].step_status is StepStatus.FAILED
    assert b.kinds() == ["stepStart", "stepError"]


# -- Group E: POLICY_GATE -------------------------------------------------------------


def test_e1_permitting_gate_lets_the_chain_continue() -> None:
    done = Bench(policies=[ALWAYS]).run(
        ChainPlan(
            plan_query=answers("q", "Some generated text."),
            steps=[
                llm(1, "Write something", outputName="llmResult"),
                step(2, stepType="POLICY_GATE", policyName="always"),
                step(3, toolName="describeAllModels"),
            ],
        )
    )
    assert [s.step_status for s in done.steps] == [StepStatus.COMPLETED] * 3
    assert done.steps[1].output == "Some generated text."
    assert done.steps[1].summary_text.startswith("PERMIT by policy always")


def test_e2_denying_gate_halts_the_chain() -> None:
    b = Bench(policies=[NEVER])
    done = b.run(
        ChainPlan(
            plan_query=answers("q", "Generated."),
            steps=[
                llm(1, "Write"),
                step(2, stepType="POLICY_GATE", policyName="never"),
                step(3, toolName="describeAllModels"),
            ],
        )
    )
    assert [s.step_status for s in done.steps] == [StepStatus.COMPLETED, StepStatus.GATED, StepStatus.PENDING]
    assert done.executed and done.total_executed_steps == 2
    assert b.events[-1].event_type == "chainComplete"
    assert b.events[-1].error_message == "halted: step 2 was gated by policy 'never'"


def test_e3_chat_operation_rewrites_the_fact_and_later_steps_use_it() -> None:
    formal = policy(
        "formalise",
        rule(
            {
                "type": "chat_operation",
                "mode": "rewrite",
                "instruction": "Rewrite to be more formal.",
                "promptConfigName": "formal",
            }
        ),
    )
    b = Bench(policies=[formal])
    done = b.run(
        ChainPlan(
            plan_query=query("Greet", "hey dude!", DONE, "Good day to you.", "Good day to you, Ada.", DONE),
            steps=[
                llm(1, "Write a casual greeting"),
                step(2, stepType="POLICY_GATE", policyName="formalise", outputName="gateOutput"),
                llm(3, "Use this greeting: {{gateOutput}}"),
            ],
        )
    )
    assert done.steps[1].output == "Good day to you." != done.steps[0].output
    gate_call = b.bodies[2]
    assert gate_call["system"] == "Rewrite text to be formal." and "hey dude!" in b.prompts()[2]
    assert b.prompts()[3] == "Use this greeting: Good day to you."
    assert done.output == "Good day to you, Ada."


@pytest.mark.parametrize(("condition", "permit"), [("ANY", True), ("ALL", False), ("NONE", False)])
def test_e4_complex_rules_traverse_every_rule(condition: str, permit: bool) -> None:
    checked = policy(
        "checked",
        rule({"type": "expression", "check": "length", "op": ">", "value": 10}, name="long-enough"),
        rule({"type": "chat_operation", "mode": "validate", "instruction": "Is this polite?"}, name="polite"),
        condition=condition,
    )
    b = Bench(policies=[checked])
    done = b.run(
        ChainPlan(
            plan_query=query("q", "whatever you want, mate", DONE, "DENY: too casual"),
            steps=[llm(1, "Say something"), step(2, stepType="POLICY_GATE", policyName="checked")],
        )
    )
    assert done.steps[1].step_status is (StepStatus.COMPLETED if permit else StepStatus.GATED)
    assert len(b.bodies) == 3  # the validation question was asked: both rules were evaluated
    effect = "PERMIT" if permit else "DENY"
    assert done.steps[1].summary_text == (
        f"{effect} by policy checked: rule long-enough (ALL) -> holds; rule polite (ALL) -> fails"
    )


def test_e4_expression_patterns() -> None:
    fact = "The Quick brown fox"
    cases = [
        ({"check": "contains", "value": "quick"}, False),
        ({"check": "contains", "value": "quick", "ignoreCase": True}, True),
        ({"check": "regex", "value": r"^The \w+"}, True),
        ({"check": "equals", "value": "the quick brown fox", "ignoreCase": True}, True),
        ({"check": "length", "op": "<", "value": 5}, False),
    ]
    for pattern, expected in cases:
        assert ExpressionPattern.model_validate({"type": "expression", **pattern}).matches(fact) is expected, pattern


def test_e4_a_policy_with_a_bad_regex_is_refused_when_defined() -> None:
    with pytest.raises(ValueError, match=r"invalid regex '\('"):
        policy("bad", rule({"type": "expression", "check": "regex", "value": "("}))


def test_e5_unknown_policy_fails_the_step() -> None:
    b = Bench(policies=[ALWAYS])
    with pytest.raises(PlanExecutionError, match=r"step 1: no policy named 'ghost'; known: \['always'\]") as caught:
        b.run(ChainPlan(steps=[step(1, stepType="POLICY_GATE", policyName="ghost")]))
    assert caught.value.plan.steps[0].step_status is StepStatus.FAILED
    assert json.loads(b.events[-1].to_json())["errorMessage"].startswith("step 1: no policy named 'ghost'")


def test_a_rag_step_gives_mcp_blocks_whatever_chain_mode_the_plan_came_with() -> None:
    """Seed 001 §6.3 asks for the legacy citation text while ``chainMode`` is false, during
    a transition this product never had (docs/seed-conformance.md, deviations): every plan
    the executor runs is in chain mode, so its RAG steps give MCP context blocks."""
    plan = ChainPlan(chain_mode=False, steps=[step(1, stepType="RAG_QUERY", ragQuery="population demographics")])
    done = Bench().run(plan)
    assert done.chain_mode is True and "BEGIN CITATIONS" not in done.output
    (block,) = parse_context(done.output).blocks
    assert block.data["schema"] == "urn:am7:vector:search-result" and block.data["results"]
