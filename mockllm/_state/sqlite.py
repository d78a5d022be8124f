"""The SQLite state: one file shared by the processes of one machine.

The default of ``serve --workers N`` (a temporary file unless ``--state
sqlite:///path``). Write-ahead logging lets every worker read while one writes; each
process opens its own connection (after a fork too) and each operation is its own
transaction, or one per ``batch()``. Past a bound the oldest entries go, as in memory,
except that a read does not make an entry newest; a log is bounded by count only.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import weakref
from collections.abc import Callable, Iterator
from typing import Any

from mockllm._state.base import JSON_CODEC, Codec, LogSpec, MapSpec, State, StateConfigError, StateUnavailable

__all__ = ["SqliteState", "SqliteStore"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS kv (scope TEXT NOT NULL, space TEXT NOT NULL, key TEXT NOT NULL,
                               value TEXT NOT NULL, size INTEGER NOT NULL, UNIQUE (scope, space, key));
CREATE TABLE IF NOT EXISTS counters (scope TEXT NOT NULL, space TEXT NOT NULL, key TEXT NOT NULL,
                                     n INTEGER NOT NULL, PRIMARY KEY (scope, space, key)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS log (scope TEXT NOT NULL, space TEXT NOT NULL, idx INTEGER NOT NULL,
                                value TEXT NOT NULL, PRIMARY KEY (scope, space, idx));
"""

_TRIM_EVERY = 64
"""A log is trimmed to its count once every this many appends (reads take the newest)."""


class SqliteStore:
    """One SQLite file and this process's connection to it."""

    def __init__(self, path: str, where: str) -> None:
        self.path = path
        self.where = where
        self.lock = threading.RLock()
        self._pid = -1
        self._connection: sqlite3.Connection | None = None
        self._depth = 0
        self.making: tuple[Callable[[int], Any], Codec[Any]] = (lambda index: index, JSON_CODEC)
        self.made: Any = None
        self.failed: Exception | None = None
        alive = weakref.ref(self)
        os.register_at_fork(after_in_child=lambda: _after_fork(alive()))

    def _connect(self) -> sqlite3.Connection:
        connection = sqlite3.connect(self.path, timeout=10, isolation_level=None, check_same_thread=False)
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA synchronous=OFF")
        connection.executescript(_SCHEMA)
        connection.create_function("mockllm_made", 1, self._made)
        return connection

    def _made(self, index: int) -> str | None:
        """Called by SQLite inside a log's INSERT with the value's index (``SqliteLog.append``)."""
        make, codec = self.making
        try:
            value = make(index)
            self.made = value
            return codec.encode(value)
        except Exception as exc:  # SQLite would hide it: raised again by SqliteLog.append
            self.failed = exc
            return None

    def connection(self) -> sqlite3.Connection:
        if self._connection is None:
            self._connection = self._connect()
            self._pid = os.getpid()
        return self._connection

    def _forked(self) -> None:
        # A forked worker opens its own: a connection must not cross a fork (and is
        # never closed here, which would release the parent's locks).
        self._connection = None
        self.lock = threading.RLock()

    def check(self) -> None:
        try:
            with self.lock:
                connection = self.connection()
                connection.execute("SELECT count(*) FROM kv").fetchone()
        except sqlite3.DatabaseError as exc:
            raise StateConfigError(
                f"{self.where}: {self.path!r} cannot be used as the mock's state: {exc}. Point --state at a "
                "new file (sqlite:///path/state.db), or delete this one if it is an old mock state."
            ) from None

    def run(self, sql: str, args: tuple[Any, ...] = ()) -> list[Any]:
        try:
            with self.lock:
                return self.connection().execute(sql, args).fetchall()
        except sqlite3.OperationalError as exc:
            raise StateUnavailable(self.where, exc) from exc

    @contextlib.contextmanager
    def batch(self) -> Iterator[None]:
        with self.lock:
            outer = self._depth == 0
            if outer:
                self.run("BEGIN IMMEDIATE")
            self._depth += 1
            try:
                yield
            except BaseException:
                self._depth -= 1
                if outer:
                    self.run("ROLLBACK")
                raise
            self._depth -= 1
            if outer:
                self.run("COMMIT")

    def close(self) -> None:
        with self.lock:
            if self._connection is not None and self._pid == os.getpid():
                self._connection.close()
            self._connection = None


