"""Seeding the identity store from a scenario file's ``identity:`` section.

The section maps organizations to the users and groups they start with, as SCIM
payloads (``schemas`` may be left out)::

    identity:
      default:                      # the organization a scenario's chain runs in
        users:
          - {userName: ada, emails: [{value: ada@acme.example}]}
        groups:
          - {displayName: reviewers, members: [{value: ada}]}   # a seeded userName or group name
      globex:
        users: [{userName: mallory}]

Seeding goes through the SCIM adapter, so a seed is validated as a ``POST`` would be.
Ids are ``user-1``, ``user-2``…, ``group-1``… in the order written (organizations in
order too) and every time is 2026-01-01T00:00:00Z, so a replay is the same every run.
"""

from __future__ import annotations

import itertools
import weakref
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator
from scim2_models import SCIMException

from harness.systems.identity.adapter import ScimAdapter
from harness.systems.identity.store import ResourceKind, SQLiteIdentityStore
from harness.systems.identity.tools import identity_tools

__all__ = ["SCENARIO_TIME", "OrganizationSeed", "scenario_identity_store", "seeded_identity_tools"]

SCENARIO_TIME = datetime(2026, 1, 1, tzinfo=UTC)
_SCHEMAS = {
    "User": "urn:ietf:params:scim:schemas:core:2.0:User",
    "Group": "urn:ietf:params:scim:schemas:core:2.0:Group",
}


class OrganizationSeed(BaseModel):
    """One organization's users and groups (SCIM payloads); each is checked as a
    ``POST`` would be when the scenario file loads."""

    model_config = ConfigDict(extra="forbid")

    users: list[dict[str, Any]] = Field(default_factory=list)
    groups: list[dict[str, Any]] = Field(default_factory=list)

    @model_validator(mode="after")
    def _seeds_as_scim(self) -> OrganizationSeed:
        with SQLiteIdentityStore() as store:
            _seed(store, "check", self)
        return self


def _seed(store: SQLiteIdentityStore, organization: str, entries: OrganizationSeed) -> None:
    """Create ``entries`` in ``organization``; a refused entry is a ``ValueError`` naming it."""
    adapter = ScimAdapter(store, organization)
    names: dict[str, str] = {}
    for kind, payloads in (("User", entries.users), ("Group", entries.groups)):
        for index, payload in enumerate(payloads):
            data = {"schemas": [_SCHEMAS[kind]], **payload}
            if kind == "Group" and isinstance(payload.get("members"), list):
                data["members"] = [
                    {**m, "value": names.get(str(m.get("value")), m.get("value"))} if isinstance(m, dict) else m
                    for m in payload["members"]
                ]
            try:
                resource = adapter.create(kind, data)  # type: ignore[arg-type]
            except SCIMException as exc:
                raise ValueError(f"{kind.lower()}s[{index}]: {exc.detail}") from exc
            assert resource.id is not None
            names[str(payload.get("userName") or payload.get("displayName"))] = resource.id


def scenario_identity_store(seed: dict[str, OrganizationSeed]) -> SQLiteIdentityStore:
    """A fresh in-memory store with deterministic ids and times, holding ``seed``."""
    counters: dict[str, itertools.count[int]] = {}

    def ids(kind: ResourceKind) -> str:
        return f"{kind.lower()}-{next(counters.setdefault(kind, itertools.count(1)))}"

    store = SQLiteIdentityStore(ids=ids, clock=lambda: SCENARIO_TIME)
    for organization, entries in seed.items():
        _seed(store, organization, entries)
    return store


def seeded_identity_tools(
    seed: dict[str, OrganizationSeed] | None, organization: str = "default"
) -> dict[str, Callable[..., Any]]:
    """The identity tools over a store holding ``seed``, acting in ``organization``;
    the store closes when the tools are gone."""
    store = scenario_identity_store(seed or {})
    tools = identity_tools(store, organization)
    weakref.finalize(tools["createUser"], store.close)
    return tools
