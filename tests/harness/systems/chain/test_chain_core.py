"""The chain executor's first part against the mock: seed Groups A, B and C, guards, events
(dynamic insertion and the guard rails: ``test_chain_dynamic_steps.py``)."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path

import pytest

from harness.systems.chain import (
    ChainEvent,
    ChainExecutor,
    ChainPlan,
    PlanExecutionError,
    PlanStep,
    SQLitePlanStore,
    StepStatus,
    StepType,
)
from tests.harness.systems.chain.chain_support import (
    TOOLS,
    Bench,
    answers,
    llm,
    query,
    step,
)

# -- Group A: models ------------------------------------------------------------------


def test_a1_plan_step_defaults_and_round_trip() -> None:
    s = PlanStep()
    assert (s.step_type, s.step_status, s.dynamic, s.parent_step, s.rag_limit) == (
        StepType.TOOL,
        StepStatus.PENDING,
        False,
        -1,
        10,
    )
    s = step(
        1,
        stepType="LLM",
        promptConfigName="brief",
        chatConfigName="chat",
        policyName="p",
        ragQuery="q",
        summaryText="s",
        vectorReferenceUri="am7://org/data.data/1",
    )
    assert PlanStep.model_validate_json(s.to_json()) == s
    assert json.loads(s.to_json())["stepType"] == "LLM"


def test_a2_plan_defaults_round_trip_and_old_plans_load() -> None:
    plan = ChainPlan()
    assert (plan.max_steps, plan.total_executed_steps, plan.chain_mode) == (20, 0, False)
    plan = ChainPlan(
        chain_mode=True,
        max_steps=5,
        stream_session_id="test-session",
        plan_query="q",
        steps=[step(1, toolName="describeAllModels")],
    )
    assert ChainPlan.model_validate_json(plan.to_json()) == plan
    old = ChainPlan.model_validate({"planQuery": "old", "executed": False, "steps": [{"toolName": "x"}]})
    assert old.max_steps == 20 and old.steps[0].step_type is StepType.TOOL


def test_a3_chain_event_has_every_field_and_serialises() -> None:
    event = ChainEvent(
        event_type="stepComplete",
        plan_name="p",
        step_number=3,
        total_steps=7,
        step_type="LLM",
        step_status="COMPLETED",
        step_summary="Analyzed data",
        tool_name="t",
        output_preview="first 100 chars...",
        timestamp=1,
        mcp_context_uri="am7://org/tool.plan/1",
    )
    data = json.loads(event.to_json())
    assert data["eventType"] == "stepComplete" and data["mcpContextUri"] == "am7://org/tool.plan/1"
    assert set(data) == {
        "eventType",
        "planName",
        "stepNumber",
        "totalSteps",
        "stepType",
        "stepStatus",
        "stepSummary",
        "toolName",
        "outputPreview",
        "errorMessage",
        "timestamp",
        "mcpContextUri",
    }


def test_a3_chain_events_are_never_persisted(tmp_path: Path) -> None:
    """The seed's ioConstraints: a chainEvent goes to listeners only, never to a store."""
    with SQLitePlanStore(tmp_path / "plans.db") as store:
        b = Bench(store=store)
        done = b.run(ChainPlan(steps=[step(1, toolName="describeAllModels"), step(2, toolName="describeAllModels")]))
    assert [e.event_type for e in b.events] == ["stepStart", "stepComplete"] * 2 + ["chainComplete"]
    as_events = [e.as_event(i, "s") for i, e in enumerate(b.events)]
    assert {(e.persistence.value, e.sequence_number) for e in as_events} == {("transient", None)}
    with sqlite3.connect(tmp_path / "plans.db") as db:
        tables = [name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        bodies = [body for (body,) in db.execute("SELECT body FROM plans")]
    assert tables == ["plans"] and len(bodies) == 1 and done.object_id in bodies[0]
    assert not any(kind in bodies[0] for kind in ("eventType", "stepStart", "chainComplete"))


def test_a_chain_event_becomes_a_harness_event_for_goldens_and_invariants() -> None:
    event = ChainEvent(
        event_type="stepError",
        plan_name="p",
        step_number=2,
        total_steps=2,
        step_type="TOOL",
        step_status="FAILED",
        error_message="boom",
        timestamp=7,
        mcp_context_uri="am7://org/tool.plan/1",
    )
    as_event = event.as_event(4, "session-1")
    assert (as_event.type, as_event.timestamp, as_event.event_index, as_event.session_id) == (
        "stepError",
        7,
        4,
        "session-1",
    )
    assert as_event.persistence.value == "transient" and as_event.sequence_number is None
    # The run's name and URI are the session's to say; unset fields are left out.
    assert as_event.data == {
        "stepNumber": 2,
        "totalSteps": 2,
        "stepType": "TOOL",
        "stepStatus": "FAILED",
        "errorMessage": "boom",
    }


def test_a4_a5_enum_values_and_unknown_step_type_fails() -> None:
    assert [t.value for t in StepType] == ["UNKNOWN", "TOOL", "LLM", "RAG_QUERY", "POLICY_GATE"]
    assert [s.value for s in StepStatus] == [
        "UNKNOWN",
        "PENDING",
        "EXECUTING",
        "COMPLETED",
        "FAILED",
        "GATED",
        "SKIPPED",
    ]
    b = Bench()
    with pytest.raises(PlanExecutionError, match="step type UNKNOWN cannot run"):
        b.run(ChainPlan(steps=[step(1, stepType="UNKNOWN")]))
    assert b.events[-1].step_status is StepStatus.FAILED


def test_a6_backward_compatible_tool_plan_matches_a_sequential_runner() -> None:
    plan = ChainPlan.model_validate(
        {
            "steps": [
                {"stepNumber": 2, "toolName": "findPersons", "inputs": {"query": "{{qf}}"}},
                {
                    "stepNumber": 1,
                    "toolName": "newQueryField",
                    "inputs": {"field": "age", "comparator": "GT", "value": "21"},
                    "outputName": "qf",
                },
            ]
        }
    )
    assert all(s.step_type is StepType.TOOL for s in plan.steps)  # old data: no stepType, TOOL by default
    done = Bench().run(plan)
    # Recorded outputs of the legacy sequential run (steps in stepNumber order, each
    # output bound to its outputName), written out rather than recomputed by calling the
    # same tools, so a change in ordering, binding or conversion shows here.
    legacy = {1: {"field": "age", "comparator": "GT", "value": "21"}, 2: ["person where age GT 21"]}
    assert {s.step_number: s.output for s in done.steps} == legacy
    assert done.output == legacy[2] and done.executed
    assert [s.step_status for s in done.steps] == [StepStatus.COMPLETED, StepStatus.COMPLETED]


# -- Group B: TOOL steps --------------------------------------------------------------


def test_b1_b2_tool_step_basic_and_with_inputs() -> None:
    done = Bench().run(
        ChainPlan(
            steps=[
                step(1, toolName="describeAllModels"),
                step(
                    2, toolName="newQueryField", inputs={"field": "hairColor", "comparator": "EQUALS", "value": "red"}
                ),
            ]
        )
    )
    assert [s.step_status for s in done.steps] == [StepStatus.COMPLETED, StepStatus.COMPLETED]
    assert isinstance(done.steps[0].output, str) and "olio.charPerson" in done.steps[0].output  # valueType STRING
    assert (done.steps[0].summary_text or "").startswith("describeAllModels returned ")
    assert done.steps[1].output == {"field": "hairColor", "comparator": "EQUALS", "value": "red"}
    assert (done.steps[1].summary_text or "").startswith("newQueryField returned ")


def test_b3_context_passing_keeps_the_value_type() -> None:
    done = Bench().run(
        ChainPlan(
            steps=[
                step(
                    1,
                    toolName="newQueryField",
                    inputs={"field": "age", "comparator": "GT", "value": "21"},
                    outputName="qf",
                ),
                step(2, toolName="findPersons", inputs={"query": "{{qf}}"}),
            ]
        )
    )
    assert done.steps[1].output == ["person where age GT 21"]


def test_b4_unknown_tool_fails_the_step() -> None:
    b = Bench()
    with pytest.raises(PlanExecutionError, match="unknown tool 'nonExistentTool'") as info:
        b.run(ChainPlan(steps=[step(1, toolName="nonExistentTool")]))
    assert [e.event_type for e in b.events] == ["stepStart", "stepError"]
    assert info.value.plan is not None
    (failed,) = info.value.plan.steps
    assert failed.step_status is StepStatus.FAILED
    assert "unknown tool 'nonExistentTool'" in (failed.summary_text or "")
    assert b.events[-1].step_status == "FAILED"


def test_b5_argument_mismatch_fails_with_a_descriptive_message() -> None:
    with pytest.raises(PlanExecutionError, match=r"tool 'findPersons' cannot take the arguments \['wrong'\]"):
        Bench().run(ChainPlan(steps=[step(1, toolName="findPersons", inputs={"wrong": 1})]))


def test_missing_variable_is_an_error_naming_it() -> None:
    with pytest.raises(PlanExecutionError, match=r"the chain context has no \{\{nowhere\}\} \(known: none yet\)"):
        Bench().run(ChainPlan(steps=[step(1, toolName="findPersons", inputs={"query": "{{nowhere}}"})]))


# -- Group C: LLM steps ---------------------------------------------------------------


def test_c1_llm_step_basic() -> None:
    b = Bench()
    done = b.run(
        ChainPlan(
            plan_query=answers("Quick maths", "4."),
            steps=[step(1, stepType="LLM", promptConfigName="brief", inputs={"prompt": "What is 2+2?"})],
        )
    )
    assert done.steps[0].output == "4." and done.steps[0].step_status is StepStatus.COMPLETED
    assert b.bodies[0]["system"] == "You are a helpful assistant. Answer briefly."


def test_c2_c3_context_injection_and_accumulation_in_one_conversation() -> None:
    b = Bench()
    done = b.run(
        ChainPlan(
            plan_query=answers("Colours", "red, green, blue", "green: calm", "Summary done."),
            steps=[
                step(1, toolName="describeAllModels", outputName="modelList"),
                step(2, stepType="LLM", inputs={"prompt": "Models: {{modelList}}. List 3 colors"}, outputName="colors"),
                step(3, stepType="LLM", inputs={"prompt": "Pick one of {{colors}}"}, outputName="reasoning"),
                step(4, stepType="LLM", inputs={"prompt": "Summarize: colors={{colors}}, reasoning={{reasoning}}"}),
            ],
        )
    )
    assert [s.output for s in done.steps[1:]] == ["red, green, blue", "green: calm", "Summary done."]
    last = b.bodies[-2]["messages"]  # step 4's call; the last request is its routing call
    assert [m["role"] for m in last] == ["user", "assistant"] * 4 + ["user"]  # answers and routing turns
    assert "olio.charPerson" in last[0]["content"]
    assert last[-1]["content"] == "Summarize: colors=red, green, blue, reasoning=green: calm"


def test_c4_empty_response_fails_with_summary() -> None:
    b = Bench()
    with pytest.raises(PlanExecutionError, match="empty response") as info:
        b.run(ChainPlan(plan_query=query("q", " "), steps=[step(1, stepType="LLM", inputs={"prompt": "x"})]))
    assert "empty response" in (b.events[-1].error_message or "")
    assert info.value.plan is not None
    (failed,) = info.value.plan.steps
    assert failed.step_status is StepStatus.FAILED and b.events[-1].step_status == "FAILED"
    assert "empty response" in (failed.summary_text or "")  # the seed: summaryText describes the error


def test_mcp_context_blocks_are_removed_from_llm_replies() -> None:
    """Seed 001 (McpContextFilter): an LLM step's output keeps the reply's text, not the
    <mcp:context> blocks in it; a reply that is nothing but blocks is an empty response."""
    reply = (
        'The answer is 4.\n<mcp:context type="reasoning">"2 and 2 make 4"</mcp:context>\n'
        '<mcp:context type="resource" uri="am7://org/data.data/1">{"schema": "urn:x", "n": 4}</mcp:context>'
    )
    done = Bench().run(
        ChainPlan(plan_query=answers("q", reply), steps=[step(1, stepType="LLM", inputs={"prompt": "What is 2+2?"})])
    )
    assert done.steps[0].output == "The answer is 4." and done.output == "The answer is 4."
    only_blocks = '<mcp:context type="reasoning">"nothing to say"</mcp:context>'
    with pytest.raises(PlanExecutionError, match="empty response"):
        Bench().run(
            ChainPlan(plan_query=query("q", only_blocks), steps=[step(1, stepType="LLM", inputs={"prompt": "x"})])
        )


def test_c5_each_step_uses_its_own_prompt_config() -> None:
    b = Bench()
    b.run(
        ChainPlan(
            plan_query=answers("q", "Formal.", "Casual!"),
            steps=[
                step(1, stepType="LLM", promptConfigName="brief", inputs={"prompt": "a"}),
                step(2, stepType="LLM", promptConfigName="casual", inputs={"prompt": "b"}),
            ],
        )
    )
    assert [body.get("system") for body in b.bodies] == [
        "You are a helpful assistant. Answer briefly.",
        None,
        "Talk like a friend.",
        None,
    ]


# -- guards and events ----------------------------------------------------------------


def test_max_steps_stops_the_chain() -> None:
    b = Bench()
    done = b.run(ChainPlan(max_steps=2, steps=[step(i, toolName="describeAllModels") for i in range(1, 5)]))
    assert done.total_executed_steps == 2
    assert [s.step_status for s in done.steps] == [StepStatus.COMPLETED] * 2 + [StepStatus.PENDING] * 2
    assert b.events[-1].event_type == "chainMaxSteps"


def test_the_absolute_ceiling_caps_a_larger_max_steps() -> None:
    done = Bench().run(ChainPlan(max_steps=500, steps=[step(i, toolName="describeAllModels") for i in range(60)]))
    assert done.total_executed_steps == 50


def test_g3_the_same_llm_output_twice_in_a_row_is_a_stall_with_its_own_end(tmp_path: Path) -> None:
    with SQLitePlanStore(tmp_path / "plans.db") as store:
        b = Bench(store=store)
        done = b.run(
            ChainPlan(
                plan_query=answers("q", "same", "same", "other"),
                steps=[step(i, stepType="LLM", inputs={"prompt": f"p{i}"}) for i in range(1, 4)],
            )
        )
        stored = store.load(done.object_id, "default")
    assert [s.step_status for s in done.steps] == [StepStatus.COMPLETED, StepStatus.COMPLETED, StepStatus.PENDING]
    assert b.kinds()[-2:] == ["stepComplete", "chainStalled"] and "chainComplete" not in b.kinds()
    assert b.events[-1].error_message == "steps 1 and 2 gave the same LLM output twice in a row"
    assert (done.outcome, done.error, done.executed) == (
        "stalled",
        "steps 1 and 2 gave the same LLM output twice in a row",
        True,
    )
    assert stored == done
    assert len(b.bodies) == 3  # answer, routing, answer: no routing after the stall


@pytest.mark.parametrize(
    ("between", "third"),
    [
        (step(2, toolName="describeAllModels"), llm(3)),  # a TOOL step between the two
        (llm(2), llm(3)),  # an LLM step with another output between the two
    ],
    ids=["tool-between", "other-llm-output-between"],
)
def test_g3_only_consecutive_llm_outputs_count_as_a_stall(between: PlanStep, third: PlanStep) -> None:
    b = Bench()
    middle = ("different",) if between.step_type is StepType.LLM else ()
    done = b.run(ChainPlan(plan_query=answers("q", "same", *middle, "same"), steps=[llm(1), between, third]))
    assert [s.step_status for s in done.steps] == [StepStatus.COMPLETED] * 3
    assert b.kinds()[-1] == "chainComplete" and done.outcome == "completed"


def test_the_executor_marks_every_plan_it_runs_as_chain_mode() -> None:
    plan = ChainPlan(steps=[step(1, toolName="describeAllModels")])
    assert plan.chain_mode is False
    assert Bench().run(plan).chain_mode is True
    assert plan.chain_mode is False  # the caller's plan is left as it was


def test_events_go_to_every_listener_with_increasing_timestamps() -> None:
    b = Bench()
    second: list[str] = []

    async def async_listener(event: ChainEvent) -> None:
        second.append(event.event_type)

    b.executor.add_listener(async_listener)
    b.run(ChainPlan(steps=[step(1, toolName="describeAllModels"), step(2, toolName="describeAllModels")]))
    assert (
        [e.event_type for e in b.events]
        == second
        == ["stepStart", "stepComplete", "stepStart", "stepComplete", "chainComplete"]
    )
    stamps = [e.timestamp for e in b.events]
    assert stamps == sorted(stamps) and len(set(stamps)) == len(stamps)
    # No listener at all is fine too.
    alone = asyncio.run(
        ChainExecutor(tools=TOOLS).execute_chain(ChainPlan(steps=[step(1, toolName="describeAllModels")]))
    )
    assert alone.executed
