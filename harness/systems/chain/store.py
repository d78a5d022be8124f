"""Chain plans persisted in embedded SQLite (no server): every field, step status,
dynamic flag and the saved context, per organization.

A plan is stored whole, as its JSON; the organization is a column, so a plan of one
organization is simply not found by another (``load`` answers ``None``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from harness.systems.chain.models import ChainPlan
from harness.systems.sqlite_store import SQLiteStore

__all__ = ["PlanStore", "SQLitePlanStore"]


_SCHEMA = """
CREATE TABLE IF NOT EXISTS plans (
    organization TEXT NOT NULL, plan_id TEXT NOT NULL, name TEXT NOT NULL, body TEXT NOT NULL,
    PRIMARY KEY (organization, plan_id));
"""


class PlanStore(Protocol):
    """What the executor and the chain service need of a plan store."""

    def save(self, plan: ChainPlan, organization: str) -> None: ...

    def load(self, plan_id: str, organization: str) -> ChainPlan | None: ...

    def list_ids(self, organization: str) -> list[str]: ...


class SQLitePlanStore(SQLiteStore, PlanStore):
    """Plans in one SQLite database (``":memory:"`` by default); safe across threads."""

    def __init__(self, path: str | Path = ":memory:") -> None:
        super().__init__(path, _SCHEMA)

    def save(self, plan: ChainPlan, organization: str) -> None:
        """Insert or replace ``plan`` (it must have an ``object_id``)."""
        if not plan.object_id:
            raise ValueError(f"a plan needs an object_id to be saved; got {plan.object_id!r}")
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO plans VALUES (?, ?, ?, ?)",
                (organization, plan.object_id, plan.name, plan.to_json()),
            )

    def load(self, plan_id: str, organization: str) -> ChainPlan | None:
        row = self._row("SELECT body FROM plans WHERE organization = ? AND plan_id = ?", (organization, plan_id))
        return ChainPlan.model_validate_json(row[0]) if row else None

    def list_ids(self, organization: str) -> list[str]:
        rows = self._rows("SELECT plan_id FROM plans WHERE organization = ? ORDER BY plan_id", (organization,))
        return [r[0] for r in rows]
