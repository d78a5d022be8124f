"""The SCIM endpoints judged by scim2-tester, the independent RFC 7643/7644 checker,
over real HTTP on 127.0.0.1 with a chain service bearer token.

Every check must pass (SUCCESS, COMPLIANT or ACCEPTABLE). A deviation we accept is
listed in ``ACCEPTED`` with its reason, and in docs/scim.md; there are none today.
A check that newly fails (or an accepted one that starts passing, so the list can
shrink) fails this test, naming it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import httpx2
from scim2_client.engines.httpx2 import SyncSCIMClient
from scim2_tester import Status, check_server

if TYPE_CHECKING:
    from tests.harness.systems.service.service_support import LiveServer

PASSING = {Status.SUCCESS, Status.COMPLIANT, Status.ACCEPTABLE}
ACCEPTED: dict[tuple[str | None, str], str] = {}
"""(resource type, check title) -> why the deviation is accepted (see docs/scim.md)."""


def test_scim2_tester_finds_every_check_passing(live: LiveServer) -> None:
    with httpx2.Client(base_url=f"{live.base_url}/scim/v2", headers={"Authorization": "Bearer tok-ada"}) as http:
        results = check_server(SyncSCIMClient(http))
    assert len(results) >= 100, f"scim2-tester ran only {len(results)} checks"
    failing = {(r.resource_type, r.title): f"{r.status.name}: {r.reason}" for r in results if r.status not in PASSING}
    unexpected = {key: why for key, why in failing.items() if key not in ACCEPTED}
    assert not unexpected, "scim2-tester checks failing:\n" + "\n".join(f"{k}: {v}" for k, v in unexpected.items())
    fixed = sorted(set(ACCEPTED) - set(failing))
    assert not fixed, f"accepted deviations that now pass (drop them from ACCEPTED and docs/scim.md): {fixed}"
    assert {r.resource_type for r in results} >= {"User", "Group"}


def test_the_checker_sees_only_the_callers_organization(live: LiveServer) -> None:
    """What scim2-tester created as acme is not visible to globex."""
    with httpx2.Client(base_url=f"{live.base_url}/scim/v2", headers={"Authorization": "Bearer tok-ada"}) as http:
        created = http.post(
            "/Users", json={"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"], "userName": "checker"}
        ).json()
    with httpx2.Client(base_url=f"{live.base_url}/scim/v2", headers={"Authorization": "Bearer tok-eve"}) as http:
        assert http.get(f"/Users/{created['id']}").status_code == 404
        assert http.get("/Users").json()["totalResults"] == 0
