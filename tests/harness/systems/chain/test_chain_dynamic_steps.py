"""The chain executor against the mock: seed Group F, steps a routing step inserts while the
chain runs, and Group G, the guard rails that stop a growing or endless chain."""

from __future__ import annotations

import asyncio

from harness.systems.chain import (
    ChainPlan,
    StepStatus,
    StepType,
    restore_context,
)
from tests.harness.systems.chain.chain_support import (
    Bench,
    answers,
    llm,
    query,
    route,
    step,
)

# -- Group F: dynamic insertion -------------------------------------------------------


def test_f1_routing_inserts_a_dynamic_step_that_runs() -> None:
    b = Bench()
    done = b.run(
        ChainPlan(
            plan_query=query("q", "analysis", route({"stepType": "TOOL", "toolName": "describeAllModels"})),
            steps=[llm(1)],
        )
    )
    assert [(s.step_number, s.step_type, s.dynamic, s.parent_step, s.step_status) for s in done.steps] == [
        (1, StepType.LLM, False, -1, StepStatus.COMPLETED),
        (2, StepType.TOOL, True, 1, StepStatus.COMPLETED),
    ]
    assert "olio.charPerson" in done.output
    inserted = next(e for e in b.events if e.event_type == "stepsInserted")
    assert inserted.step_summary == "1 step(s) inserted after step 1: more to do"


def test_f2_three_steps_are_inserted_in_order_and_renumbered() -> None:
    tools = [{"stepType": "TOOL", "toolName": "describeAllModels", "description": f"t{i}"} for i in range(4)]
    done = Bench().run(
        ChainPlan(plan_query=query("q", "a", route(*tools)), steps=[llm(1), step(2, toolName="describeAllModels")])
    )
    assert [s.step_number for s in done.steps] == [1, 2, 3, 4, 5]
    assert [s.description for s in done.steps[1:4]] == ["t0", "t1", "t2"]  # at most 3 per decision
    assert all(s.step_status is StepStatus.COMPLETED for s in done.steps)


def test_f3_insertion_respects_max_steps() -> None:
    b = Bench()
    tools = [{"stepType": "TOOL", "toolName": "describeAllModels"}] * 5
    done = b.run(
        ChainPlan(
            max_steps=3,
            plan_query=query("q", "a", route(*tools)),
            steps=[llm(1), step(2, toolName="describeAllModels")],
        )
    )
    assert len(done.steps) == 3 and done.total_executed_steps == 3
    assert b.events[-1].event_type == "chainMaxSteps"


def test_f4_dynamic_insertion_chains_across_levels() -> None:
    done = Bench().run(
        ChainPlan(
            plan_query=query(
                "q",
                "first",
                route({"stepType": "LLM", "inputs": {"prompt": "deeper"}}),
                "second",
                route({"stepType": "TOOL", "toolName": "describeAllModels"}),
            ),
            steps=[llm(1)],
        )
    )
    assert [(s.step_type, s.parent_step) for s in done.steps] == [
        (StepType.LLM, -1),
        (StepType.LLM, 1),
        (StepType.TOOL, 2),
    ]
    assert done.steps[1].output == "second"


def test_f5_complete_inserts_nothing() -> None:
    b = Bench()
    done = b.run(ChainPlan(plan_query=answers("q", "done"), steps=[llm(1)]))
    assert len(done.steps) == 1 and b.events[-1].event_type == "chainComplete"


def test_f6_invalid_routing_json_is_logged_and_not_fatal() -> None:
    b = Bench()
    done = b.run(
        ChainPlan(plan_query=query("q", "answer", "{not json"), steps=[llm(1), step(2, toolName="describeAllModels")])
    )
    assert [s.step_status for s in done.steps] == [StepStatus.COMPLETED, StepStatus.COMPLETED]
    error = next(e for e in b.events if e.event_type == "routingError")
    assert error.error_message.startswith("routing after step 1 ignored:")


# -- Group G: guard rails -------------------------------------------------------------


def test_g1_hard_ceiling_stops_a_growing_chain_at_50() -> None:
    b = Bench()
    forever = [x for i in range(60) for x in (f"answer {i}", route({"stepType": "LLM", "inputs": {"prompt": "again"}}))]
    done = b.run(ChainPlan(max_steps=100, plan_query=query("q", *forever), steps=[llm(1)]))
    assert done.total_executed_steps == 50
    assert b.events[-1].event_type == "chainMaxSteps"


def test_g4_infinite_routing_is_stopped_at_max_steps() -> None:
    b = Bench()
    forever = [x for i in range(20) for x in (f"answer {i}", route({"stepType": "LLM", "inputs": {"prompt": "again"}}))]
    done = b.run(ChainPlan(max_steps=10, plan_query=query("q", *forever), steps=[llm(1)]))
    assert done.total_executed_steps == 10 == len(done.steps)
    assert b.events[-1].event_type == "chainMaxSteps"


def test_g5_concurrent_chains_share_nothing() -> None:
    b = Bench()

    async def both() -> list[ChainPlan]:
        plans = [
            ChainPlan(
                name=f"user-{i}",
                steps=[
                    step(
                        1,
                        toolName="newQueryField",
                        inputs={"field": f"f{i}", "comparator": "EQ", "value": str(i)},
                        outputName="qf",
                    ),
                    step(2, toolName="findPersons", inputs={"query": "{{qf}}"}),
                ],
            )
            for i in range(2)
        ]
        return await asyncio.gather(*(b.executor.execute_chain(p) for p in plans))

    first, second = asyncio.run(both())
    assert first.output == ["person where f0 EQ 0"] and second.output == ["person where f1 EQ 1"]
    assert restore_context(first.context_blocks)["qf"]["field"] == "f0"
    assert restore_context(second.context_blocks)["qf"]["field"] == "f1"
