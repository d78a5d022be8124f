"""The /scim/v2 endpoints as a SCIM client sees them: SCIM JSON, pagination and
filters, and SCIM error bodies for every refusal — 400 for bad bodies (never 500),
401 without a token, 404 for another organization's resource (never 403), 405, 409."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from starlette.testclient import TestClient

from tests.harness.systems.service.service_support import ADA, EVE

USER = "urn:ietf:params:scim:schemas:core:2.0:User"
ERROR = "urn:ietf:params:scim:api:messages:2.0:Error"


def assert_scim_error(response: httpx.Response, status: int, scim_type: str | None = None, *phrases: str) -> str:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/scim+json"
    body = response.json()
    assert body["schemas"] == [ERROR] and body["status"] == str(status), body
    assert body.get("scimType") == scim_type, body
    for phrase in phrases:
        assert phrase in body["detail"], body
    return str(body["detail"])


def create(client: TestClient, name: str, headers: dict[str, str] = ADA, **attributes: Any) -> dict[str, Any]:
    response = client.post("/scim/v2/Users", json={"schemas": [USER], "userName": name, **attributes}, headers=headers)
    assert response.status_code == 201, response.text
    assert response.headers["location"] == response.json()["meta"]["location"]
    return dict(response.json())


def test_pagination_and_filter(client: TestClient) -> None:
    for name in ("cy", "ada", "bo", "dee"):
        create(client, name, title="engineer" if name != "bo" else "manager")
    page = client.get(
        "/scim/v2/Users",
        params={"filter": 'title eq "engineer"', "sortBy": "userName", "startIndex": 2, "count": 1},
        headers=ADA,
    ).json()
    assert (page["totalResults"], page["startIndex"], page["itemsPerPage"]) == (3, 2, 1)
    assert [u["userName"] for u in page["Resources"]] == ["cy"]
    narrowed = client.get("/scim/v2/Users", params={"attributes": "userName"}, headers=ADA).json()
    assert all(set(u) == {"schemas", "id", "userName"} for u in narrowed["Resources"])


def test_another_organizations_user_is_404_for_every_method(client: TestClient) -> None:
    theirs = create(client, "eve", EVE)
    path = f"/scim/v2/Users/{theirs['id']}"
    unknown = assert_scim_error(client.get("/scim/v2/Users/no-such-id", headers=ADA), 404)
    assert assert_scim_error(client.get(path, headers=ADA), 404) == unknown.replace("no-such-id", theirs["id"])
    assert_scim_error(client.put(path, json={"schemas": [USER], "userName": "x"}, headers=ADA), 404)
    patch = {
        "schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
        "Operations": [{"op": "replace", "path": "title", "value": "owned"}],
    }
    assert_scim_error(client.patch(path, json=patch, headers=ADA), 404)
    assert_scim_error(client.delete(path, headers=ADA), 404)
    assert client.get("/scim/v2/Users", headers=ADA).json()["totalResults"] == 0
    assert client.get(path, headers=EVE).json()["userName"] == "eve"  # untouched


@pytest.mark.parametrize(
    ("body", "scim_type", "phrase"),
    [
        (b"{not json", "invalidSyntax", "not valid JSON"),
        (b"[1, 2]", "invalidSyntax", "must be a JSON object"),
        (b'{"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"]}', "invalidValue", "userName"),
        (b'{"userName": "x", "emails": [{"value": "not an email"}]}', "invalidValue", "emails"),
    ],
)
def test_a_bad_body_is_a_400_scim_error(client: TestClient, body: bytes, scim_type: str, phrase: str) -> None:
    response = client.post("/scim/v2/Users", content=body, headers={**ADA, "content-type": "application/scim+json"})
    assert_scim_error(response, 400, scim_type, phrase)


def test_bad_patch_filter_and_bulk_are_400s(client: TestClient) -> None:
    user = create(client, "ada")
    assert_scim_error(
        client.patch(f"/scim/v2/Users/{user['id']}", json={"Operations": "nope"}, headers=ADA),
        400,
        "invalidValue",
        "Operations",
    )
    assert_scim_error(client.get("/scim/v2/Users", params={"filter": "userName eq"}, headers=ADA), 400, "invalidFilter")
    assert_scim_error(client.post("/scim/v2/Bulk", json={"Operations": 3}, headers=ADA), 400, "invalidSyntax")


def test_a_taken_user_name_is_409_uniqueness(client: TestClient) -> None:
    create(client, "ada")
    assert_scim_error(
        client.post("/scim/v2/Users", json={"schemas": [USER], "userName": "ADA"}, headers=ADA),
        409,
        "uniqueness",
        "already taken",
    )
    create(client, "ada", EVE)  # another organization may have its own ada


def test_refusals_without_a_token_unknown_routes_and_methods(client: TestClient) -> None:
    response = client.get("/scim/v2/Users")
    assert_scim_error(response, 401, None, "bearer token")
    assert response.headers["www-authenticate"] == "Bearer"
    assert_scim_error(client.get("/scim/v2/Users", headers={"Authorization": "Bearer nope"}), 401)
    assert_scim_error(client.get("/scim/v2/Pets", headers=ADA), 404, None, "/scim/v2/Pets")
    assert_scim_error(client.get("/scim/v2/Users/1/extra", headers=ADA), 404)
    response = client.delete("/scim/v2/Users", headers=ADA)
    assert_scim_error(response, 405, None, "DELETE is not allowed")
    assert response.headers["allow"] == "GET, POST"


def test_discovery(client: TestClient) -> None:
    config = client.get("/scim/v2/ServiceProviderConfig", headers=ADA).json()
    assert config["patch"]["supported"] and config["bulk"]["supported"] and config["filter"]["supported"]
    types = client.get("/scim/v2/ResourceTypes", headers=ADA).json()
    assert sorted(r["endpoint"] for r in types["Resources"]) == ["/Groups", "/Users"]
    schema = client.get(f"/scim/v2/Schemas/{USER}", headers=ADA).json()
    assert schema["id"] == USER and any(a["name"] == "userName" for a in schema["attributes"])
