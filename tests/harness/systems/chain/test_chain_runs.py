"""Whole chain runs: seed Groups I (events) and J (end to end, over both protocols and
the loopback server), persistence, cancellation, planning from the query, and bad input
— each ending in a clear error or a controlled stop, with the stored plan showing what ran."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from harness.systems.chain import (
    ChainEvent,
    ChainPlan,
    PlanExecutionError,
    Policy,
    SQLitePlanStore,
    StepStatus,
    StepType,
    parse_context,
)
from mockllm import InstructionChain
from tests.harness.systems.chain.chain_support import DONE, Bench, answers, llm, query, route, step

GATE = Policy.model_validate(
    {
        "name": "long-enough",
        "rules": [{"patterns": [{"type": "expression", "check": "length", "op": ">", "value": 10}]}],
    }
)

# -- Group I: events ------------------------------------------------------------------


def test_i1_listener_receives_every_event_in_order() -> None:
    b = Bench()
    b.run(
        ChainPlan(
            plan_query=answers("q", "An answer."),
            steps=[step(1, toolName="describeAllModels"), llm(2), step(3, stepType="RAG_QUERY", ragQuery="bread")],
        )
    )
    assert [(e.event_type, e.step_number) for e in b.events] == [
        ("stepStart", 1),
        ("stepComplete", 1),
        ("stepStart", 2),
        ("stepComplete", 2),
        ("stepStart", 3),
        ("stepComplete", 3),
        ("chainComplete", None),
    ]
    stamps = [e.timestamp for e in b.events]
    assert all(a < b for a, b in zip(stamps, stamps[1:], strict=False))
    assert [e.step_type for e in b.events[:6:2]] == [StepType.TOOL, StepType.LLM, StepType.RAG_QUERY]


def test_i2_a_failing_step_is_start_then_error_with_a_message() -> None:
    b = Bench()
    with pytest.raises(PlanExecutionError):
        b.run(ChainPlan(steps=[step(1, toolName="describeAllModels"), step(2, toolName="nope")]))
    assert b.kinds() == ["stepStart", "stepComplete", "stepStart", "stepError"]
    assert b.events[-1].error_message.startswith("step 2: unknown tool 'nope'")
    assert b.events[-1].step_status is StepStatus.FAILED


def test_i3_steps_inserted_and_later_events_count_them() -> None:
    b = Bench()
    b.run(
        ChainPlan(
            plan_query=query("q", "a", route({"toolName": "describeAllModels"}, {"toolName": "describeAllModels"})),
            steps=[llm(1)],
        )
    )
    inserted = b.kinds().index("stepsInserted")
    assert [e.total_steps for e in b.events[:inserted]] == [1, 1]
    assert {e.total_steps for e in b.events[inserted:]} == {3}


def test_i5_every_event_survives_json() -> None:
    b = Bench()
    b.run(ChainPlan(plan_query=answers("q", "x"), steps=[llm(1), step(2, toolName="describeAllModels")]))
    for event in b.events:
        assert ChainEvent.model_validate_json(event.to_json()) == event
        assert json.loads(event.to_json())["eventType"] == event.event_type


# -- Group J: end to end --------------------------------------------------------------


@pytest.fixture(params=["in-process", "server"])
def base_url(request: pytest.FixtureRequest) -> str | None:
    return None if request.param == "in-process" else request.getfixturevalue("mock_server_url")


@pytest.mark.parametrize("protocol", ["anthropic-messages", "openai-chat"])
def test_j1_a_query_is_planned_by_the_model_and_answered(protocol: str, base_url: str | None) -> None:
    plan_reply = json.dumps(
        {
            "steps": [
                {
                    "stepType": "TOOL",
                    "toolName": "newQueryField",
                    "inputs": {"field": "age", "comparator": "GT", "value": "30"},
                    "outputName": "qf",
                },
                {"stepType": "TOOL", "toolName": "findPersons", "inputs": {"query": "{{qf}}"}, "outputName": "people"},
                {"stepType": "LLM", "inputs": {"prompt": "Describe {{people}}"}},
            ]
        }
    )
    b = Bench(protocol, base_url)
    done = b.run(
        ChainPlan(
            plan_query=query("Find all people over 30 and describe them", plan_reply, "One person is over 30.", DONE)
        )
    )
    assert done.executed and done.total_executed_steps == 3 and done.output == "One person is over 30."
    sent = parse_context(b.prompts()[1])
    assert sent.content == "Describe ['person where age GT 30']"  # {{people}} substituted...
    assert [block.data["name"] for block in sent.blocks] == ["qf"]  # ...and the unseen qf given as context
    assert b.kinds()[0] == "stepsInserted" and b.events[0].step_summary == "3 step(s) planned for the query"


@pytest.mark.parametrize("protocol", ["anthropic-messages", "openai-chat"])
def test_j2_rag_llm_and_policy_in_sequence(protocol: str, base_url: str | None) -> None:
    b = Bench(protocol, base_url, policies=[GATE])
    done = b.run(
        ChainPlan(
            plan_query=answers("How many live in the valley?", "About 4,200 people live there."),
            steps=[
                step(1, stepType="RAG_QUERY", ragQuery="population of the valley", outputName="citations"),
                llm(2, "Answer from {{citations}}"),
                step(3, stepType="POLICY_GATE", policyName="long-enough"),
            ],
        )
    )
    assert [s.step_type for s in done.steps] == [StepType.RAG_QUERY, StepType.LLM, StepType.POLICY_GATE]
    assert [s.step_status for s in done.steps] == [StepStatus.COMPLETED] * 3
    assert "4,200 people live there" in b.prompts()[0] and done.output == "About 4,200 people live there."


def test_j3_a_finished_plan_round_trips_through_sqlite(tmp_path: Path) -> None:
    with SQLitePlanStore(tmp_path / "plans.db") as store:
        done = Bench(store=store).run(
            ChainPlan(
                plan_query=query("q", "a", route({"toolName": "describeAllModels"})), steps=[llm(1, outputName="first")]
            )
        )
    with SQLitePlanStore(tmp_path / "plans.db") as reopened:
        loaded = reopened.load(done.object_id, "default")
        assert reopened.load(done.object_id, "another-org") is None
    assert loaded == done
    assert loaded.executed and loaded.steps[1].dynamic and loaded.steps[1].parent_step == 1
    assert parse_context(loaded.context_blocks).blocks[0].data["value"] == "a"


def test_j4_a_planned_plan_uses_what_the_plan_was_asked_with() -> None:
    """Seed 001 §2.3/§3.4: the planner is told the plan's data references; the LLM steps
    it plans, and those routing inserts, take the plan's prompt config."""
    census = "am7://default/data.data/census"
    plan_reply = json.dumps(
        {
            "steps": [
                {
                    "stepType": "RAG_QUERY",
                    "ragQuery": "population",
                    "vectorReferenceUri": census,
                    "outputName": "facts",
                },
                {"stepType": "LLM", "inputs": {"prompt": "How many? {{facts}}"}},
            ]
        }
    )
    b = Bench()
    done = b.run(
        ChainPlan(
            prompt_config_name="brief",
            data_references=[census],
            plan_query=query(
                "How many live in the valley?",
                plan_reply,
                "About 4,200.",
                route({"stepType": "LLM", "inputs": {"prompt": "Say more."}}),
                "Most of them farm.",
                DONE,
            ),
        )
    )
    assert "data sources named for this query: am7://default/data.data/census" in b.prompts()[0]
    assert [(s.step_type, s.prompt_config_name, s.step_status) for s in done.steps] == [
        (StepType.RAG_QUERY, None, StepStatus.COMPLETED),
        (StepType.LLM, "brief", StepStatus.COMPLETED),
        (StepType.LLM, "brief", StepStatus.COMPLETED),
    ]
    found = parse_context(done.steps[0].output).blocks[0].data["results"]
    assert found and {hit["uri"] for hit in found} == {census}  # the search was scoped to the reference
    brief = "You are a helpful assistant. Answer briefly."
    assert [body.get("system") for body in b.bodies] == [None, brief, None, brief, None]  # plan, answer, route, ...
    assert done.output == "Most of them farm." and done.chain_mode


