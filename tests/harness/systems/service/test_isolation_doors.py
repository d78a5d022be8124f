"""The organization's own named objects through the WebSocket and MCP doors (seed 001
§6.2; Group M ``testChainOrgScopingEnforced``), as ``test_isolation.py`` holds them
through REST: acme and globex each have a prompt config ``house``, a chat config
``studio`` naming a character ``aria`` of its own, a policy ``house-rule`` and a
document ``atlas`` in one shared vector store, and each creates a user ``sam``. Each
chain, run by either organization through either door, gets that organization's object
of the name — never the other's, which is present under the same name.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient

from tests.harness.systems.service.mcp_support import http_mcp, planned_query, serving
from tests.harness.systems.service.service_support import scripted
from tests.harness.systems.service.test_isolation import ACME_ATLAS, EVE, GLOBEX_ATLAS, Two, cited
from tests.harness.systems.service.test_isolation import ADA as ADA_HEADERS

RIVAL = {"acme": "globex", "globex": "acme"}
ATLAS = {"acme": ACME_ATLAS, "globex": GLOBEX_ATLAS}
ANSWER = [{"stepType": "LLM", "inputs": {"prompt": "Answer."}, "promptConfigName": "house"}]
GATE = [{"stepType": "POLICY_GATE", "policyName": "house-rule", "inputs": {"fact": "a memo about globex"}}]
CHARACTERS = [{"stepType": "TOOL", "toolName": "findCharacters", "inputs": {"query": ""}}]
CHAT = [{"stepType": "TOOL", "toolName": "lookup", "inputs": {"topic": "{{systemCharacter.description}}"}}]
SEARCH = [{"stepType": "RAG_QUERY", "ragQuery": "Paris atlas", "ragLimit": 5}]
USERS = [
    {"stepType": "TOOL", "toolName": "createUser", "inputs": {"name": "sam"}},
    {"stepType": "TOOL", "toolName": "findUsers", "inputs": {"filter": 'userName eq "sam"'}},
]

Run = Callable[[str, list[dict[str, Any]]], Awaitable[dict[str, Any]]]
"""Runs ``steps`` as the organization's user through one door; the chain's result."""


async def each_organization_gets_its_own(two: Two, run: Run) -> None:
    for name, rival in RIVAL.items():
        asked = len(two.recorded.bodies)
        assert (await run(name, ANSWER))["status"] == "completed"
        systems = two.recorded.systems()[asked:]
        assert f"{name} house style." in systems and f"{rival} house style." not in systems

        # acme's rule denies a fact naming globex; globex's denies one naming acme
        assert (await run(name, GATE))["status"] == ("gated" if name == "acme" else "completed")

        # the chat config "studio" each names its own system character "aria"
        assert (await run(name, CHAT))["steps"][0]["summary"] == f"lookup returned facts about {name}'s Aria."

        found = (await run(name, CHARACTERS))["output"]
        assert [(c["uri"], c["description"]) for c in found] == [
            (f"am7://{name}/olio.charPerson/aria", f"{name}'s Aria.")
        ]

        assert cited(await run(name, SEARCH)) == [ATLAS[name]]

        users = await run(name, USERS)  # a name is unique per organization: both create sam
        assert users["status"] == "completed", users.get("error")
        (sam,) = users["output"]["Resources"]
        assert two.config.identity.get(name, "User", sam["id"]) is not None
        assert two.config.identity.get(rival, "User", sam["id"]) is None


@pytest.fixture
def two() -> Iterator[Two]:
    two = Two()
    try:
        yield two
    finally:
        two.config.store.close()


@pytest.mark.anyio
async def test_the_mcp_door_gives_each_organization_its_own_objects_of_a_shared_name(two: Two) -> None:
    async with serving(two.app) as base:
        url = f"{base}/mcp"
        async with http_mcp(url, "tok-ada") as ada, http_mcp(url, "tok-eve") as eve:
            clients = {"acme": ada, "globex": eve}

            async def run(name: str, steps: list[dict[str, Any]]) -> dict[str, Any]:
                replies = ("ok", '{"complete": true}') if steps is ANSWER else ()
                result = await clients[name].call(
                    "am7_chain_execute",
                    query=planned_query("Q", steps, *replies),
                    chatConfigUri=f"am7://{name}/chat.config/studio",
                )
                assert isinstance(result.structured_content, dict), result.content
                return result.structured_content

            await each_organization_gets_its_own(two, run)


@pytest.mark.anyio
async def test_the_websocket_door_gives_each_organization_its_own_objects_of_a_shared_name(two: Two) -> None:
    headers = {"acme": ADA_HEADERS, "globex": EVE}
    with TestClient(two.app) as client:

        async def run(name: str, steps: list[dict[str, Any]]) -> dict[str, Any]:
            with client.websocket_connect("/chat/chain/ws", headers={**headers[name]}) as socket:
                assert socket.receive_json()["type"] == "authenticated"
                answers = ("ok",) if steps is ANSWER else ()
                request = {"planQuery": scripted("Q", *answers), "steps": steps, "chatConfigName": "studio"}
                socket.send_json({"type": "chain", **request})
                while (message := socket.receive_json()).get("type") != "chainResult":
                    assert message.get("type") != "error", message
                return message

        await each_organization_gets_its_own(two, run)
