"""Organization isolation through every door (seed 001 §6.2; Group M
``testChainOrgScopingEnforced``): REST, WebSocket and MCP.

acme and globex each have their own prompt config ``house``, chat config ``studio``,
policy ``house-rule`` and character ``aria`` — the same names, different contents — and
their documents under the same id in ONE vector store both organizations are given.
Their plans share ids in one plan store. So each read below would give the other
organization's object if its organization filter were dropped: a test that only asks for
an object that exists nowhere proves nothing.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import MCPError
from mcp.client.subscriptions import ResourceUpdated, listen
from starlette.testclient import TestClient

from harness.systems.chain import (
    ChainPlan,
    Character,
    InMemoryVectorStore,
    Policy,
    PromptConfig,
    SQLitePlanStore,
    parse_context,
)
from harness.systems.service.app import create_app
from harness.systems.service.auth import TokenAuth
from harness.systems.service.core import ChainService, ChainServiceConfig
from harness.systems.service.resources import ChatConfig, OrganizationResources
from tests.harness.systems.service.mcp_support import http_mcp, planned_query, serving
from tests.harness.systems.service.service_support import HeldTool, scripted
from tests.harness.systems.service.test_org_scoping import Recorded
from tests.harness.systems.service.test_rest import assert_error

TOKENS = {"tok-ada": {"user": "ada", "organization": "acme"}, "tok-eve": {"user": "eve", "organization": "globex"}}
ADA, EVE = {"Authorization": "Bearer tok-ada"}, {"Authorization": "Bearer tok-eve"}
ACME_ATLAS, GLOBEX_ATLAS = "am7://acme/data.data/atlas", "am7://globex/data.data/atlas"


def own(name: str, rival: str, recorded: Recorded) -> OrganizationResources:
    """``name``'s resources: the same names as its rival's, its own contents; its policy
    denies a fact that names the rival."""
    rule = {"condition": "NONE", "patterns": [{"type": "expression", "check": "contains", "value": rival}]}
    return OrganizationResources(
        prompt_configs={"house": PromptConfig(f"{name} house style.")},
        chat_configs={"studio": ChatConfig(recorded.factory, "aria")},
        policies=[Policy.model_validate({"name": "house-rule", "rules": [rule]})],
        characters={"aria": Character(name="Aria", description=f"{name}'s Aria.")},
    )


class Two:
    """A service for acme and globex, sharing one vector store and one plan store."""

    def __init__(self) -> None:
        self.recorded = Recorded()
        self.held = HeldTool(lambda topic: f"facts about {topic}")
        documents = InMemoryVectorStore()
        documents.add_document(ACME_ATLAS, "Paris is the capital of France, says acme's atlas.")
        documents.add_document(GLOBEX_ATLAS, "Paris is where globex keeps its atlas of secrets.")
        self.config = ChainServiceConfig(
            client=self.recorded.factory,
            tools={"lookup": self.held},
            organizations={
                "acme": own("acme", "globex", self.recorded),
                "globex": own("globex", "acme", self.recorded),
            },
            vector_stores={"acme": documents, "globex": documents},
            store=SQLitePlanStore(),
        )
        self.service = ChainService(self.config)
        self.app = create_app(self.service, TokenAuth.from_json(TOKENS))

    def stored(self, plan_id: str, organization: str, name: str, **fields: Any) -> None:
        """A finished plan of ``organization``'s, put in the shared plan store."""
        plan = ChainPlan(object_id=plan_id, name=name, executed=True, **{"outcome": "completed", **fields})
        self.config.store.save(plan, organization)


@pytest.fixture
def two() -> Iterator[Two]:
    two = Two()
    try:
        yield two
    finally:
        two.held.release.set()
        two.config.store.close()


@pytest.fixture
def client(two: Two) -> Iterator[TestClient]:
    with TestClient(two.app) as client:
        try:
            yield client
        finally:
            two.held.release.set()  # before the loop closes: it waits for the tool's thread


def run(client: TestClient, headers: dict[str, str], steps: list[dict[str, Any]], **fields: Any) -> dict[str, Any]:
    response = client.post(
        "/chat/chain", json={"planQuery": scripted("Q", "Paris."), "steps": steps, **fields}, headers=headers
    )
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


