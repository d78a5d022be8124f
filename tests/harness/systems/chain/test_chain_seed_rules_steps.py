"""Seed 000/001 rules of the chain's steps and formats that mutation testing found
unasserted (docs/mutation.md, the chain area): what a gate judges and how its patterns
match, where RAG and LLM steps take their query and prompt, the MCP context blocks an
LLM step is given and the saved context, the chain as chat history (those two:
``test_chain_seed_rules_context.py``), the executor's own settings, and am7:// URIs."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from harness.systems.chain import (
    Am7Uri,
    ChainExecutor,
    ChainPlan,
    Character,
    CharacterError,
    InMemoryVectorStore,
    Permissions,
    PlanExecutionError,
    PlanStep,
    Policy,
    StepStatus,
    chain_chat_history,
    character_tools,
    parse_context,
    restore_context,
)
from harness.systems.chain.characters import character_record
from harness.systems.chain.policy import evaluate_policy
from harness.systems.llm import model_client
from mockllm import MockLLM
from tests.harness.systems.chain.chain_support import DONE, TOOLS, Bench, answers, llm, query, step
from tests.http_support import sdk_http_client

QF = {"field": "age", "comparator": "GT", "value": "30"}


def policy(name: str, *patterns: dict[str, Any]) -> Policy:
    return Policy.model_validate({"name": name, "rules": [{"patterns": list(patterns)}]})


def expression(check: str, value: Any, **more: Any) -> dict[str, Any]:
    return {"type": "expression", "check": check, "value": value, **more}


def judge(pattern: dict[str, Any], fact: str) -> bool:
    async def no_chat(prompt: str, config: str | None) -> str:
        raise AssertionError("an expression asks no model")

    return asyncio.run(evaluate_policy(policy("p", pattern), fact, no_chat)).permit


# -- POLICY_GATE: what is judged, and how patterns match --------------------------------


def test_a_gate_judges_its_fact_input_filled_from_the_context_as_json() -> None:
    b = Bench(policies=[policy("over-30", expression("contains", '"comparator": "GT", "value": "30"'))])
    done = b.run(
        ChainPlan(
            steps=[
                step(1, toolName="newQueryField", inputs=QF, outputName="qf"),
                step(2, toolName="describeAllModels"),
                step(3, stepType="POLICY_GATE", policyName="over-30", inputs={"fact": "{{qf}}"}),
            ]
        )
    )
    assert done.steps[2].step_status is StepStatus.COMPLETED
    assert json.loads(done.steps[2].output) == QF  # the gate passes on the fact it judged


def test_a_gate_judges_a_structured_previous_output_as_its_json() -> None:
    b = Bench(policies=[policy("over-30", expression("regex", r'"field": "age"'))])
    done = b.run(
        ChainPlan(
            steps=[step(1, toolName="newQueryField", inputs=QF), step(2, stepType="POLICY_GATE", policyName="over-30")]
        )
    )
    assert done.steps[1].step_status is StepStatus.COMPLETED and json.loads(done.output) == QF


def test_a_gate_with_nothing_before_it_judges_an_empty_fact() -> None:
    b = Bench(policies=[policy("empty", expression("length", 0, op="=="))])
    done = b.run(ChainPlan(steps=[step(1, stepType="POLICY_GATE", policyName="empty")]))
    assert done.steps[0].step_status is StepStatus.COMPLETED and done.output == ""


@pytest.mark.parametrize(
    ("reply", "status"),
    [
        ("permit: it is polite", StepStatus.COMPLETED),
        ("PERMIT", StepStatus.COMPLETED),
        ("DENY: rude", StepStatus.GATED),
        ("I would permit it", StepStatus.GATED),
    ],
)
def test_a_validating_gate_permits_when_the_reply_starts_with_permit(reply: str, status: StepStatus) -> None:
    polite = policy("polite", {"type": "chat_operation", "mode": "validate", "instruction": "Is this polite?"})
    b = Bench(policies=[polite])
    done = b.run(
        ChainPlan(
            plan_query=query("q", "Hello there.", DONE, reply),
            steps=[llm(1), step(2, stepType="POLICY_GATE", policyName="polite")],
        )
    )
    assert done.steps[1].step_status is status
    assert (
        b.prompts()[2]
        == "Is this polite?\nAnswer PERMIT or DENY first, then the reason.\n<fact>\nHello there.\n</fact>"
    )


def test_a_rewriting_gate_asks_for_the_rewritten_text_only() -> None:
    formal = policy("formal", {"type": "chat_operation", "mode": "rewrite", "instruction": "Be formal."})
    b = Bench(policies=[formal])
    done = b.run(
        ChainPlan(
            plan_query=query("q", "hey", DONE, "Good day."),
            steps=[llm(1), step(2, stepType="POLICY_GATE", policyName="formal")],
        )
    )
    assert b.prompts()[2] == "Be formal.\nAnswer with the rewritten text only.\n<fact>\nhey\n</fact>"
    assert done.output == "Good day."


def test_a_gates_chat_operation_asks_the_model_of_the_gates_chat_config() -> None:
    paths: list[str] = []

    async def record(request: Any) -> None:
        paths.append(request.url.path)

    b = Bench(policies=[policy("polite", {"type": "chat_operation", "mode": "validate", "instruction": "Polite?"})])
    b.executor.chat_configs["openai"] = model_client(
        "openai-chat", http_client=sdk_http_client("openai-chat", MockLLM(), event_hooks={"request": [record]})
    )
    done = b.run(
        ChainPlan(
            plan_query=query("q", "Hello.", DONE, "PERMIT"),
            steps=[llm(1), step(2, stepType="POLICY_GATE", policyName="polite", chatConfigName="openai")],
        )
    )
    assert done.steps[1].step_status is StepStatus.COMPLETED
    assert paths == ["/v1/chat/completions"]  # the validation question only


@pytest.mark.parametrize(
    ("pattern", "fact", "matches"),
    [
        (expression("contains", "bread"), "Fresh bread", True),
        (expression("contains", "bread"), "Fresh Bread", False),
        (expression("contains", "bread", ignoreCase=True), "Fresh BREAD", True),
        (expression("contains", "a+b"), "sum: a+b", True),  # text, not a regex
        (expression("contains", "a+b"), "aab", False),
        (expression("equals", "yes"), "  yes ", True),
        (expression("equals", "yes"), "yes sir", False),
        (expression("equals", "YES", ignoreCase=True), "yes", True),
        (expression("regex", "^BREAD"), "bread rolls", False),
        (expression("regex", "^BREAD", ignoreCase=True), "bread rolls", True),
        (expression("regex", r"\d+ people"), "4200 people", True),
    ],
)
def test_expression_patterns_match_text_as_their_check_says(pattern: dict[str, Any], fact: str, matches: bool) -> None:
    assert judge(pattern, fact) is matches


# -- RAG_QUERY and LLM steps: where the query and the prompt come from -------------------


@pytest.mark.parametrize(
    ("fields", "searched"),
    [
        ({"ragQuery": "bread", "inputs": {"query": "population"}, "description": "people"}, "bread"),
        ({"inputs": {"query": "population"}, "description": "people"}, "population"),
        ({"description": "who bakes"}, "who bakes"),
    ],
    ids=["ragQuery", "inputs.query", "description"],
)
def test_a_rag_step_searches_its_rag_query_else_its_query_input_else_its_description(
    fields: dict[str, Any], searched: str
) -> None:
    done = Bench().run(ChainPlan(steps=[step(1, stepType="RAG_QUERY", **fields)]))
    (block,) = parse_context(done.output).blocks
    assert block.data["query"] == searched
    assert done.steps[0].summary_text == f"{len(block.data['results'])} result(s) for {searched!r}"


def test_a_rag_limit_of_zero_finds_nothing_and_a_negative_one_is_an_error() -> None:
    done = Bench().run(ChainPlan(steps=[step(1, stepType="RAG_QUERY", ragQuery="bread", ragLimit=0)]))
    assert done.steps[0].step_status is StepStatus.COMPLETED
    assert parse_context(done.output).blocks[0].data["results"] == []
    store = InMemoryVectorStore()
    store.add_document("am7://default/data.data/bread", "Bread needs flour.")
    assert store.search("bread", 0) == [] and len(store.search("bread", 1)) == 1
    with pytest.raises(ValueError, match="limit must be >= 0, got -1"):
        store.search("bread", -1)
    with pytest.raises(Exception, match="step 1: ragLimit must be >= 0, got -1"):
        Bench().run(ChainPlan(steps=[step(1, stepType="RAG_QUERY", ragQuery="bread", ragLimit=-1)]))


def test_an_llm_step_without_a_prompt_input_is_asked_its_description() -> None:
    b = Bench()
    done = b.run(
        ChainPlan(
            plan_query=answers("q", "Paris."), steps=[step(1, stepType="LLM", description="Name the capital of France")]
        )
    )
    assert b.prompts()[0].endswith("Name the capital of France") and done.output == "Paris."


# -- the executor's own settings ----------------------------------------------------------


def test_the_executors_client_answers_llm_steps() -> None:
    b = Bench()  # its executor was made with a client: run it directly, not through Bench.run
    done = asyncio.run(b.executor.execute_chain(ChainPlan(plan_query=answers("q", "hi"), steps=[llm(1)])))
    assert done.output == "hi"


def test_policies_may_be_given_by_name_and_a_default_vector_store_finds_nothing() -> None:
    never = policy("strict", expression("equals", "-"))
    executor = ChainExecutor(tools=TOOLS, policies={"strict": never})
    done = asyncio.run(
        executor.execute_chain(
            ChainPlan(
                steps=[
                    step(1, stepType="RAG_QUERY", ragQuery="bread"),
                    step(2, stepType="POLICY_GATE", policyName="strict"),
                ]
            )
        )
    )
    assert [s.step_status for s in done.steps] == [StepStatus.COMPLETED, StepStatus.GATED]
    assert parse_context(done.steps[0].output).blocks[0].data["results"] == []


def test_the_callers_plan_and_its_steps_are_left_as_they_were() -> None:
    plan = ChainPlan(steps=[step(1, toolName="describeAllModels", outputName="m")])
    done = Bench().run(plan)
    assert done.steps[0].step_status is StepStatus.COMPLETED and done.steps[0].output
    assert (plan.steps[0].step_status, plan.steps[0].output, plan.object_id, plan.executed) == (
        StepStatus.PENDING,
        None,
        None,
        False,
    )


# -- am7:// URIs ---------------------------------------------------------------------------


def test_am7_uris_keep_their_reserved_characters_and_refuse_a_slash_in_organization_or_type() -> None:
    assert str(Am7Uri("org:1", "data.data@v2", "doc:1@v2/part")) == "am7://org:1/data.data@v2/doc:1@v2/part"
    for organization, type_ in (("a/b", "t"), ("a", "t/u")):
        with pytest.raises(ValueError, match="organization and type cannot contain '/'"):
            Am7Uri(organization, type_, "id")


# -- permissions and characters --------------------------------------------------------


def test_an_unscoped_search_asks_again_until_it_has_ragLimit_permitted_hits() -> None:
    store = InMemoryVectorStore(chunk_words=3)
    for i in range(8):
        store.add_document(f"am7://default/data.data/secret{i}", "Bread bread bread. Bread bread bread.")
    store.add_document("am7://default/data.data/open", "Bread rolls are warm. Bread crusts are hard. Bread is old.")
    b = Bench(vector_store=store, permissions=Permissions(vectors=("am7://default/data.data/open",)), routing=False)
    done = b.run(ChainPlan(steps=[step(1, stepType="RAG_QUERY", ragQuery="bread", ragLimit=3)]))
    found = parse_context(done.output).blocks[0].data["results"]
    assert sorted((r["uri"], r["chunk"]) for r in found) == [("am7://default/data.data/open", n) for n in range(3)]


def test_permissions_must_be_lists_of_strings() -> None:
    with pytest.raises(
        ValueError, match=r"permissions.tools: expected a list of name or URI patterns \(strings\), got \[1\]"
    ):
        Permissions.from_json({"tools": [1]})


def test_a_character_record_is_plain_json_whatever_its_attributes() -> None:
    record = character_record("acme", "aria", Character(name="Aria", attributes={"likes": ("tea", "cake")}))
    assert record["attributes"] == {"likes": ["tea", "cake"]}
    assert json.loads(json.dumps(record)) == record


def test_the_character_tools_find_by_name_or_description_and_keep_the_callers_permissions() -> None:
    characters = {
        "aria": Character(name="Aria", description="A patient guide."),
        "sam": Character(name="Sam", description="A curious student."),
    }
    tools = character_tools(characters, "acme")
    assert [c["name"] for c in tools["findCharacters"]()] == ["Aria", "Sam"]
    assert [c["name"] for c in tools["findCharacters"]("GUIDE")] == ["Aria"]  # by description
    assert [c["name"] for c in tools["findCharacters"]("sam")] == ["Sam"]  # by name
    limited = character_tools(characters, "acme", Permissions(data=("am7://acme/olio.charPerson/sam",)))
    assert limited["getCharacter"]("sam")["name"] == "Sam"
    with pytest.raises(CharacterError, match=r"forbidden: character am7://acme/olio.charPerson/aria") as caught:
        limited["getCharacter"]("aria")
    assert caught.value.status == 403


# -- clear errors and odd values --------------------------------------------------------

ALWAYS = policy("always", expression("length", 0, op=">="))


@pytest.mark.parametrize(
    "broken",
    [
        step(1, stepType="POLICY_GATE", policyName="always", inputs={"fact": "{{nope}}"}),
        llm(1, "Tell me about {{nope}}"),
        step(1, stepType="RAG_QUERY", ragQuery="{{nope}}"),
        step(1, toolName="join", inputs={"parts": ["a", "{{nope}}"]}),
    ],
    ids=["gate-fact", "llm-prompt", "rag-query", "list-input"],
)
def test_a_missing_variable_in_any_input_fails_the_step_naming_it(broken: PlanStep) -> None:
    b = Bench(policies=[ALWAYS])
    b.executor.tools["join"] = lambda parts: " + ".join(parts)
    with pytest.raises(PlanExecutionError) as caught:
        b.run(ChainPlan(plan_query=answers("q", "x"), steps=[broken]))
    assert str(caught.value) == "step 1: the chain context has no {{nope}} (known: none yet)"


def test_a_gates_chat_operation_with_an_unknown_prompt_config_fails_the_step_clearly() -> None:
    odd = policy("odd", {"type": "chat_operation", "mode": "validate", "instruction": "?", "promptConfigName": "ghost"})
    with pytest.raises(PlanExecutionError, match=r"^step 1: no prompt config named 'ghost'"):
        Bench(policies=[odd]).run(
            ChainPlan(plan_query=query("q"), steps=[step(1, stepType="POLICY_GATE", policyName="odd")])
        )


class Point:
    def __str__(self) -> str:
        return "Point(1, 2)"


def test_an_output_that_is_not_json_is_kept_and_shown_as_its_text() -> None:
    b = Bench()
    b.executor.tools["point"] = Point
    done = b.run(
        ChainPlan(
            plan_query=answers("q", "A point."),
            steps=[step(1, toolName="point", outputName="pt"), llm(2, "Describe it.")],
        )
    )
    (block,) = parse_context(b.prompts()[0]).blocks
    assert block.data["value"] == "Point(1, 2)"
    assert restore_context(done.context_blocks) == {"pt": "Point(1, 2)"}


def test_context_formats_read_leniently() -> None:
    assert restore_context('  {"legacy": true}') == {"legacy": True}  # plain JSON saved before the blocks
    (block,) = parse_context('<mcp:context uri="am7://o/t/1">{"v": 1}</mcp:context>').blocks
    assert (block.type, block.data) == ("resource", {"v": 1})  # a block without a type is a resource
    history = chain_chat_history(ChainPlan(plan_query="q", context_blocks="unreadable"))
    assert (history["systemCharacter"], history["userCharacter"], history["chatConfigId"]) == (None, None, None)
