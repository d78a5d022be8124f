"""harness.systems.identity: an organization-scoped identity store (users, groups,
memberships) in SQLite, the SCIM 2.0 adapter every door uses (``scim2-models``
payloads and filters), SCIM bulk, discovery, and the identity tools for chain TOOL
steps (seed 001 §6.4)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from harness.systems.identity.store import DuplicateName, Member, SQLiteIdentityStore, StoredResource

if TYPE_CHECKING:
    from harness.systems.identity.adapter import ScimAdapter, scim_error
    from harness.systems.identity.bulk import run_bulk

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
# identity store from its start, but needs the models (most of a second of CPU) only
# once a SCIM request or an identity tool comes.
_LAZY = {
    "ScimAdapter": "harness.systems.identity.adapter",
    "scim_error": "harness.systems.identity.adapter",
    "run_bulk": "harness.systems.identity.bulk",
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_LAZY[name]), name)
    globals()[name] = value
    return value