# -- named resources: configs, policies, characters --------------------------------------


def test_a_prompt_config_of_the_same_name_is_each_organizations_own(client: TestClient, two: Two) -> None:
    answer = [{"stepType": "LLM", "inputs": {"prompt": "Answer."}, "promptConfigName": "house"}]
    for headers in (ADA, EVE):
        assert run(client, headers, answer)["status"] == "completed"
    assert two.recorded.systems()[0::2] == ["acme house style.", "globex house style."]  # answer, then routing
    foreign = run(client, ADA, [{**answer[0], "promptConfigName": "am7://globex/prompt.config/house"}])
    assert foreign["error"] == "step 1: promptConfigName: not found: am7://globex/prompt.config/house (status 404)"
    assert_error(
        client.post(
            "/chat/chain",
            json={"planQuery": "Q", "steps": answer, "promptConfigUri": "am7://globex/prompt.config/house"},
            headers=ADA,
        ),
        404,
        "promptConfigUri: not found: am7://globex/prompt.config/house",
    )


def test_a_policy_of_the_same_name_is_each_organizations_own(client: TestClient) -> None:
    gate = [{"stepType": "POLICY_GATE", "policyName": "house-rule", "inputs": {"fact": "a memo about globex"}}]
    assert run(client, ADA, gate)["status"] == "gated"  # acme's rule denies what names globex
    assert run(client, EVE, gate)["status"] == "completed"  # globex's denies what names acme
    foreign = run(client, ADA, [{**gate[0], "policyName": "am7://globex/policy.policy/house-rule"}])
    assert foreign["error"] == "step 1: policyName: not found: am7://globex/policy.policy/house-rule (status 404)"


def test_a_chat_config_and_character_of_the_same_name_are_each_organizations_own(client: TestClient) -> None:
    lookup = [{"stepType": "TOOL", "toolName": "lookup", "inputs": {"topic": "{{systemCharacter.description}}"}}]
    for headers, name in ((ADA, "acme"), (EVE, "globex")):
        result = run(client, headers, lookup, chatConfigName="studio")
        assert result["systemCharacter"]["uri"] == f"am7://{name}/olio.charPerson/aria"
        assert result["steps"][0]["summary"] == f"lookup returned facts about {name}'s Aria."
    assert_error(
        client.post(
            "/chat/chain",
            json={"planQuery": "Q", "steps": lookup, "chatConfigUri": "am7://globex/chat.config/studio"},
            headers=ADA,
        ),
        404,
        "chatConfigUri: not found: am7://globex/chat.config/studio",
    )
    found = run(client, ADA, [{"stepType": "TOOL", "toolName": "findCharacters", "inputs": {"query": ""}}])
    assert [(c["uri"], c["description"]) for c in found["output"]] == [
        ("am7://acme/olio.charPerson/aria", "acme's Aria.")
    ]
    foreign = run(
        client,
        ADA,
        [{"stepType": "TOOL", "toolName": "getCharacter", "inputs": {"uri": "am7://globex/olio.charPerson/aria"}}],
    )
    assert "not found: am7://globex/olio.charPerson/aria (status 404)" in foreign["error"]


# -- documents in one shared vector store ------------------------------------------------


def cited(result: dict[str, Any]) -> list[str]:
    (block,) = parse_context(result["output"]).blocks
    return [hit["uri"] for hit in block.data["results"]]