def test_j5_a_planned_plan_longer_than_max_steps_ends_at_the_step_limit() -> None:
    """The model was asked for at most maxSteps steps; more are kept, and the run stops at
    the limit as any plan does (seed testMaxStepsPlanLevel), never "completed"."""
    b = Bench()
    planned = json.dumps({"steps": [{"toolName": "describeAllModels", "description": f"t{i}"} for i in range(1, 5)]})
    done = b.run(ChainPlan(max_steps=2, plan_query=query("q", planned)))
    assert [s.step_status for s in done.steps] == [StepStatus.COMPLETED] * 2 + [StepStatus.PENDING] * 2
    assert b.kinds()[-1] == "chainMaxSteps" and (done.outcome, done.error) == (
        "maxSteps",
        "the chain stopped at 2 steps",
    )
    assert "at most 2" in b.prompts()[0]


# -- cancellation ---------------------------------------------------------------------


def test_a_cancel_event_stops_before_the_next_step() -> None:
    b = Bench(store=SQLitePlanStore())
    cancel = asyncio.Event()

    def stop_after_first(event: ChainEvent) -> None:
        if event.event_type == "stepComplete":
            cancel.set()

    plan = ChainPlan(object_id="c1", steps=[step(i, toolName="describeAllModels") for i in (1, 2, 3)])
    done = asyncio.run(b.executor.execute_chain(plan, cancel=cancel, listeners=[stop_after_first]))
    assert [s.step_status for s in done.steps] == [StepStatus.COMPLETED, StepStatus.PENDING, StepStatus.PENDING]
    assert b.kinds()[-1] == "chainCancelled"
    assert b.store.load("c1", "default") == done


