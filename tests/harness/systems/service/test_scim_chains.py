"""Seed 001 Group M and §6.4 over real HTTP on 127.0.0.1: chains whose TOOL steps
create and change identity resources through the SCIM adapter, seen afterwards
through the SCIM endpoints; organization scoping (another organization's resource is
"not found", never "forbidden"); bulk in a step; a policy gate deciding on an
identity operation. (Group M's MCP cases — a plan read as an MCP resource,
``am7_chain_execute``, ``am7_chain_status``, URI-scoped RAG — are in test_mcp_http.py
and test_mcp_stdio.py.)"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import httpx
import pytest

from harness.systems.chain import Policy
from harness.systems.identity import ScimAdapter
from tests.harness.systems.service.service_support import ADA, EVE

if TYPE_CHECKING:
    from tests.harness.systems.service.service_support import LiveServer, ServiceBench

USER = "urn:ietf:params:scim:schemas:core:2.0:User"


def tool(tool_name: str, output: str | None = None, /, **inputs: Any) -> dict[str, Any]:
    return {"stepType": "TOOL", "toolName": tool_name, "inputs": inputs, "outputName": output or tool_name}


def run(live: LiveServer, steps: list[dict[str, Any]], headers: dict[str, str] = ADA) -> dict[str, Any]:
    response = httpx.post(
        f"{live.base_url}/chat/chain", json={"planQuery": "identity", "steps": steps}, headers=headers, timeout=30
    )
    assert response.status_code == 200, response.text
    return response.json()


def scim(live: LiveServer, method: str, path: str, headers: dict[str, str] = ADA, **kwargs: Any) -> httpx.Response:
    return httpx.request(method, f"{live.base_url}/scim/v2{path}", headers=headers, timeout=30, **kwargs)


def test_a_chain_creates_a_user_visible_through_scim(bench: ServiceBench, live: LiveServer) -> None:
    result = run(
        live,
        [
            tool(
                "createUser",
                "user",
                name="grace",
                attributes={
                    "displayName": "Grace Hopper",
                    "emails": [{"value": "grace@acme.example", "primary": True}],
                },
            )
        ],
    )
    assert result["status"] == "completed", result
    assert result["steps"][0]["summary"].startswith("createUser returned {'schemas': ")
    found = scim(live, "GET", '/Users?filter=userName eq "grace"').json()
    assert found["totalResults"] == 1
    user = scim(live, "GET", f"/Users/{found['Resources'][0]['id']}")
    assert user.status_code == 200 and user.headers["content-type"] == "application/scim+json"
    body = user.json()
    assert (body["userName"], body["displayName"], body["emails"][0]["value"]) == (
        "grace",
        "Grace Hopper",
        "grace@acme.example",
    )
    assert body["meta"]["location"] == f"{live.base_url}/scim/v2/Users/{body['id']}"
    # The same record through the store by its am7:// URI (the seed's AccessPoint read).
    record = ScimAdapter(bench.config.identity, "acme").get_uri(f"am7://acme/system.user/{body['id']}")
    assert record.user_name == "grace"
    # Created in the chain's organization only.
    assert scim(live, "GET", f"/Users/{body['id']}", EVE).status_code == 404


def test_a_chain_creates_a_group_and_adds_the_context_user(live: LiveServer) -> None:
    ada = scim(live, "POST", "/Users", json={"schemas": [USER], "userName": "ada"}).json()
    result = run(
        live,
        [
            tool("createGroup", "group", name="reviewers"),
            tool("findUsers", "me", filter='userName eq "ada"'),
            tool("addGroupMember", "membership", groupId="{{group}}", userId="{{me}}"),
        ],
    )
    assert result["status"] == "completed", result["error"]
    groups = scim(live, "GET", '/Groups?filter=displayName eq "reviewers"').json()["Resources"]
    group = scim(live, "GET", f"/Groups/{groups[0]['id']}").json()
    assert [(m["value"], m["type"], m["display"]) for m in group["members"]] == [(ada["id"], "User", "ada")]
    assert [g["display"] for g in scim(live, "GET", f"/Users/{ada['id']}").json()["groups"]] == ["reviewers"]


def test_a_reference_into_another_organization_fails_the_step_as_not_found(live: LiveServer) -> None:
    theirs = scim(live, "POST", "/Users", EVE, json={"schemas": [USER], "userName": "mallory"}).json()
    result = run(
        live,
        [
            tool("createGroup", "group", name="insiders"),
            tool("addGroupMember", groupId="{{group}}", userId=f"am7://globex/system.user/{theirs['id']}"),
        ],
    )
    assert result["status"] == "failed"
    assert [s["status"] for s in result["steps"]] == ["COMPLETED", "FAILED"]
    assert "not found: am7://globex/system.user/" in result["error"] and "status 404" in result["error"]
    assert "(status 403)" not in result["error"] and "forbidden" not in result["error"].lower()
    # The bare id of another organization's user reads the same as one that does not exist.
    bare = run(
        live,
        [
            tool("createGroup", "group", name="insiders2"),
            tool("addGroupMember", groupId="{{group}}", userId=theirs["id"]),
        ],
    )
    assert bare["status"] == "failed" and "not found" in bare["error"] and "status 404" in bare["error"]
    group = scim(live, "GET", '/Groups?filter=displayName eq "insiders"').json()["Resources"][0]
    assert "members" not in group
    # And globex's user is as it was: no group membership.
    assert "groups" not in scim(live, "GET", f"/Users/{theirs['id']}", EVE).json()


def test_a_bulk_step_provisions_users_and_a_group_referring_to_them(live: LiveServer) -> None:
    result = run(
        live,
        [
            tool(
                "scimBulk",
                "bulk",
                failOnErrors=1,
                operations=[
                    {
                        "method": "POST",
                        "path": "/Users",
                        "bulkId": "u1",
                        "data": {"schemas": [USER], "userName": "lin"},
                    },
                    {
                        "method": "POST",
                        "path": "/Users",
                        "bulkId": "u2",
                        "data": {"schemas": [USER], "userName": "kay"},
                    },
                    {"method": "POST", "path": "/Groups", "bulkId": "g", "data": {"displayName": "ops"}},
                    {
                        "method": "PATCH",
                        "path": "/Groups/bulkId:g",
                        "data": {
                            "schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
                            "Operations": [
                                {
                                    "op": "add",
                                    "path": "members",
                                    "value": [{"value": "bulkId:u1"}, {"value": "bulkId:u2"}],
                                }
                            ],
                        },
                    },
                ],
            )
        ],
    )
    assert result["status"] == "completed", result["error"]
    group = scim(live, "GET", '/Groups?filter=displayName eq "ops"').json()["Resources"][0]
    assert sorted(m["display"] for m in group["members"]) == ["kay", "lin"]


def test_a_failing_bulk_operation_fails_the_step_and_says_which(live: LiveServer) -> None:
    scim(live, "POST", "/Users", json={"schemas": [USER], "userName": "taken"})
    result = run(
        live,
        [
            tool(
                "scimBulk",
                operations=[
                    {
                        "method": "POST",
                        "path": "/Users",
                        "bulkId": "a",
                        "data": {"schemas": [USER], "userName": "fresh"},
                    },
                    {
                        "method": "POST",
                        "path": "/Users",
                        "bulkId": "b",
                        "data": {"schemas": [USER], "userName": "TAKEN"},
                    },
                ],
            )
        ],
    )
    assert result["status"] == "failed"
    assert "1 of 2 bulk operation(s) failed: operation 2 (POST)" in result["error"]
    assert "status 409" in result["error"]
    assert scim(live, "GET", '/Users?filter=userName eq "fresh"').json()["totalResults"] == 1


@pytest.mark.parametrize(
    ("email", "status", "members"), [("pat@acme.example", "completed", 1), ("pat@elsewhere.example", "gated", 0)]
)
def test_a_policy_gate_decides_on_an_identity_operation(
    bench: ServiceBench, live: LiveServer, email: str, status: str, members: int
) -> None:
    bench.config.policies.append(
        Policy.model_validate(
            {
                "name": "staff-only",
                "rules": [
                    {
                        "patterns": [
                            {"type": "expression", "check": "regex", "value": r'"totalResults": 1,'},
                            {"type": "expression", "check": "regex", "value": r'"value": "[^"]+@acme\.example"'},
                        ]
                    }
                ],
            }
        )
    )
    scim(live, "POST", "/Users", json={"schemas": [USER], "userName": "pat", "emails": [{"value": email}]})
    result = run(
        live,
        [
            tool("createGroup", "group", name="staff"),
            tool("findUsers", "candidate", filter='userName eq "pat"'),
            {"stepType": "POLICY_GATE", "policyName": "staff-only", "inputs": {"fact": "{{candidate}}"}},
            tool("addGroupMember", groupId="{{group}}", userId="{{candidate}}"),
        ],
    )
    assert result["status"] == status
    group = scim(live, "GET", '/Groups?filter=displayName eq "staff"').json()["Resources"][0]
    assert len(group.get("members", [])) == members
