"""Organization scoping of named resources (seed 001 §6.2), permissions (§3.6) and the
chain's characters (Group K), through the service: its YAML configuration, the REST
door and the MCP door (streamable HTTP, the official SDK's client).

acme has its own prompt config ``house``, its own ``brief`` over the shared one, its
own policy and characters; globex sees only the shared ones. Another organization's
resource is 404 — by name or by URI, at the request or at a step — and what a
principal's permissions deny in its own organization is 403.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from starlette.testclient import TestClient

from harness.in_process_mock import mock_http_clients
from harness.systems.chain import Character, InMemoryVectorStore, Policy, PromptConfig, SQLitePlanStore
from harness.systems.llm import model_client
from harness.systems.service.app import create_app
from harness.systems.service.auth import TokenAuth
from harness.systems.service.config import load_service_config
from harness.systems.service.core import ChainService, ChainServiceConfig
from harness.systems.service.mcp_server import LOOPBACK_SECURITY, mcp_asgi_app, service_from_file
from harness.systems.service.resources import ChatConfig, OrganizationResources
from mockllm import MockLLM
from mockllm._transports import HTTPX2Transport
from tests.harness.systems.service.mcp_support import http_mcp, llm_step, planned_query, serving
from tests.harness.systems.service.test_rest import assert_error

TOKENS = {
    "tok-ada": {"user": "ada", "organization": "acme"},
    "tok-kid": {
        "user": "kid",
        "organization": "acme",
        "permissions": {
            "tools": ["lookup"],
            "vectors": ["am7://acme/data.data/public-*"],
            "data": ["am7://acme/data.data/public-*", "am7://acme/olio.charPerson/guide"],
        },
    },
    "tok-eve": {"user": "eve", "organization": "globex"},
    "tok-ann": {
        "user": "ann",
        "organization": "acme",
        "permissions": {"data": ["am7://acme/olio.charPerson/sam", "am7://acme/olio.charPerson/guide"]},
    },
}
ADA, KID, EVE = ({"Authorization": f"Bearer tok-{who}"} for who in ("ada", "kid", "eve"))
ATLAS, PUBLIC = "am7://acme/data.data/atlas", "am7://acme/data.data/public-guide"
NO_SECRETS = {
    "name": "no-secrets",
    "rules": [{"condition": "NONE", "patterns": [{"type": "expression", "check": "contains", "value": "secret"}]}],
}


class Recorded:
    """Model clients on one in-process mock whose request bodies are kept."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.mock = MockLLM()

    def factory(self) -> Any:
        async def record(request: httpx2.Request) -> None:
            self.bodies.append(json.loads(request.content))

        return model_client(
            "anthropic-messages",
            http_client=httpx2.AsyncClient(
                transport=HTTPX2Transport(self.mock),
                base_url="http://mockllm.invalid",
                event_hooks={"request": [record]},
            ),
        )

    def systems(self) -> list[str | None]:
        return [body.get("system") for body in self.bodies]


@pytest.fixture
def recorded() -> Recorded:
    return Recorded()


@pytest.fixture
def scoped(recorded: Recorded) -> Iterator[TestClient]:
    store = InMemoryVectorStore()
    store.add_document(ATLAS, "Paris is the capital of France.")
    store.add_document(PUBLIC, "Paris has many museums and a famous tower.")
    config = ChainServiceConfig(
        client=recorded.factory,
        tools={"lookup": lambda topic: f"facts about {topic}", "leak": lambda topic: f"the secret of {topic}"},
        prompt_configs={"brief": PromptConfig("Shared: answer briefly.")},
        chat_configs={"default": ChatConfig(recorded.factory, system_character="guide")},
        policies=[Policy.model_validate(NO_SECRETS)],
        characters={"guide": Character(name="Guide", description="The shared guide.")},
        organizations={
            "acme": OrganizationResources(
                prompt_configs={"brief": PromptConfig("Acme: one word."), "house": PromptConfig("Acme house style.")},
                chat_configs={"studio": ChatConfig(recorded.factory, "aria", "am7://acme/olio.charPerson/sam")},
                policies=[Policy.model_validate({**NO_SECRETS, "name": "acme-only"})],
                characters={
                    "aria": Character(name="Aria", description="A patient guide.", attributes={"voice": "warm"}),
                    "sam": Character(name="Sam"),
                },
            )
        },
        vector_stores={"acme": store},
        store=SQLitePlanStore(),
    )
    with TestClient(create_app(ChainService(config), TokenAuth.from_json(TOKENS))) as client:
        yield client
    config.store.close()