def test_cancelling_interrupts_a_running_step() -> None:
    started, never = asyncio.Event(), asyncio.Event()

    async def slow() -> str:
        started.set()
        await never.wait()
        return "unreachable"

    b = Bench(store=SQLitePlanStore())
    b.executor.tools["slow"] = slow

    async def scenario() -> tuple[ChainPlan, ChainPlan | None]:
        cancel = asyncio.Event()
        run = asyncio.ensure_future(
            b.executor.execute_chain(
                ChainPlan(object_id="c2", steps=[step(1, toolName="slow"), step(2, toolName="describeAllModels")]),
                cancel=cancel,
            )
        )
        await started.wait()
        cancel.set()
        return await run, None

    done, _ = asyncio.run(scenario())
    assert [s.step_status for s in done.steps] == [StepStatus.SKIPPED, StepStatus.PENDING]
    assert done.steps[0].summary_text == "cancelled while running"
    assert b.store.load("c2", "default").steps[0].step_status is StepStatus.SKIPPED


def test_cancelling_the_task_records_the_stop_and_propagates() -> None:
    started = asyncio.Event()

    async def slow() -> None:
        started.set()
        await asyncio.Event().wait()

    b = Bench(store=SQLitePlanStore())
    b.executor.tools["slow"] = slow

    async def scenario() -> None:
        task = asyncio.ensure_future(
            b.executor.execute_chain(ChainPlan(object_id="c3", steps=[step(1, toolName="slow")]))
        )
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    assert b.kinds()[-1] == "chainCancelled"
    assert b.store.load("c3", "default").steps[0].step_status is StepStatus.SKIPPED


# -- bad input: a clear error or a controlled stop; the stored plan shows what ran ------


def typed_tool(age: int, tags: list[str]) -> str:
    return f"{age}: {', '.join(tags)}"


BAD_INPUT: list[tuple[str, ChainPlan, str, list[StepStatus]]] = [
    (
        "unknown step type",
        ChainPlan(steps=[step(1, toolName="describeAllModels"), step(2, stepType="UNKNOWN")]),
        "step 2: step type UNKNOWN cannot run here",
        [StepStatus.COMPLETED, StepStatus.FAILED],
    ),
    (
        "unknown tool",
        ChainPlan(steps=[step(1, toolName="nonExistentTool")]),
        "step 1: unknown tool 'nonExistentTool'; registered: ",
        [StepStatus.FAILED],
    ),
    (
        "wrong argument names",
        ChainPlan(steps=[step(1, toolName="findPersons", inputs={"wrong": 1})]),
        "step 1: tool 'findPersons' cannot take the arguments ['wrong']",
        [StepStatus.FAILED],
    ),
    (
        "wrong argument types",
        ChainPlan(steps=[step(1, toolName="typed", inputs={"age": "old", "tags": "x"})]),
        "step 1: tool 'typed': age: Input should be a valid integer",
        [StepStatus.FAILED],
    ),
    (
        "missing variable",
        ChainPlan(
            steps=[step(1, toolName="describeAllModels"), step(2, toolName="findPersons", inputs={"query": "{{qf}}"})]
        ),
        "step 2: the chain context has no {{qf}} (known: none yet)",
        [StepStatus.COMPLETED, StepStatus.FAILED],
    ),
    (
        "policy that does not exist",
        ChainPlan(steps=[step(1, stepType="POLICY_GATE", policyName="ghost")]),
        "step 1: no policy named 'ghost'",
        [StepStatus.FAILED],
    ),
    (
        "unknown prompt config",
        ChainPlan(steps=[llm(1, promptConfigName="ghost")]),
        "step 1: no prompt config named 'ghost'",
        [StepStatus.FAILED],
    ),
]


@pytest.mark.parametrize(("plan", "message", "statuses"), [c[1:] for c in BAD_INPUT], ids=[c[0] for c in BAD_INPUT])
def test_bad_input_fails_clearly_and_the_store_shows_what_ran(
    plan: ChainPlan, message: str, statuses: list[StepStatus]
) -> None:
    b = Bench(store=SQLitePlanStore())
    b.executor.tools["typed"] = typed_tool
    with pytest.raises(PlanExecutionError) as caught:
        b.run(plan)
    assert str(caught.value).startswith(message)
    stored = b.store.load(caught.value.plan.object_id, "default")
    assert stored == caught.value.plan
    assert [s.step_status for s in stored.steps] == statuses
    assert stored.steps[-1].summary_text == str(caught.value)


