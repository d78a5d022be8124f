"""Identity tools for chain TOOL steps (seed 001 §6.4), bound to one organization.

=================================  ===============================  =====================
tool                               SCIM request it is               answers
=================================  ===============================  =====================
``createUser(name, attributes)``   ``POST /Users``                  the user
``updateUser(objectId, attributes  ``PATCH /Users/{id}``            the user
, operations)``
``createGroup(name, members)``     ``POST /Groups``                 the group
``addGroupMember(groupId,          ``PATCH /Groups/{id}`` (add      the group
userId)``                          ``members``)
``findUsers(filter, startIndex,    ``GET /Users?filter=…``          the ``ListResponse``
count)``
``scimBulk(operations,             ``POST /Bulk``                   the ``BulkResponse``
failOnErrors)``
=================================  ===============================  =====================

They call the same ``ScimAdapter`` as the endpoints, so mapping (``name`` is the
``userName`` / ``displayName``), validation and uniqueness are the same, and they see
only the chain's organization: an id, an ``am7://`` URI or a resource (a previous
step's output, ``{{user}}``) of another organization fails the step as "not found
(404)". Answers are the SCIM JSON the endpoint would send, so a later step (or a
POLICY_GATE) reads the same fields a SCIM client would.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from harness.exceptions import HarnessError
from harness.systems.identity.store import SQLiteIdentityStore

if TYPE_CHECKING:
    from scim2_models import SCIMException

    from harness.systems.identity.adapter import ScimAdapter

__all__ = ["IDENTITY_TOOL_NAMES", "IdentityToolError", "identity_tools"]

IDENTITY_TOOL_NAMES = ("createUser", "updateUser", "createGroup", "addGroupMember", "findUsers", "scimBulk")

_USER_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:User"
_GROUP_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:Group"
_PATCH_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:PatchOp"


class IdentityToolError(HarnessError):
    """An identity operation the SCIM layer refused; says the status, as an endpoint would."""

    def __init__(self, exc: SCIMException) -> None:
        scim_type = f", {exc.scim_type}" if exc.scim_type else ""
        super().__init__(f"{exc.detail} (status {exc.status}{scim_type})")
        self.status = exc.status
        self.scim_type = exc.scim_type


def identity_tools(store: SQLiteIdentityStore, organization: str) -> dict[str, Callable[..., Any]]:
    """The six identity tools over ``store``, scoped to ``organization``.

    Every chain is given them, few call them: the SCIM layer (its models are most of a
    second of CPU to import) is imported by the first call."""
    built: list[ScimAdapter] = []

    def scim(call: Callable[[ScimAdapter], Any]) -> Any:
        from scim2_models import SCIMException

        from harness.systems.identity.adapter import ScimAdapter

        if not built:
            built.append(ScimAdapter(store, organization))
        try:
            return call(built[0])
        except SCIMException as exc:
            raise IdentityToolError(exc) from exc

    def createUser(name: str, attributes: dict[str, Any] | None = None) -> dict[str, Any]:  # noqa: N802 - the seed's name
        """Create a user named ``name`` (its ``userName``) with more SCIM ``attributes``."""
        payload = {"schemas": [_USER_SCHEMA], **(attributes or {}), "userName": name}
        return scim(lambda adapter: adapter.dump(adapter.create("User", payload)))

    def updateUser(
        objectId: str | dict[str, Any],
        attributes: dict[str, Any] | None = None,  # noqa: N802, N803
        operations: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        """Replace each of ``attributes`` (and apply PatchOp ``operations``) on a user."""
        ops = [{"op": "replace", "path": path, "value": value} for path, value in (attributes or {}).items()]
        patch = {"schemas": [_PATCH_SCHEMA], "Operations": [*ops, *(operations or [])]}
        return scim(lambda adapter: adapter.dump(adapter.patch("User", adapter.resolve("User", objectId), patch)))

    def createGroup(name: str, members: list[str | dict[str, Any]] | None = None) -> dict[str, Any]:  # noqa: N802
        """Create a group named ``name`` (its ``displayName``) with ``members`` (users or groups)."""

        def run(adapter: ScimAdapter) -> dict[str, Any]:
            values = [{"value": _member(adapter, m)} for m in members or []]
            return adapter.dump(
                adapter.create("Group", {"schemas": [_GROUP_SCHEMA], "displayName": name, "members": values})
            )

        return scim(run)

    def addGroupMember(groupId: str | dict[str, Any], userId: str | dict[str, Any]) -> dict[str, Any]:  # noqa: N802, N803
        """Add a user to a group (``PATCH`` ``add`` on ``members``)."""

        def run(adapter: ScimAdapter) -> dict[str, Any]:
            group, user = adapter.resolve("Group", groupId), adapter.resolve("User", userId)
            patch = {
                "schemas": [_PATCH_SCHEMA],
                "Operations": [{"op": "add", "path": "members", "value": [{"value": user}]}],
            }
            return adapter.dump(adapter.patch("Group", group, patch))

        return scim(run)

    def findUsers(filter: str = "", startIndex: int = 1, count: int | None = None) -> dict[str, Any]:  # noqa: A002, N802, N803
        """The organization's users matching a SCIM ``filter`` (all without one)."""
        params: dict[str, Any] = {"startIndex": startIndex}
        if filter:
            params["filter"] = filter
        if count is not None:
            params["count"] = count

        def run(adapter: ScimAdapter) -> dict[str, Any]:
            from scim2_models import Context

            page, search = adapter.search("User", params)
            return page.model_dump(scim_ctx=Context.SEARCH_RESPONSE, response_parameters=search)

        return scim(run)

    def scimBulk(operations: list[dict[str, Any]], failOnErrors: int | None = None) -> dict[str, Any]:  # noqa: N802, N803
        """A SCIM bulk job; the step fails if any operation failed (the ones before it stay done)."""
        payload: dict[str, Any] = {
            "schemas": ["urn:ietf:params:scim:api:messages:2.0:BulkRequest"],
            "Operations": operations,
        }
        if failOnErrors is not None:
            payload["failOnErrors"] = failOnErrors
        from harness.systems.identity.bulk import run_bulk

        answer = scim(lambda adapter: run_bulk(adapter, payload))
        failed = [
            f"operation {i + 1} ({op.get('method')}): {op['response']['detail']} (status {op['status']})"
            for i, op in enumerate(answer["Operations"])
            if "response" in op
        ]
        if failed:
            raise RuntimeError(f"{len(failed)} of {len(operations)} bulk operation(s) failed: " + "; ".join(failed))
        return answer

    return {
        "createUser": createUser,
        "updateUser": updateUser,
        "createGroup": createGroup,
        "addGroupMember": addGroupMember,
        "findUsers": findUsers,
        "scimBulk": scimBulk,
    }


def _member(adapter: ScimAdapter, reference: str | dict[str, Any]) -> str:
    """A member reference: a user, else a group, of the adapter's organization."""
    if isinstance(reference, dict) and "Group" in str(reference.get("meta", {}).get("resourceType", "")):
        return adapter.resolve("Group", reference)
    if isinstance(reference, str) and reference.startswith("am7://") and "/auth.group/" in reference:
        return adapter.resolve("Group", reference)
    return adapter.resolve("User", reference)
