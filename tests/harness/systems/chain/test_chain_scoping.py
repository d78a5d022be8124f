"""Named resources by name or am7:// URI, within the organization (seed 001 §2.2, §6.2),
permissions (§3.6) and character records (Group K), at the executor."""

from __future__ import annotations

import json

import pytest

from harness.systems.chain import (
    ChainPlan,
    Character,
    CharacterError,
    Permissions,
    PlanExecutionError,
    Policy,
    StepStatus,
    UnknownReference,
    chain_chat_history,
    character_tools,
    parse_context,
    read_character,
    resolve_name,
    save_context,
)
from harness.systems.chain.access import EVERYTHING
from tests.harness.systems.chain.chain_support import PROMPTS, Bench, answers, llm, step

ALWAYS = Policy.model_validate(
    {"name": "always", "rules": [{"patterns": [{"type": "expression", "check": "length", "op": ">=", "value": 0}]}]}
)


@pytest.mark.parametrize(
    ("reference", "expected"),
    [
        ("brief", "brief"),
        ("am7://default/prompt.config/brief", "brief"),
    ],
)
def test_a_name_or_a_uri_of_the_organization_resolves(reference: str, expected: str) -> None:
    assert resolve_name(reference, "prompt.config", "default", PROMPTS) == expected


@pytest.mark.parametrize(
    ("reference", "message"),
    [
        ("am7://other/prompt.config/brief", "not found: am7://other/prompt.config/brief"),
        ("am7://default/chat.config/brief", "not found: am7://default/chat.config/brief"),  # another type
        ("am7://default/prompt.config/ghost", "not found: am7://default/prompt.config/ghost"),
        ("ghost", "no prompt config named 'ghost'; known: ['brief', 'casual', 'formal']"),
    ],
)
def test_another_organizations_type_or_an_unknown_name_is_not_found(reference: str, message: str) -> None:
    with pytest.raises(UnknownReference) as caught:
        resolve_name(reference, "prompt.config", "default", PROMPTS)
    assert str(caught.value) == message


def test_a_malformed_uri_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="needs an organization, a type and an id"):
        resolve_name("am7://default/prompt.config", "prompt.config", "default", PROMPTS)


def test_a_steps_prompt_config_uri_reaches_the_model_as_its_system_prompt() -> None:
    b = Bench(routing=False)
    done = b.run(
        ChainPlan(plan_query=answers("q", "ok"), steps=[llm(1, promptConfigName="am7://default/prompt.config/formal")])
    )
    assert done.steps[0].step_status is StepStatus.COMPLETED
    assert b.bodies[0]["system"] == "Rewrite text to be formal."


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        (
            {"promptConfigName": "am7://other/prompt.config/brief"},
            "step 1: promptConfigName: not found: am7://other/prompt.config/brief (status 404)",
        ),
        (
            {"chatConfigName": "am7://other/chat.config/openai"},
            "step 1: chatConfigName: not found: am7://other/chat.config/openai (status 404)",
        ),
        (
            {"promptConfigName": "am7://default/prompt.config"},
            "step 1: promptConfigName: an am7:// URI needs an organization",
        ),
    ],
)
def test_a_steps_config_uri_of_another_organization_fails_the_step_as_not_found(
    fields: dict[str, str], message: str
) -> None:
    b = Bench(routing=False)
    b.executor.chat_configs["openai"] = b.executor.client  # known here, but not in "other"
    with pytest.raises(PlanExecutionError) as caught:
        b.run(ChainPlan(plan_query=answers("q", "ok"), steps=[llm(1, **fields)]))
    assert str(caught.value).startswith(message)
    assert caught.value.plan.steps[0].step_status is StepStatus.FAILED
    assert b.bodies == []  # refused before the model was asked


def test_a_steps_chat_config_uri_picks_that_client() -> None:
    b, other = Bench(routing=False), Bench(routing=False)
    b.executor.chat_configs["second"] = other.executor.client
    b.run(
        ChainPlan(
            plan_query=answers("q", "one", "two"),
            steps=[llm(1), llm(2, chatConfigName="am7://default/chat.config/second")],
        )
    )
    assert len(b.bodies) == 1 and len(other.bodies) == 1  # step 2 went to the "second" config's model