def _after_fork(store: SqliteStore | None) -> None:
    if store is not None:
        store._forked()


class SqliteKeyValues:
    def __init__(
        self,
        store: SqliteStore,
        scope: str,
        space: str,
        max_entries: int | None,
        max_bytes: int | None,
        codec: Codec[Any],
    ) -> None:
        self._store, self._key = store, (scope, space)
        self._max_entries, self._max_bytes, self._codec = max_entries, max_bytes, codec

    def get(self, key: str) -> Any:
        rows = self._store.run("SELECT value FROM kv WHERE scope=? AND space=? AND key=?", (*self._key, key))
        return self._codec.decode(rows[0][0]) if rows else None

    def put(self, key: str, value: Any) -> None:
        text = self._codec.encode(value)
        with self._bounded():
            self._store.run(
                "INSERT INTO kv VALUES (?,?,?,?,?) ON CONFLICT (scope, space, key) "
                "DO UPDATE SET value=excluded.value, size=excluded.size",
                (*self._key, key, text, len(text)),
            )

    def put_new(self, key: str, value: Any) -> bool:
        text = self._codec.encode(value)
        with self._bounded():
            rows = self._store.run(
                "INSERT INTO kv VALUES (?,?,?,?,?) ON CONFLICT DO NOTHING RETURNING 1",
                (*self._key, key, text, len(text)),
            )
        return bool(rows)

    @contextlib.contextmanager
    def _bounded(self) -> Iterator[None]:
        """The block's write, then the space trimmed to its bounds, in one transaction."""
        if self._max_entries is None and self._max_bytes is None:
            yield  # one statement: its own transaction
            return
        with self._store.batch():
            yield
            self._trim()

    def oldest(self) -> tuple[str, Any] | None:
        rows = self._store.run("SELECT key, value FROM kv WHERE scope=? AND space=? ORDER BY rowid LIMIT 1", self._key)
        return (rows[0][0], self._codec.decode(rows[0][1])) if rows else None

    def _trim(self) -> None:
        if self._max_entries is not None:
            self._store.run(
                "DELETE FROM kv WHERE rowid IN (SELECT rowid FROM kv WHERE scope=? AND space=? "
                "ORDER BY rowid DESC LIMIT -1 OFFSET ?)",
                (*self._key, self._max_entries),
            )
        if self._max_bytes is not None:
            total = self._store.run("SELECT coalesce(sum(size), 0) FROM kv WHERE scope=? AND space=?", self._key)[0][0]
            for rowid, size in self._store.run(
                "SELECT rowid, size FROM kv WHERE scope=? AND space=? ORDER BY rowid", self._key
            ):
                if total <= self._max_bytes:
                    break
                self._store.run("DELETE FROM kv WHERE rowid=?", (rowid,))
                total -= size

    def remove(self, key: str) -> Any:
        rows = self._store.run("DELETE FROM kv WHERE scope=? AND space=? AND key=? RETURNING value", (*self._key, key))
        return self._codec.decode(rows[0][0]) if rows else None

    def items(self) -> list[tuple[str, Any]]:
        rows = self._store.run("SELECT key, value FROM kv WHERE scope=? AND space=? ORDER BY rowid", self._key)
        return [(key, self._codec.decode(value)) for key, value in rows]

    def __len__(self) -> int:
        return int(self._store.run("SELECT count(*) FROM kv WHERE scope=? AND space=?", self._key)[0][0])

    def clear(self) -> None:
        self._store.run("DELETE FROM kv WHERE scope=? AND space=?", self._key)