def answered(answer: str, *searched: str) -> str:
    """A query the model plans as a RAG step over each of ``searched`` and an LLM step
    that answers ``answer`` and then routes to the end."""
    searches = [
        {"stepType": "RAG_QUERY", "ragQuery": "capital of France", "vectorReferenceUri": uri} for uri in searched
    ]
    return planned_query(
        "What is the capital of France?", [*searches, llm_step("Answer the query.")], answer, '{"complete": true}'
    )


def ask(client: TestClient, headers: dict[str, str], **fields: Any) -> Any:
    return client.post("/chat/chain", json={"planQuery": answered("Paris."), **fields}, headers=headers)


def test_an_organization_sees_its_own_configs_over_the_shared_default(scoped: TestClient, recorded: Recorded) -> None:
    for headers, fields in (
        (ADA, {"promptConfigName": "brief"}),
        (EVE, {"promptConfigName": "brief"}),
        (ADA, {"promptConfigUri": "am7://acme/prompt.config/house"}),
    ):
        response = ask(scoped, headers, **fields)
        assert response.status_code == 200 and response.json()["status"] == "completed", response.text
    answers = recorded.systems()[1::3]  # each chain: its plan, its answer, then its routing call
    assert answers == ["Acme: one word.", "Shared: answer briefly.", "Acme house style."]


@pytest.mark.parametrize(
    ("headers", "fields", "detail"),
    [
        (EVE, {"promptConfigName": "house"}, "promptConfigName: no prompt config named 'house'; known: ['brief']"),
        (
            EVE,
            {"promptConfigUri": "am7://acme/prompt.config/house"},
            "promptConfigUri: not found: am7://acme/prompt.config/house",
        ),
        (
            EVE,
            {"promptConfigUri": "am7://globex/prompt.config/house"},
            "promptConfigUri: not found: am7://globex/prompt.config/house",
        ),
        (
            EVE,
            {"chatConfigName": "am7://globex/chat.config/studio"},
            "chatConfigName: not found: am7://globex/chat.config/studio",
        ),
        (
            ADA,
            {"chatConfigUri": "am7://globex/chat.config/default"},
            "chatConfigUri: not found: am7://globex/chat.config/default",
        ),
    ],
)
def test_another_organizations_config_is_404_by_name_or_uri(
    scoped: TestClient, headers: dict[str, str], fields: dict[str, str], detail: str
) -> None:
    assert assert_error(ask(scoped, headers, **fields), 404) == detail


def test_a_steps_am7_names_resolve_as_the_requests_do(scoped: TestClient, recorded: Recorded) -> None:
    steps = [
        {
            "stepType": "LLM",
            "inputs": {"prompt": "Answer."},
            "promptConfigName": "am7://acme/prompt.config/house",
            "chatConfigName": "am7://acme/chat.config/studio",
        },
        {"stepType": "POLICY_GATE", "policyName": "am7://acme/policy.policy/acme-only"},
    ]
    result = ask(scoped, ADA, steps=steps).json()
    assert result["status"] == "completed", result
    assert recorded.systems()[0] == "Acme house style."
    foreign = ask(scoped, EVE, steps=steps).json()  # eve of globex names acme's
    assert foreign["status"] == "failed" and [s["status"] for s in foreign["steps"]] == ["FAILED", "PENDING"]
    assert foreign["error"] == ("step 1: promptConfigName: not found: am7://acme/prompt.config/house (status 404)")
    gate = ask(scoped, EVE, steps=[{"stepType": "POLICY_GATE", "policyName": "acme-only"}]).json()
    assert gate["error"] == "step 1: no policy named 'acme-only'; known: ['no-secrets']"