def test_a_search_finds_the_organizations_documents_only_in_a_store_it_shares(client: TestClient) -> None:
    search = [{"stepType": "RAG_QUERY", "ragQuery": "Paris atlas", "ragLimit": 5}]
    assert cited(run(client, ADA, search)) == [ACME_ATLAS]
    assert cited(run(client, EVE, search)) == [GLOBEX_ATLAS]
    scoped = run(client, ADA, [{**search[0], "vectorReferenceUri": GLOBEX_ATLAS}])
    assert scoped["status"] == "failed" and f"not found: {GLOBEX_ATLAS} (status 404" in scoped["error"]
    assert cited(run(client, ADA, [{**search[0], "vectorReferenceUri": ACME_ATLAS}])) == [ACME_ATLAS]
    assert_error(
        client.post("/chat/chain", json={"planQuery": "Q", "dataReferences": [GLOBEX_ATLAS]}, headers=ADA),
        404,
        f"dataReferences: not found: {GLOBEX_ATLAS}",
    )
    assert_error(
        client.post("/chat/chain", json={"planQuery": "Q", "dataReferences": ["am7://acme/data.data/x"]}, headers=ADA),
        404,
        "dataReferences: not found: am7://acme/data.data/x",
    )
    malformed = client.post("/chat/chain", json={"planQuery": "Q", "dataReferences": ["atlas"]}, headers=ADA)
    assert assert_error(malformed, 400).startswith("dataReferences: not an am7:// URI: 'atlas'")


# -- identity: the same user name in both organizations -----------------------------------


def test_identity_tools_in_a_chain_act_in_the_callers_organization(client: TestClient, two: Two) -> None:
    create = [{"stepType": "TOOL", "toolName": "createUser", "inputs": {"name": "sam"}, "outputName": "user"}]
    made = {name: run(client, headers, create) for name, headers in (("acme", ADA), ("globex", EVE))}
    assert {result["status"] for result in made.values()} == {"completed"}  # a name is unique per organization
    found = run(client, ADA, [{"stepType": "TOOL", "toolName": "findUsers", "inputs": {"filter": 'userName eq "sam"'}}])
    users = found["output"]["Resources"]
    assert len(users) == 1 and users[0]["userName"] == "sam"
    assert two.config.identity.get("acme", "User", users[0]["id"]) is not None
    assert two.config.identity.get("globex", "User", users[0]["id"]) is None


# -- plans under one id: REST and WebSocket ---------------------------------------------


def ws_status(client: TestClient, headers: dict[str, str], kind: str, plan_id: str) -> dict[str, Any]:
    with client.websocket_connect("/chat/chain/ws", headers={**headers}) as socket:
        assert socket.receive_json()["type"] == "authenticated"
        socket.send_json({"type": kind, "planId": plan_id})
        message: dict[str, Any] = socket.receive_json()
        return message


def test_a_plan_id_both_organizations_use_reads_as_each_ones_own(client: TestClient, two: Two) -> None:
    mine = run(client, ADA, [{"stepType": "TOOL", "toolName": "lookup", "inputs": {"topic": "x"}}])
    plan_id = mine["planId"]
    two.stored(plan_id, "globex", "globex's", outcome="failed", error="globex's own plan failed")
    acme = client.get(f"/chat/chain/status/{plan_id}", headers=ADA).json()
    globex = client.get(f"/chat/chain/status/{plan_id}", headers=EVE).json()
    assert (acme["status"], acme["error"], acme["planUri"]) == ("completed", None, f"am7://acme/tool.plan/{plan_id}")
    assert (globex["status"], globex["error"]) == ("failed", "globex's own plan failed")
    assert globex["planUri"] == f"am7://globex/tool.plan/{plan_id}"
    assert ws_status(client, EVE, "status", plan_id) == {"type": "status", **globex}
    assert ws_status(client, ADA, "status", plan_id) == {"type": "status", **acme}
    acme_only = run(client, ADA, [{"stepType": "TOOL", "toolName": "lookup", "inputs": {"topic": "y"}}])["planId"]
    for unknown in (acme_only, "no-such-plan"):  # the same words for both: nothing is confirmed
        detail = assert_error(client.get(f"/chat/chain/status/{unknown}", headers=EVE), 404)
        assert detail == f"not found: am7://globex/tool.plan/{unknown}"


