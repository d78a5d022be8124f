"""The identity store: users, groups and memberships of each organization, in SQLite.

Like the plan store (``harness.systems.chain.SQLitePlanStore``) it is embedded: one SQLite
database, ``":memory:"`` by default, safe across threads. Every read and write names
an organization, so a row of another organization is never seen — to the caller it is
"not there", exactly like a row that does not exist.

A resource's row holds its SCIM attributes as JSON (what the client wrote, less the
attributes the service computes: ``id``, ``meta``, a group's ``members`` and a user's
``groups``). Memberships are rows of their own, so a member's removal removes it from
every group, and a user's ``groups`` is read from the same rows as a group's
``members``. A user's ``userName`` is unique in its organization, case-insensitively
(RFC 7643 §4.1.1); a clash is ``DuplicateName``.
"""

from __future__ import annotations

import builtins
import json
import sqlite3
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from harness.exceptions import HarnessError
from harness.systems.sqlite_store import SQLiteStore

__all__ = ["DuplicateName", "Member", "ResourceKind", "SQLiteIdentityStore", "StoredResource"]

ResourceKind = Literal["User", "Group"]


class DuplicateName(HarnessError):
    """Another user of the organization already has this ``userName`` (``name``)."""

    def __init__(self, kind: ResourceKind, name: str | None) -> None:
        super().__init__(f"{kind} {name!r} already exists")
        self.name = name


@dataclass(frozen=True)
class StoredResource:
    kind: ResourceKind
    id: str
    attributes: dict[str, Any]
    created: datetime
    last_modified: datetime
    version: int


@dataclass(frozen=True)
class Member:
    id: str
    kind: ResourceKind
    display: str | None = None
    """What the client wrote as the member's ``display``; ``None``: its name."""


def _utc_now() -> datetime:
    return datetime.now(UTC).replace(microsecond=0)


_SCHEMA = """
CREATE TABLE IF NOT EXISTS identity_resources (
    organization TEXT NOT NULL, kind TEXT NOT NULL, id TEXT NOT NULL,
    unique_name TEXT, attributes TEXT NOT NULL,
    created TEXT NOT NULL, last_modified TEXT NOT NULL, version INTEGER NOT NULL,
    PRIMARY KEY (organization, kind, id));
CREATE UNIQUE INDEX IF NOT EXISTS identity_unique_names
    ON identity_resources (organization, kind, unique_name);
CREATE TABLE IF NOT EXISTS identity_memberships (
    organization TEXT NOT NULL, group_id TEXT NOT NULL, member_id TEXT NOT NULL, member_kind TEXT NOT NULL,
    display TEXT, position INTEGER NOT NULL, PRIMARY KEY (organization, group_id, member_id));
"""
# A resource's rows read (into ``_stored``) and its row written (``_write``; ``unique_name``
# is a user's ``userName``, casefolded).
_SELECT = "SELECT kind, id, attributes, created, last_modified, version FROM identity_resources "
_INSERT = "INSERT INTO identity_resources VALUES (:organization, :kind, :id, :unique_name, :attributes, :now, :now, 1)"
_UPDATE = (
    "UPDATE identity_resources SET attributes = :attributes, unique_name = :unique_name, last_modified = :now, "
    "version = version + 1 WHERE organization = :organization AND kind = :kind AND id = :id"
)