def test_permissions_decide_tools_vectors_and_data(scoped: TestClient) -> None:
    run_leak = {"steps": [{"stepType": "TOOL", "toolName": "leak", "inputs": {"topic": "x"}}]}
    assert ask(scoped, ADA, **run_leak).json()["status"] == "completed"  # no permissions: as before
    denied = ask(scoped, KID, **run_leak).json()
    assert denied["status"] == "failed" and denied["steps"][0]["status"] == "FAILED"
    assert denied["error"] == "step 1: forbidden: tool 'leak' is not in this caller's tools permissions (status 403)"

    assert_error(
        ask(scoped, KID, dataReferences=[ATLAS]),
        403,
        f"dataReferences: forbidden: {ATLAS} is not in this caller's data permissions (status 403)",
    )
    assert_error(
        ask(scoped, KID, dataReferences=["am7://globex/data.data/public-guide"]),
        404,
        "dataReferences: not found: am7://globex/data.data/public-guide",
    )
    search = {"steps": [{"stepType": "RAG_QUERY", "ragQuery": "Paris capital museums"}]}
    everything = ask(scoped, ADA, **search).json()["steps"][0]["summary"]
    permitted = ask(scoped, KID, **search).json()["steps"][0]["summary"]
    assert everything.startswith("2 result(s)") and permitted.startswith("1 result(s)")
    scoped_search = {"steps": [{"stepType": "RAG_QUERY", "ragQuery": "Paris", "vectorReferenceUri": ATLAS}]}
    assert "forbidden: document am7://acme/data.data/atlas" in ask(scoped, KID, **scoped_search).json()["error"]


def test_the_result_carries_the_chains_chat_config_and_its_characters(scoped: TestClient) -> None:
    result = ask(scoped, ADA, chatConfigUri="am7://acme/chat.config/studio").json()
    assert result["chatConfigId"] == "studio"
    assert result["systemCharacter"] == {
        "uri": "am7://acme/olio.charPerson/aria",
        "objectId": "aria",
        "name": "Aria",
        "description": "A patient guide.",
        "attributes": {"voice": "warm"},
    }
    assert result["userCharacter"]["uri"] == "am7://acme/olio.charPerson/sam"
    assert result["chatHistory"]["messages"][-1] == {"role": "assistant", "content": "Paris."}
    shared = ask(scoped, EVE).json()  # no chat config named: the shared default, with the shared guide
    assert (
        shared["chatConfigId"] == "default"
        and shared["systemCharacter"]["uri"] == "am7://globex/olio.charPerson/guide"
        and shared["userCharacter"] is None
    )
    assert_error(
        ask(scoped, KID, chatConfigName="studio"),
        403,
        "chat config 'studio': systemCharacter: forbidden: character am7://acme/olio.charPerson/aria",
    )


def test_steps_read_the_characters_and_the_character_tools(scoped: TestClient) -> None:
    result = ask(
        scoped,
        ADA,
        chatConfigName="studio",
        steps=[
            {"stepType": "TOOL", "toolName": "lookup", "inputs": {"topic": "{{systemCharacter.name}}"}},
            {
                "stepType": "TOOL",
                "toolName": "getCharacter",
                "inputs": {"uri": "am7://acme/olio.charPerson/sam"},
                "outputName": "sam",
            },
            {"stepType": "TOOL", "toolName": "findCharacters", "inputs": {"query": "guide"}},
        ],
    ).json()
    assert result["status"] == "completed", result
    assert [s["summary"] for s in result["steps"]][0] == "lookup returned facts about Aria"
    assert "'name': 'Sam'" in result["steps"][1]["summary"]
    assert "'uri': 'am7://acme/olio.charPerson/aria'" in result["steps"][2]["summary"]
    foreign = ask(
        scoped,
        EVE,
        steps=[{"stepType": "TOOL", "toolName": "getCharacter", "inputs": {"uri": "am7://acme/olio.charPerson/aria"}}],
    ).json()
    assert "not found: am7://acme/olio.charPerson/aria (status 404)" in foreign["error"]
    denied = ask(  # ann may run every tool, and read only the guide's and sam's records
        scoped,
        {"Authorization": "Bearer tok-ann"},
        steps=[{"stepType": "TOOL", "toolName": "getCharacter", "inputs": {"uri": "am7://acme/olio.charPerson/aria"}}],
    ).json()
    assert "forbidden: character am7://acme/olio.charPerson/aria" in denied["error"]


# -- the YAML configuration ----------------------------------------------------------------


def write(tmp_path: Path, data: dict[str, Any]) -> Path:
    path = tmp_path / "service.yaml"
    path.write_text(json.dumps(data), encoding="utf-8")  # JSON is YAML
    return path