def test_a_running_chain_is_not_seen_nor_cancelled_by_the_organization_with_a_plan_of_its_id(
    client: TestClient, two: Two
) -> None:
    two.held.hold()
    with client.websocket_connect("/chat/chain/ws", headers={**ADA}) as socket:
        assert socket.receive_json()["type"] == "authenticated"
        socket.send_json({"type": "chain", "planQuery": "Q", "steps": [{"stepType": "TOOL", "toolName": "lookup"}]})
        started = socket.receive_json()
        assert started["type"] == "chainStarted"
        plan_id = started["planId"]
        two.held.wait_for_calls()
        two.stored(plan_id, "globex", "globex's")
        assert client.get(f"/chat/chain/status/{plan_id}", headers=ADA).json()["status"] == "running"
        assert client.get(f"/chat/chain/status/{plan_id}", headers=EVE).json()["status"] == "completed"
        cancelled = ws_status(client, EVE, "cancel", plan_id)
        assert (cancelled["type"], cancelled["status"]) == ("status", "completed")  # globex's, as it was
        with client.websocket_connect("/chat/chain/ws", headers={**EVE}) as watcher:
            assert watcher.receive_json()["type"] == "authenticated"
            watcher.send_json({"type": "watch", "planId": plan_id})
            two.held.release.set()
            heard = watcher.receive_json()  # globex's finished plan at once
            assert (heard["type"], heard["name"], heard["status"]) == ("chainResult", "globex's", "completed")
            while (message := socket.receive_json()).get("type") != "chainResult":
                pass
            # acme's chain has ended, every event sent: none of them reached globex's watcher.
            watcher.send_json({"type": "status", "planId": plan_id})
            assert watcher.receive_json()["type"] == "status"
    assert message["status"] == "failed"  # acme's ran on: the step ran (no topic given), not cancelled
    assert message["error"].startswith("step 1: tool 'lookup'")


def test_the_owner_hears_and_cancels_its_running_chain_from_another_connection(client: TestClient, two: Two) -> None:
    """The organization's own keys work too: another of acme's connections watches the
    chain (its events, then its result) and cancels it."""
    two.held.hold()
    steps = [{"stepType": "TOOL", "toolName": "lookup", "inputs": {"topic": "x"}}]
    with client.websocket_connect("/chat/chain/ws", headers={**ADA}) as socket:
        assert socket.receive_json()["type"] == "authenticated"
        socket.send_json({"type": "chain", "planQuery": "Q", "steps": steps})
        plan_id = socket.receive_json()["planId"]
        two.held.wait_for_calls()
        with client.websocket_connect("/chat/chain/ws", headers={**ADA}) as watcher:
            assert watcher.receive_json()["type"] == "authenticated"
            watcher.send_json({"type": "watch", "planId": plan_id})
            watcher.send_json({"type": "cancel", "planId": plan_id})
            assert watcher.receive_json()["type"] == "status"
            two.held.release.set()
            heard = []
            while (message := watcher.receive_json()).get("type") != "chainResult":
                heard.append(message["chirps"][1])
            assert message["status"] == "cancelled" and "chainCancelled" in heard


# -- plans under one id: MCP resources, the status tool, subscriptions ------------------


@pytest.mark.anyio
async def test_mcp_lists_reads_and_subscribes_each_organizations_own_plans() -> None:
    two = Two()
    two.stored("shared-id", "acme", "acme's")
    two.stored("shared-id", "globex", "globex's", outcome="failed", error="globex's own plan failed")
    two.stored("globex-only", "globex", "globex's second")
    try:
        async with serving(two.app) as base:
            async with http_mcp(f"{base}/mcp", "tok-ada") as ada, http_mcp(f"{base}/mcp", "tok-eve") as eve:
                resources = (await ada.session.list_resources()).resources
                assert {r.uri for r in resources} == {"am7://acme/tool.plan/shared-id"}  # not globex's ids
                assert {r.mime_type for r in resources} == {"application/json"}
                assert {r.uri for r in (await eve.session.list_resources()).resources} == {
                    "am7://globex/tool.plan/shared-id",
                    "am7://globex/tool.plan/globex-only",
                }
                assert (await ada.read_plan("am7://acme/tool.plan/shared-id"))["name"] == "acme's"
                assert (await eve.read_plan("am7://globex/tool.plan/shared-id"))["name"] == "globex's"
                status = await eve.ok("am7_chain_status", planUri="am7://globex/tool.plan/shared-id")
                assert (status["status"], status["error"]) == ("failed", "globex's own plan failed")
                assert (await ada.ok("am7_chain_status", planUri="am7://acme/tool.plan/shared-id"))["error"] is None
                for uri in ("am7://acme/tool.plan/globex-only", "am7://globex/tool.plan/shared-id"):
                    with pytest.raises(MCPError, match="not found") as caught:
                        await ada.session.read_resource(uri)
                    assert caught.value.data == {"uri": uri, "status": 404, "detail": f"not found: {uri}"}
                    with pytest.raises(MCPError, match="not found"):
                        await ada.subscribe(uri)
                    refused = await ada.call("am7_chain_status", planUri=uri)
                    assert refused.is_error and isinstance(refused.content[0], types.TextContent)
                    assert "not found" in refused.content[0].text
                await ada.subscribe("am7://acme/tool.plan/shared-id")  # its own: accepted
                with pytest.raises(MCPError, match="not an am7:// URI: 'shared-id'"):
                    await ada.session.read_resource("shared-id")
    finally:
        two.config.store.close()