class SqliteCounters:
    def __init__(self, store: SqliteStore, scope: str, space: str) -> None:
        self._store, self._key = store, (scope, space)

    def incr(self, key: str, by: int = 1) -> int:
        rows = self._store.run(
            "INSERT INTO counters VALUES (?,?,?,?) ON CONFLICT DO UPDATE SET n=n+excluded.n RETURNING n",
            (*self._key, key, by),
        )
        return int(rows[0][0])

    def get(self, key: str) -> int:
        rows = self._store.run("SELECT n FROM counters WHERE scope=? AND space=? AND key=?", (*self._key, key))
        return int(rows[0][0]) if rows else 0

    def items(self) -> list[tuple[str, int]]:
        return [
            (k, int(n)) for k, n in self._store.run("SELECT key, n FROM counters WHERE scope=? AND space=?", self._key)
        ]

    def clear(self) -> None:
        self._store.run("DELETE FROM counters WHERE scope=? AND space=?", self._key)


class SqliteLog:
    def __init__(self, store: SqliteStore, scope: str, space: str, count: int, codec: Codec[Any]) -> None:
        self._store, self._key, self._count, self._codec = store, (scope, space), count, codec

    def append(self, make: Callable[[int], Any]) -> Any:
        # One statement, so one transaction: the index (one past the newest) is found and
        # the value made and written under SQLite's write lock (mockllm_made: SqliteStore._made).
        with self._store.lock:
            self._store.making = (make, self._codec)
            try:
                rows = self._store.run(
                    "INSERT INTO log SELECT ?, ?, n, mockllm_made(n) FROM "
                    "(SELECT coalesce(max(idx) + 1, 0) AS n FROM log WHERE scope=? AND space=?) RETURNING idx",
                    (*self._key, *self._key),
                )
            except sqlite3.IntegrityError:
                failed, self._store.failed = self._store.failed, None
                if failed is None:
                    raise
                raise failed from None
            value, self._store.made = self._store.made, None
        index = rows[0][0]
        if index % _TRIM_EVERY == _TRIM_EVERY - 1:
            self._store.run("DELETE FROM log WHERE scope=? AND space=? AND idx<=?", (*self._key, index - self._count))
        return value

    def items(self) -> list[Any]:
        rows = self._store.run(
            "SELECT value FROM (SELECT idx, value FROM log WHERE scope=? AND space=? ORDER BY idx DESC LIMIT ?) "
            "ORDER BY idx",
            (*self._key, self._count),
        )
        return [self._codec.decode(value) for (value,) in rows]

    def __len__(self) -> int:
        rows = self._store.run("SELECT count(*) FROM log WHERE scope=? AND space=?", self._key)
        return min(self._count, int(rows[0][0]))

    def clear(self) -> None:
        self._store.run("DELETE FROM log WHERE scope=? AND space=?", self._key)


class SqliteState(State):
    """One scope (one mock) of a SQLite file."""

    shared = True

    def __init__(self, store: SqliteStore, scope: str = "mock") -> None:
        self._store = store
        self._scope = scope
        self.where = store.where

    def _open_map(self, space: str, spec: MapSpec) -> SqliteKeyValues:
        return SqliteKeyValues(self._store, self._scope, space, spec.max_entries, spec.max_bytes, spec.codec)

    def _open_counters(self, space: str, max_keys: int | None) -> SqliteCounters:
        return SqliteCounters(self._store, self._scope, space)

    def _open_log(self, space: str, spec: LogSpec) -> SqliteLog:
        return SqliteLog(self._store, self._scope, space, spec.count, spec.codec)

    def scope(self, name: str) -> SqliteState:
        return SqliteState(self._store, f"{self._scope}/{name}")

    def clear(self) -> None:
        self._clear_scope(self._scope)

    def drop(self, name: str) -> None:
        self._clear_scope(f"{self._scope}/{name}")

    def _clear_scope(self, scope: str) -> None:
        with self._store.batch():
            for table in ("kv", "counters", "log"):
                self._store.run(f"DELETE FROM {table} WHERE scope=?", (scope,))

    def batch(self) -> contextlib.AbstractContextManager[None]:
        return self._store.batch()

    def check(self) -> None:
        self._store.check()

    def close(self) -> None:
        self._store.close()