def test_the_yaml_configuration_has_shared_and_per_organization_resources(tmp_path: Path) -> None:
    config = load_service_config(
        write(
            tmp_path,
            {
                "prompt_configs": {"brief": {"system": "Shared."}},
                "characters": {"guide": {"name": "Guide"}},
                "chat_configs": {"casual": {"protocol": "openai-chat", "system_character": "guide"}},
                "organizations": {
                    "acme": {
                        "prompt_configs": {"brief": {"system": "Acme."}},
                        "characters": {"aria": {"name": "Aria", "attributes": {"voice": "warm"}}},
                        "chat_configs": {"studio": {"system_character": "aria", "user_character": "guide"}},
                        "policies": [NO_SECRETS],
                    }
                },
            },
        )
    )
    service = ChainService(config)
    acme = service.resources(TokenAuth.from_json(TOKENS).authenticate("Bearer tok-ada"))
    globex = service.resources(TokenAuth.from_json(TOKENS).authenticate("Bearer tok-eve"))
    assert acme.prompt_configs["brief"].system == "Acme." and globex.prompt_configs["brief"].system == "Shared."
    assert set(acme.chat_configs) == {"default", "casual", "studio"} and set(globex.chat_configs) == {
        "default",
        "casual",
    }
    assert set(acme.policies) == {"no-secrets"} and globex.policies == {}
    assert set(acme.characters) == {"guide", "aria"} and set(globex.characters) == {"guide"}
    config.store.close()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            {"chat_configs": {"casual": {"system_character": "ghost"}}},
            "chat_configs.casual.system_character: no character named 'ghost'; known: []",
        ),
        (
            {"organizations": {"acme": {"chat_configs": {"s": {"user_character": "am7://acme/data.data/x"}}}}},
            "organizations.acme.chat_configs.s.user_character: expected am7://<organization>/olio.charPerson/<name>",
        ),
        ({"organizations": {"acme": {"tools": {}}}}, "organizations.acme.tools"),
    ],
)
def test_a_bad_organization_section_says_where(tmp_path: Path, data: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match="service.yaml: ") as caught:
        load_service_config(write(tmp_path, data))
    assert message in str(caught.value)


def test_a_token_with_bad_permissions_is_refused_naming_it() -> None:
    with pytest.raises(ValueError, match=r"tokens: token tok-…: permissions.tools: expected a list"):
        TokenAuth.from_json({"tok-x": {"user": "x", "organization": "acme", "permissions": {"tools": "lookup"}}})


# -- the MCP door --------------------------------------------------------------------------


@pytest.mark.anyio
async def test_mcp_scopes_configs_and_checks_permissions(tmp_path: Path) -> None:
    """Over streamable HTTP with the SDK's client: acme's own prompt config is acme's
    alone (404 to globex, by either organization's URI), and a principal whose data
    permissions leave a document out is refused it (403)."""
    config = write(
        tmp_path,
        {
            "chat_configs": {"default": {"protocol": "anthropic-messages"}},
            "documents": {"acme": [{"uri": ATLAS, "text": "Paris is the capital of France."}]},
            "organizations": {"acme": {"prompt_configs": {"house": {"system": "Acme house style."}}}},
            "database": str(tmp_path / "plans.db"),
        },
    )
    app = mcp_asgi_app(
        service_from_file(str(config), http_client=mock_http_clients()),
        TokenAuth.from_json(TOKENS),
        transport_security=LOOPBACK_SECURITY,
    )
    execute = "am7_chain_execute"
    async with serving(app) as base:
        async with http_mcp(f"{base}/mcp", "tok-ada") as ada:
            done = await ada.ok(
                execute,
                query=answered("Paris.", ATLAS),
                chatConfigUri="am7://acme/chat.config/default",
                promptConfigUri="am7://acme/prompt.config/house",
                dataReferences=[ATLAS],
            )
            assert done["status"] == "completed" and done["output"] == "Paris."
            plan = await ada.read_plan(done["planUri"])
            assert plan["steps"][-1]["promptConfigName"] == "house"
        async with http_mcp(f"{base}/mcp", "tok-eve") as eve:
            for uri in ("am7://acme/prompt.config/house", "am7://globex/prompt.config/house"):
                assert (
                    await eve.refused(
                        execute, query="Hi", chatConfigUri="am7://globex/chat.config/default", promptConfigUri=uri
                    )
                    == f"promptConfigUri: not found: {uri} (status 404)"
                )
        async with http_mcp(f"{base}/mcp", "tok-kid") as kid:
            result = await kid.call(
                execute, query="Hi", chatConfigUri="am7://acme/chat.config/default", dataReferences=[ATLAS]
            )
            assert result.is_error and result.structured_content == {
                "status": 403,
                "detail": f"dataReferences: forbidden: {ATLAS} is not in this caller's data permissions (status 403)",
            }
