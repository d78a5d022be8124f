"""harness.systems.identity: an organization-scoped identity store (users, groups,
memberships) in SQLite, the SCIM 2.0 adapter every door uses (``scim2-models``
payloads and filters), SCIM bulk, discovery, and the identity tools for chain TOOL
steps (seed 001 §6.4)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.systems.identity.store import DuplicateName, Member, SQLiteIdentityStore, StoredResource
from harness.systems.lazy_names import LazyNames

if TYPE_CHECKING:
    from harness.systems.identity.adapter import ScimAdapter as ScimAdapter
    from harness.systems.identity.adapter import scim_error as scim_error
    from harness.systems.identity.bulk import run_bulk as run_bulk

__all__ = [
    "DuplicateName",
    "Member",
    "SQLiteIdentityStore",
    "ScimAdapter",
    "StoredResource",
    "run_bulk",
    "scim_error",
]

# The names that import the SCIM models, imported when first used: a service holds an
# identity store from its start, but needs the models only once a SCIM request or an
# identity tool comes.
__getattr__ = LazyNames(__name__)
