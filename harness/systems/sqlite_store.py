"""What the systems' embedded stores are built on: one SQLite database, ``":memory:"``
or a file, shared across threads under one lock, with nothing to start.

The agent's events (``harness.systems.agent.SQLiteEventStore``), the chain's plans
(``harness.systems.chain.SQLitePlanStore``) and the identity service's users and
groups (``harness.systems.identity.SQLiteIdentityStore``) each derive from it.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Self

__all__ = ["SQLiteStore"]


class SQLiteStore:
    """One SQLite database at ``path`` with ``schema`` (a script of ``CREATE … IF NOT
    EXISTS`` statements) applied. ``_db`` is used under ``_lock`` (re-entrant), in
    autocommit mode: a store that needs a transaction begins it itself. ``_row`` and
    ``_rows`` read under the lock. Closed by
    ``close``, or at the end of a ``with`` block."""

    def __init__(self, path: str | Path, schema: str) -> None:
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._lock = threading.RLock()
        with self._lock:
            self._db.executescript(schema)

    def _row(self, query: str, parameters: Sequence[Any] = ()) -> Any:
        """The first row ``query`` answers (``None`` when there is none), read under the lock."""
        with self._lock:
            return self._db.execute(query, parameters).fetchone()

    def _rows(self, query: str, parameters: Sequence[Any] = ()) -> list[Any]:
        """Every row ``query`` answers, read under the lock."""
        with self._lock:
            return self._db.execute(query, parameters).fetchall()

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
