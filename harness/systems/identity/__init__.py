"""harness.systems.identity: an organization-scoped identity store (users, groups,
memberships) in SQLite, the SCIM 2.0 adapter every door uses (``scim2-models``
payloads and filters), SCIM bulk, discovery, and the identity tools for chain TOOL
steps (seed 001 §6.4)."""

from harness.systems.identity.adapter import ScimAdapter, scim_error
from harness.systems.identity.bulk import run_bulk
from harness.systems.identity.store import DuplicateName, Member, SQLiteIdentityStore, StoredResource

__all__ = [
    "DuplicateName",
    "Member",
    "SQLiteIdentityStore",
    "ScimAdapter",
    "StoredResource",
    "run_bulk",
    "scim_error",
]