def test_typed_tool_arguments_are_coerced_when_they_can_be() -> None:
    b = Bench()
    b.executor.tools["typed"] = typed_tool
    assert (
        b.run(ChainPlan(steps=[step(1, toolName="typed", inputs={"age": "41", "tags": ["a", "b"]})])).output
        == "41: a, b"
    )


def test_malformed_routing_json_is_a_logged_controlled_continue() -> None:
    b = Bench(store=SQLitePlanStore())
    done = b.run(
        ChainPlan(
            plan_query=query("q", "answer", '{"complete": false, "nextSteps": [{"stepType": "DANCE"}]}'),
            steps=[llm(1), step(2, toolName="describeAllModels")],
        )
    )
    error = next(e for e in b.events if e.event_type == "routingError")
    assert "nextSteps[0].stepType: Input should be 'UNKNOWN', 'TOOL'" in error.error_message
    assert [s.step_status for s in done.steps] == [StepStatus.COMPLETED] * 2
    assert b.store.load(done.object_id, "default") == done


def test_a_routing_model_that_always_wants_more_is_stopped_and_stored() -> None:
    b = Bench(store=SQLitePlanStore())
    forever = [x for i in range(12) for x in (f"answer {i}", route({"stepType": "LLM", "inputs": {"prompt": "more"}}))]
    done = b.run(ChainPlan(max_steps=6, plan_query=query("q", *forever), steps=[llm(1)]))
    assert b.kinds()[-1] == "chainMaxSteps" and done.total_executed_steps == 6
    stored = b.store.load(done.object_id, "default")
    assert [s.step_status for s in stored.steps] == [StepStatus.COMPLETED] * 6
    assert [s.parent_step for s in stored.steps] == [-1, 1, 2, 3, 4, 5]


def test_a_model_error_fails_the_llm_step_with_the_providers_message() -> None:
    script = {"instruction_chain": [{"error": {"status": 529, "type": "overloaded_error", "message": "busy"}}]}
    b = Bench(store=SQLitePlanStore())
    with pytest.raises(PlanExecutionError, match="step 1: the model call failed: busy") as caught:
        b.run(ChainPlan(plan_query=InstructionChain.model_validate(script).tagged("q"), steps=[llm(1)]))
    assert b.store.load(caught.value.plan.object_id, "default").steps[0].step_status is StepStatus.FAILED


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        ("no plan here", "planning failed: no JSON object in the planning reply"),
        ('{"steps": []}', "planning failed: the planning reply needs a non-empty 'steps' list"),
        ('{"steps": [{"stepType": "TOOL", "ragLimit": "many"}]}', "planning failed: steps[0].ragLimit:"),
    ],
)
def test_an_unusable_plan_from_the_model_is_a_clear_error(reply: str, message: str) -> None:
    b = Bench(store=SQLitePlanStore())
    with pytest.raises(PlanExecutionError, match=message.replace("[", r"\[").replace("]", r"\]")) as caught:
        b.run(ChainPlan(plan_query=query("q", reply)))
    assert b.kinds() == ["stepError"] and caught.value.plan.steps == []


def test_chat_configs_pick_the_model_client_of_a_step() -> None:
    """Two chat configs in one run: the step's ``chatConfigName`` picks which model (and
    protocol) answers; the one conversation goes on across them."""
    from harness.systems.llm import model_client
    from mockllm import MockLLM
    from tests.http_support import sdk_http_client

    b = Bench()  # its default client speaks Anthropic Messages
    openai_bodies: list[str] = []

    async def record(request: Any) -> None:
        openai_bodies.append(request.url.path)

    b.executor.chat_configs["openai"] = model_client(
        "openai-chat", http_client=sdk_http_client("openai-chat", MockLLM(), event_hooks={"request": [record]})
    )
    done = b.run(
        ChainPlan(
            plan_query=answers("q", "from claude", "from gpt"),
            steps=[llm(1, "first"), llm(2, "second", chatConfigName="openai")],
        )
    )
    assert [s.output for s in done.steps] == ["from claude", "from gpt"]
    assert openai_bodies == ["/v1/chat/completions"]  # step 2 only: routing is the default model's
    with pytest.raises(PlanExecutionError, match=r"step 1: no chat config named 'ghost'; known: \['openai'\]"):
        b.run(ChainPlan(plan_query=answers("q", "x"), steps=[llm(1, chatConfigName="ghost")]))


def test_a_callable_object_that_is_not_hashable_is_a_tool_too() -> None:
    class Greeter:
        def __eq__(self, other: object) -> bool:  # defining __eq__ drops __hash__
            return isinstance(other, Greeter)

        def __call__(self, name: str) -> str:
            return f"hello {name}"

    b = Bench()
    b.executor.tools["greet"] = Greeter()
    assert b.run(ChainPlan(steps=[step(1, toolName="greet", inputs={"name": "Ada"})])).output == "hello Ada"