class SQLiteIdentityStore(SQLiteStore):
    """Users, groups and memberships per organization in one SQLite database.

    ``ids`` makes a new resource's id (default: a random UUID) and ``clock`` the time
    of a write (default: now, UTC, whole seconds); a scenario passes both so its
    replay is the same on every run.
    """

    def __init__(
        self,
        path: str | Path = ":memory:",
        *,
        ids: Callable[[ResourceKind], str] | None = None,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        super().__init__(path, _SCHEMA)
        self._ids = ids or (lambda kind: str(uuid.uuid4()))
        self._clock = clock or _utc_now

    # -- resources ------------------------------------------------------------------------

    def new_id(self, kind: ResourceKind) -> str:
        return self._ids(kind)

    def insert(
        self, organization: str, kind: ResourceKind, resource_id: str, attributes: dict[str, Any]
    ) -> StoredResource:
        now = self._clock()
        self._write(_INSERT, organization, kind, resource_id, attributes, now)
        return StoredResource(kind, resource_id, attributes, now, now, 1)

    def update(
        self, organization: str, kind: ResourceKind, resource_id: str, attributes: dict[str, Any]
    ) -> StoredResource | None:
        """Replace the attributes; ``None`` when there is no such resource."""
        written = self._write(_UPDATE, organization, kind, resource_id, attributes, self._clock())
        return self.get(organization, kind, resource_id) if written else None

    def _write(
        self,
        statement: str,
        organization: str,
        kind: ResourceKind,
        resource_id: str,
        attributes: dict[str, Any],
        now: datetime,
    ) -> int:
        """Run ``_INSERT`` or ``_UPDATE`` for a resource's row: how many rows it wrote, or
        ``DuplicateName`` when its ``userName`` is another user's (case-insensitively)."""
        name = attributes.get("userName") if kind == "User" else None
        row = {
            "organization": organization,
            "kind": kind,
            "id": resource_id,
            "unique_name": name.casefold() if isinstance(name, str) else None,
            "attributes": json.dumps(attributes),
            "now": now.isoformat(),
        }
        try:
            with self._lock:
                return self._db.execute(statement, row).rowcount
        except sqlite3.IntegrityError as exc:
            raise DuplicateName(kind, name) from exc

    def touch(self, organization: str, kind: ResourceKind, resource_id: str) -> None:
        """A change that is not in the attributes (a group's members): new version and time."""
        with self._lock:
            self._db.execute(
                "UPDATE identity_resources SET last_modified = ?, version = version + 1 "
                "WHERE organization = ? AND kind = ? AND id = ?",
                (self._clock().isoformat(), organization, kind, resource_id),
            )

    def get(self, organization: str, kind: ResourceKind, resource_id: str) -> StoredResource | None:
        row = self._row(_SELECT + "WHERE organization = ? AND kind = ? AND id = ?", (organization, kind, resource_id))
        return _stored(row) if row else None

    def kind_of(self, organization: str, resource_id: str) -> ResourceKind | None:
        row = self._row(
            "SELECT kind FROM identity_resources WHERE organization = ? AND id = ?", (organization, resource_id)
        )
        return row[0] if row else None

    # Named for what SCIM does with it; the annotations below this method say builtins.list,
    # which this name hides inside the class.
    def list(self, organization: str, kind: ResourceKind) -> list[StoredResource]:
        """The organization's resources of ``kind``, oldest first."""
        rows = self._rows(_SELECT + "WHERE organization = ? AND kind = ? ORDER BY rowid", (organization, kind))
        return [_stored(row) for row in rows]

    def delete(self, organization: str, kind: ResourceKind, resource_id: str) -> bool:
        """Remove the resource and every membership it is in or holds."""
        with self._lock:
            cursor = self._db.execute(
                "DELETE FROM identity_resources WHERE organization = ? AND kind = ? AND id = ?",
                (organization, kind, resource_id),
            )
            if cursor.rowcount:
                groups = self.groups_of(organization, resource_id)
                self._db.execute(
                    "DELETE FROM identity_memberships WHERE organization = ? AND (group_id = ? OR member_id = ?)",
                    (organization, resource_id, resource_id),
                )
                for group in groups:
                    self.touch(organization, "Group", group)
        return bool(cursor.rowcount)

    # -- memberships ----------------------------------------------------------------------

    def members(self, organization: str, group_id: str) -> builtins.list[Member]:
        rows = self._rows(
            "SELECT member_id, member_kind, display FROM identity_memberships "
            "WHERE organization = ? AND group_id = ? ORDER BY position",
            (organization, group_id),
        )
        return [Member(row[0], row[1], row[2]) for row in rows]

    def set_members(self, organization: str, group_id: str, members: builtins.list[Member]) -> None:
        with self._lock:
            self._db.execute(
                "DELETE FROM identity_memberships WHERE organization = ? AND group_id = ?", (organization, group_id)
            )
            self._db.executemany(
                "INSERT OR IGNORE INTO identity_memberships VALUES (?, ?, ?, ?, ?, ?)",
                [(organization, group_id, m.id, m.kind, m.display, i) for i, m in enumerate(members)],
            )

    def groups_of(self, organization: str, member_id: str) -> builtins.list[str]:
        rows = self._rows(
            "SELECT group_id FROM identity_memberships WHERE organization = ? AND member_id = ? ORDER BY group_id",
            (organization, member_id),
        )
        return [row[0] for row in rows]


def _stored(row: tuple[Any, ...]) -> StoredResource:
    return StoredResource(
        row[0], row[1], json.loads(row[2]), datetime.fromisoformat(row[3]), datetime.fromisoformat(row[4]), row[5]
    )
