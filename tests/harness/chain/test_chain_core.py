"""The chain executor's first part against the mock: seed Groups A, B and C, guards, events."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx2
import pytest

from harness.chain import (
    ChainEvent,
    ChainExecutor,
    ChainPlan,
    PlanExecutionError,
    PlanStep,
    PromptConfig,
    StepStatus,
    StepType,
)
from harness.llm import model_client
from mockllm import InstructionChain, MockLLM
from mockllm.transports import HTTPX2Transport

MODELS = ["olio.charPerson", "data.data"]


def describe_all_models() -> str:
    return ", ".join(MODELS)


def new_query_field(field: str, comparator: str, value: str) -> dict[str, str]:
    return {"field": field, "comparator": comparator, "value": value}


async def find_persons(query: dict[str, str]) -> list[str]:
    return [f"person where {query['field']} {query['comparator']} {query['value']}"]


TOOLS = {"describeAllModels": describe_all_models, "newQueryField": new_query_field, "findPersons": find_persons}


def query(prompt: str, *texts: str) -> str:
    return InstructionChain.model_validate({"instruction_chain": [
        {"messages": [{"text_message": {"text": t}}]} for t in texts]}).tagged(prompt)


class Bench:
    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []

        async def record(request: httpx2.Request) -> None:
            self.bodies.append(json.loads(request.content))

        http = httpx2.AsyncClient(transport=HTTPX2Transport(MockLLM()), event_hooks={"request": [record]})
        self.events: list[ChainEvent] = []
        self.executor = ChainExecutor(model_client("anthropic-messages", http_client=http), tools=TOOLS,
                                      prompt_configs={"brief": PromptConfig("You are a helpful assistant. Answer briefly."),
                                                      "casual": PromptConfig("Talk like a friend.")})
        self.executor.add_listener(self.events.append)

    def run(self, plan: ChainPlan) -> ChainPlan:
        return asyncio.run(self.executor.execute_chain(plan))


def step(n: int, **fields: Any) -> PlanStep:
    return PlanStep.model_validate({"stepNumber": n, **fields})


# -- Group A: models ------------------------------------------------------------------

def test_a1_plan_step_defaults_and_round_trip() -> None:
    s = PlanStep()
    assert (s.step_type, s.step_status, s.dynamic, s.parent_step, s.rag_limit) == (
        StepType.TOOL, StepStatus.PENDING, False, -1, 10)
    s = step(1, stepType="LLM", promptConfigName="brief", chatConfigName="chat", policyName="p",
             ragQuery="q", summaryText="s", vectorReferenceUri="am7://org/data.data/1")
    assert PlanStep.model_validate_json(s.to_json()) == s
    assert json.loads(s.to_json())["stepType"] == "LLM"


def test_a2_plan_defaults_round_trip_and_old_plans_load() -> None:
    plan = ChainPlan()
    assert (plan.max_steps, plan.total_executed_steps, plan.chain_mode) == (20, 0, False)
    plan = ChainPlan(chain_mode=True, max_steps=5, stream_session_id="test-session", plan_query="q",
                     steps=[step(1, toolName="describeAllModels")])
    assert ChainPlan.model_validate_json(plan.to_json()) == plan
    old = ChainPlan.model_validate({"planQuery": "old", "executed": False, "steps": [{"toolName": "x"}]})
    assert old.max_steps == 20 and old.steps[0].step_type is StepType.TOOL


def test_a3_chain_event_has_every_field_and_serialises() -> None:
    event = ChainEvent(event_type="stepComplete", plan_name="p", step_number=3, total_steps=7, step_type="LLM",
                       step_status="COMPLETED", step_summary="Analyzed data", tool_name="t",
                       output_preview="first 100 chars...", timestamp=1, mcp_context_uri="am7://org/tool.plan/1")
    data = json.loads(event.to_json())
    assert data["eventType"] == "stepComplete" and data["mcpContextUri"] == "am7://org/tool.plan/1"
    assert set(data) == {"eventType", "planName", "stepNumber", "totalSteps", "stepType", "stepStatus",
                         "stepSummary", "toolName", "outputPreview", "errorMessage", "timestamp", "mcpContextUri"}


def test_a4_a5_enum_values_and_unknown_step_type_fails() -> None:
    assert [t.value for t in StepType] == ["UNKNOWN", "TOOL", "LLM", "RAG_QUERY", "POLICY_GATE"]
    assert [s.value for s in StepStatus] == ["UNKNOWN", "PENDING", "EXECUTING", "COMPLETED", "FAILED", "GATED", "SKIPPED"]
    b = Bench()
    with pytest.raises(PlanExecutionError, match="step type UNKNOWN cannot run"):
        b.run(ChainPlan(steps=[step(1, stepType="UNKNOWN")]))
    assert b.events[-1].step_status is StepStatus.FAILED


def test_a6_backward_compatible_tool_plan_matches_a_sequential_runner() -> None:
    plan = ChainPlan.model_validate({"steps": [
        {"stepNumber": 2, "toolName": "findPersons", "inputs": {"query": "{{qf}}"}},
        {"stepNumber": 1, "toolName": "newQueryField", "inputs": {"field": "age", "comparator": "GT", "value": "21"},
         "outputName": "qf"}]})
    done = Bench().run(plan)
    expected = asyncio.run(find_persons(new_query_field("age", "GT", "21")))
    assert done.output == expected and done.executed
    assert [s.step_status for s in done.steps] == [StepStatus.COMPLETED, StepStatus.COMPLETED]


# -- Group B: TOOL steps --------------------------------------------------------------

def test_b1_b2_tool_step_basic_and_with_inputs() -> None:
    done = Bench().run(ChainPlan(steps=[step(1, toolName="describeAllModels"),
                                        step(2, toolName="newQueryField",
                                             inputs={"field": "hairColor", "comparator": "EQUALS", "value": "red"})]))
    assert "olio.charPerson" in done.steps[0].output
    assert done.steps[1].output == {"field": "hairColor", "comparator": "EQUALS", "value": "red"}


def test_b3_context_passing_keeps_the_value_type() -> None:
    done = Bench().run(ChainPlan(steps=[
        step(1, toolName="newQueryField", inputs={"field": "age", "comparator": "GT", "value": "21"}, outputName="qf"),
        step(2, toolName="findPersons", inputs={"query": "{{qf}}"})]))
    assert done.steps[1].output == ["person where age GT 21"]


def test_b4_unknown_tool_fails_the_step() -> None:
    b = Bench()
    with pytest.raises(PlanExecutionError, match="unknown tool 'nonExistentTool'"):
        b.run(ChainPlan(steps=[step(1, toolName="nonExistentTool")]))
    assert [e.event_type for e in b.events] == ["stepStart", "stepError"]


def test_b5_argument_mismatch_fails_with_a_descriptive_message() -> None:
    with pytest.raises(PlanExecutionError, match=r"tool 'findPersons' cannot take \['wrong'\]"):
        Bench().run(ChainPlan(steps=[step(1, toolName="findPersons", inputs={"wrong": 1})]))


def test_missing_variable_is_an_error_naming_it() -> None:
    with pytest.raises(PlanExecutionError, match=r"the chain context has no \{\{nowhere\}\} \(known: none yet\)"):
        Bench().run(ChainPlan(steps=[step(1, toolName="findPersons", inputs={"query": "{{nowhere}}"})]))


# -- Group C: LLM steps ---------------------------------------------------------------

def test_c1_llm_step_basic() -> None:
    b = Bench()
    done = b.run(ChainPlan(plan_query=query("Quick maths", "4."), steps=[
        step(1, stepType="LLM", promptConfigName="brief", inputs={"prompt": "What is 2+2?"})]))
    assert done.steps[0].output == "4." and done.steps[0].step_status is StepStatus.COMPLETED
    assert b.bodies[0]["system"] == "You are a helpful assistant. Answer briefly."


def test_c2_c3_context_injection_and_accumulation_in_one_conversation() -> None:
    b = Bench()
    done = b.run(ChainPlan(plan_query=query("Colours", "red, green, blue", "green: calm", "Summary done."), steps=[
        step(1, toolName="describeAllModels", outputName="modelList"),
        step(2, stepType="LLM", inputs={"prompt": "Models: {{modelList}}. List 3 colors"}, outputName="colors"),
        step(3, stepType="LLM", inputs={"prompt": "Pick one of {{colors}}"}, outputName="reasoning"),
        step(4, stepType="LLM", inputs={"prompt": "Summarize: colors={{colors}}, reasoning={{reasoning}}"})]))
    assert [s.output for s in done.steps[1:]] == ["red, green, blue", "green: calm", "Summary done."]
    last = b.bodies[-1]["messages"]
    assert [m["role"] for m in last] == ["user", "assistant", "user", "assistant", "user"]
    assert "olio.charPerson" in last[0]["content"]
    assert last[-1]["content"] == "Summarize: colors=red, green, blue, reasoning=green: calm"


def test_c4_empty_response_fails_with_summary() -> None:
    b = Bench()
    with pytest.raises(PlanExecutionError, match="empty response"):
        b.run(ChainPlan(plan_query=query("q", " "), steps=[step(1, stepType="LLM", inputs={"prompt": "x"})]))
    assert "empty response" in (b.events[-1].error_message or "")


def test_c5_each_step_uses_its_own_prompt_config() -> None:
    b = Bench()
    b.run(ChainPlan(plan_query=query("q", "Formal.", "Casual!"), steps=[
        step(1, stepType="LLM", promptConfigName="brief", inputs={"prompt": "a"}),
        step(2, stepType="LLM", promptConfigName="casual", inputs={"prompt": "b"})]))
    assert [body["system"] for body in b.bodies] == ["You are a helpful assistant. Answer briefly.",
                                                     "Talk like a friend."]


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


def test_identical_llm_output_twice_stops_the_chain() -> None:
    b = Bench()
    done = b.run(ChainPlan(plan_query=query("q", "same", "same", "other"), steps=[
        step(i, stepType="LLM", inputs={"prompt": f"p{i}"}) for i in range(1, 4)]))
    assert done.steps[2].step_status is StepStatus.PENDING
    assert b.events[-1].error_message == "stalled: the same LLM output twice in a row"


def test_events_go_to_every_listener_with_increasing_timestamps() -> None:
    b = Bench()
    second: list[str] = []

    async def async_listener(event: ChainEvent) -> None:
        second.append(event.event_type)

    b.executor.add_listener(async_listener)
    b.run(ChainPlan(steps=[step(1, toolName="describeAllModels"), step(2, toolName="describeAllModels")]))
    assert [e.event_type for e in b.events] == second == ["stepStart", "stepComplete", "stepStart",
                                                           "stepComplete", "chainComplete"]
    stamps = [e.timestamp for e in b.events]
    assert stamps == sorted(stamps) and len(set(stamps)) == len(stamps)
    # No listener at all is fine too.
    alone = asyncio.run(ChainExecutor(tools=TOOLS).execute_chain(ChainPlan(steps=[step(1, toolName="describeAllModels")])))
    assert alone.executed