@pytest.mark.anyio
async def test_mcp_notifies_the_owner_of_its_running_chain() -> None:
    two = Two()
    two.held.hold()
    lookup = [{"stepType": "TOOL", "toolName": "lookup", "inputs": {"topic": "x"}}]
    try:
        async with serving(two.app) as base, http_mcp(f"{base}/mcp", "tok-ada") as ada:
            started = await ada.ok(
                "am7_chain_execute",
                query=planned_query("Q", lookup),
                chatConfigUri="am7://acme/chat.config/studio",
                wait=False,
            )
            uri = started["planUri"]
            two.stored(uri.rsplit("/", 1)[1], "globex", "globex's")  # its id in globex too
            await ada.subscribe(uri)
            await ada.notifications_ready()
            await anyio.to_thread.run_sync(two.held.wait_for_calls)
            two.held.release.set()
            assert await ada.updates.next(uri) == uri
    finally:
        two.held.release.set()
        two.config.store.close()


@pytest.mark.anyio
async def test_a_2026_listen_stream_takes_only_the_organizations_own_plans() -> None:
    """``subscriptions/listen`` (the 2026-07-28 protocol): another organization's URI is
    refused though the caller's organization has a plan of that id; the owner hears it."""
    two = Two()
    two.held.hold()
    lookup = [{"stepType": "TOOL", "toolName": "lookup", "inputs": {"topic": "x"}}]
    try:
        async with serving(two.app) as base:
            url = f"{base}/mcp"
            async with http_mcp(url, "tok-ada", modern=True) as ada, http_mcp(url, "tok-eve", modern=True) as eve:
                started = await ada.ok(
                    "am7_chain_execute",
                    query=planned_query("Q", lookup),
                    chatConfigUri="am7://acme/chat.config/studio",
                    wait=False,
                )
                uri = started["planUri"]
                two.stored(uri.rsplit("/", 1)[1], "globex", "globex's")
                with pytest.raises(MCPError, match=f"not found: {uri}"):
                    async with listen(eve.session, resource_subscriptions=[uri]):
                        pass
                async with listen(ada.session, resource_subscriptions=[uri]) as changes:
                    await anyio.to_thread.run_sync(two.held.wait_for_calls)
                    two.held.release.set()
                    with anyio.fail_after(15):
                        async for change in changes:
                            assert change == ResourceUpdated(uri)
                            if (await ada.read_plan(uri))["executed"]:
                                break
    finally:
        two.held.release.set()
        two.config.store.close()


def test_plans_stored_by_the_doors_keep_their_organization(client: TestClient, two: Two) -> None:
    """A chain run through REST is stored under the caller's organization, not beside it."""
    done = run(client, EVE, [{"stepType": "TOOL", "toolName": "lookup", "inputs": {"topic": "x"}}])
    assert two.config.store.list_ids("globex") == [done["planId"]] and two.config.store.list_ids("acme") == []
    stored = two.config.store.load(done["planId"], "globex")
    assert stored is not None and json.loads(stored.to_json())["executed"] is True