def test_a_gates_policy_by_uri_and_another_organizations_is_not_found() -> None:
    b = Bench(policies=[ALWAYS], routing=False)
    done = b.run(
        ChainPlan(
            plan_query="q",
            steps=[
                step(1, toolName="describeAllModels"),
                step(2, stepType="POLICY_GATE", policyName="am7://default/policy.policy/always"),
            ],
        )
    )
    assert [s.step_status for s in done.steps] == [StepStatus.COMPLETED, StepStatus.COMPLETED]
    with pytest.raises(
        PlanExecutionError,
        match=r"step 1: policyName: not found: "
        r"am7://acme/policy.policy/always \(status 404\)",
    ):
        b.run(
            ChainPlan(
                plan_query="q", steps=[step(1, stepType="POLICY_GATE", policyName="am7://acme/policy.policy/always")]
            )
        )


# -- permissions ---------------------------------------------------------------------------


def test_permissions_default_to_everything_and_match_patterns() -> None:
    assert Permissions.from_json(None) is EVERYTHING and EVERYTHING.may_run("anything")
    limited = Permissions.from_json({"tools": ["find*"], "vectors": [], "data": ["am7://acme/*"]})
    assert limited.may_run("findPersons") and not limited.may_run("describeAllModels")
    assert not limited.may_search("am7://acme/data.data/x")
    assert limited.may_read("am7://acme/data.data/x") and not limited.may_read("am7://globex/data.data/x")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"tool": ["x"]}, "permissions: unknown key(s) 'tool'; permissions are 'tools', 'vectors' and 'data'"),
        ({"tools": "lookup"}, "permissions.tools: expected a list of name or URI patterns"),
        (["lookup"], "permissions: expected an object"),
    ],
)
def test_bad_permissions_say_what_is_wrong(data: object, message: str) -> None:
    with pytest.raises(ValueError) as caught:
        Permissions.from_json(data)
    assert str(caught.value).startswith(message)


def test_a_tool_outside_the_permissions_fails_its_step_as_forbidden() -> None:
    b = Bench(permissions=Permissions(tools=("find*", "newQueryField")), routing=False)
    plan = ChainPlan(
        plan_query="q",
        steps=[
            step(
                1, toolName="newQueryField", inputs={"field": "age", "comparator": ">", "value": "21"}, outputName="q"
            ),
            step(2, toolName="describeAllModels"),
        ],
    )
    with pytest.raises(PlanExecutionError) as caught:
        b.run(plan)
    assert str(caught.value) == (
        "step 2: forbidden: tool 'describeAllModels' is not in this caller's tools permissions (status 403)"
    )
    assert [s.step_status for s in caught.value.plan.steps] == [StepStatus.COMPLETED, StepStatus.FAILED]
    assert b.kinds()[-1] == "stepError"


def test_an_unscoped_search_covers_only_the_documents_the_caller_may_search() -> None:
    rag = step(1, stepType="RAG_QUERY", ragQuery="bread", ragLimit=1, outputName="c")
    everything = Bench(routing=False).run(ChainPlan(plan_query="q", steps=[rag]))
    top = parse_context(everything.steps[0].output).blocks[0].data["results"]
    assert [r["uri"] for r in top] == ["am7://default/data.data/people"]  # the best match overall
    b = Bench(permissions=Permissions(vectors=("am7://default/data.data/rec*",)), routing=False)
    done = b.run(ChainPlan(plan_query="q", steps=[rag]))
    results = parse_context(done.steps[0].output).blocks[0].data["results"]
    assert [r["uri"] for r in results] == ["am7://default/data.data/recipes"]  # the limit counts permitted hits


def test_a_search_scoped_to_a_document_outside_the_permissions_is_forbidden() -> None:
    b = Bench(permissions=Permissions(vectors=("am7://default/data.data/people",)), routing=False)
    with pytest.raises(
        PlanExecutionError,
        match=r"step 1: forbidden: document am7://default/data.data/census "
        r"is not in this caller's vectors permissions \(status 403\)",
    ):
        b.run(
            ChainPlan(
                plan_query="q",
                steps=[
                    step(
                        1,
                        stepType="RAG_QUERY",
                        ragQuery="population",
                        vectorReferenceUri="am7://default/data.data/census",
                    )
                ],
            )
        )


# -- characters and the Magic8 context (Group K) ----------------------------------------------

CHARACTERS = {
    "aria": Character(name="Aria", description="A patient guide.", attributes={"voice": "warm"}),
    "sam": Character(name="Sam", description="A curious student."),
}


def test_a_character_is_read_by_name_or_uri_fully_hydrated() -> None:
    record = read_character("am7://acme/olio.charPerson/aria", "acme", CHARACTERS)
    assert record == {
        "uri": "am7://acme/olio.charPerson/aria",
        "objectId": "aria",
        "name": "Aria",
        "description": "A patient guide.",
        "attributes": {"voice": "warm"},
    }
    assert read_character("aria", "acme", CHARACTERS) == record


@pytest.mark.parametrize(
    ("reference", "permissions", "status", "message"),
    [
        (
            "am7://globex/olio.charPerson/aria",
            EVERYTHING,
            404,
            "not found: am7://globex/olio.charPerson/aria (status 404)",
        ),
        ("ghost", EVERYTHING, 404, "no character named 'ghost'"),
        (
            "aria",
            Permissions(data=("am7://acme/olio.charPerson/sam",)),
            403,
            "forbidden: character am7://acme/olio.charPerson/aria is not in this caller's data permissions (status 403)",
        ),
    ],
)
def test_a_character_of_another_organization_is_not_found_and_one_not_permitted_is_forbidden(
    reference: str, permissions: Permissions, status: int, message: str
) -> None:
    with pytest.raises(CharacterError) as caught:
        read_character(reference, "acme", CHARACTERS, permissions)
    assert caught.value.status == status and str(caught.value).startswith(message)


def test_the_character_tools_read_characters_in_a_chain() -> None:
    tools = character_tools(CHARACTERS, "default", Permissions(data=("am7://default/olio.charPerson/sam",)))
    b = Bench(routing=False)
    b.executor.tools.update(tools)
    done = b.run(
        ChainPlan(
            plan_query="q",
            steps=[
                step(1, toolName="findCharacters", inputs={"query": ""}, outputName="people"),
                step(2, toolName="getCharacter", inputs={"uri": "am7://default/olio.charPerson/sam"}, outputName="sam"),
            ],
        )
    )
    assert [c["name"] for c in done.steps[0].output] == ["Sam"]  # Aria is not readable by this caller
    assert done.steps[1].output["description"] == "A curious student."
    with pytest.raises(
        PlanExecutionError,
        match=r"step 1: tool 'getCharacter' failed: CharacterError: "
        r"not found: am7://globex/olio.charPerson/sam \(status 404\)",
    ):
        b.run(
            ChainPlan(
                plan_query="q",
                steps=[step(1, toolName="getCharacter", inputs={"uri": "am7://globex/olio.charPerson/sam"})],
            )
        )


def test_the_chain_reads_its_characters_from_the_context_and_its_history_carries_them() -> None:
    """K1/K3: the characters a chain starts with are full records its steps read
    (``{{systemCharacter.name}}``), and its chat history carries them and the chat config."""
    aria = read_character("aria", "default", CHARACTERS)
    sam = read_character("sam", "default", CHARACTERS)
    b = Bench(routing=False)
    plan = ChainPlan(
        object_id="p1",
        plan_query=answers("q", "Hello Sam, I am Aria."),
        context_blocks=save_context({"chatConfigId": "casual", "systemCharacter": aria, "userCharacter": sam}, "p1"),
        steps=[
            llm(
                1,
                "You are {{systemCharacter.name}} ({{systemCharacter.attributes.voice}}); "
                "greet {{userCharacter.name}}.",
                outputName="greeting",
            )
        ],
    )
    done = b.run(plan)
    assert b.prompts()[0].endswith("You are Aria (warm); greet Sam.")
    context = chain_chat_history(done)
    assert context["systemCharacter"] == aria and context["userCharacter"] == sam
    assert context["chatConfigId"] == "casual"
    assert context["chatHistory"]["messages"][-1] == {"role": "assistant", "content": "Hello Sam, I am Aria."}
    json.loads(json.dumps(context))  # valid JSON, as the seed asks
    with pytest.raises(PlanExecutionError, match=r"the chain context has no \{\{systemCharacter.age\}\}"):
        b.run(plan.model_copy(update={"steps": [llm(1, "{{systemCharacter.age}}")]}))


def test_a_plan_without_characters_has_none_in_its_history() -> None:
    context = chain_chat_history(ChainPlan(plan_query="q"))
    assert (context["systemCharacter"], context["userCharacter"], context["chatConfigId"]) == (None, None, None)
