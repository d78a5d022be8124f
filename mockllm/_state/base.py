"""The state interface: where a mock keeps what outlives one request.

Every store of the mock (registered scripts, sessions, held conversations, attempt
counts, the journal and the findings) keeps its data in three kinds of space, named
within a ``State``:

- ``KeyValues``: key -> value, oldest written first, optionally bounded in entries and
  bytes (the oldest go first past a bound);
- ``Counters``: key -> integer, incremented atomically;
- ``AppendLog``: values appended in order, each given its index, bounded in count.

Three backends implement it (``mockllm._state.memory``: one process, today's objects
kept as they are; ``mockllm._state.sqlite``: one file shared by the processes of one
machine; ``mockllm._state.redis``: one Redis shared by replicas). Values are JSON-able
unless a ``Codec`` says how to write them; the in-memory backend keeps the objects
themselves, so a caller must not change a value after giving it.

A ``State`` is one scope (one mock); ``scope(name)`` is another, beside it (a
session), and ``clear()`` empties its own spaces only.

Errors::

    StateError                  the state cannot be used (a ValueError)
    ├── StateConfigError        a --state value or its store is wrong at startup
    └── StateUnavailable        the shared store stopped answering mid-run (a 503)
"""

from __future__ import annotations

import abc
import contextlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from mockllm._exceptions import MockLLMError

__all__ = [
    "JSON_CODEC",
    "AppendLog",
    "Codec",
    "Counters",
    "KeyValues",
    "LogSpec",
    "MapSpec",
    "State",
    "StateConfigError",
    "StateError",
    "StateUnavailable",
]

T = TypeVar("T")


class StateError(MockLLMError, ValueError):
    """The mock's state cannot be used."""


class StateConfigError(StateError):
    """A ``--state`` value, or the store it names, is wrong: said at startup."""


class StateUnavailable(StateError):
    """The shared state store stopped answering; ``where`` names it (``--state …``)."""

    def __init__(self, where: str, cause: BaseException) -> None:
        self.where = where
        super().__init__(
            # str(cause).rstrip("."): redis' own messages end with a full stop.
            f"The mock's shared state ({where}) is unavailable: {str(cause).rstrip('.')}. The mock answers 503 "
            "until it is reachable again; check that the store is running."
        )


@dataclass(frozen=True)
class Codec(Generic[T]):
    """How a shared backend writes a value as text and reads it back."""

    encode: Callable[[T], str]
    decode: Callable[[str], T]


JSON_CODEC: Codec[Any] = Codec(lambda value: json.dumps(value, ensure_ascii=False), json.loads)


class KeyValues(Protocol[T]):
    """key -> value, oldest written first."""

    def get(self, key: str) -> T | None: ...

    def put(self, key: str, value: T) -> None:
        """Set ``key`` (a key already there keeps its place)."""
        ...

    def put_new(self, key: str, value: T) -> bool:
        """Set ``key`` unless it is there; whether it was set."""
        ...

    def remove(self, key: str) -> T | None: ...

    def items(self) -> list[tuple[str, T]]:
        """Every entry, oldest written first."""
        ...

    def oldest(self) -> tuple[str, T] | None:
        """The entry written first, if any."""
        ...

    def __len__(self) -> int: ...

    def clear(self) -> None: ...


class Counters(Protocol):
    """key -> integer (0 until incremented)."""

    def incr(self, key: str, by: int = 1) -> int:
        """Add ``by`` to ``key`` and return the new value, atomically across processes."""
        ...

    def get(self, key: str) -> int: ...

    def items(self) -> list[tuple[str, int]]: ...

    def clear(self) -> None: ...


class AppendLog(Protocol[T]):
    """Values in the order appended, the newest ``count`` kept."""

    def append(self, make: Callable[[int], T]) -> T:
        """Append ``make(index)``: ``index`` counts the appends since the log was cleared."""
        ...

    def items(self) -> list[T]:
        """The values kept, oldest first."""
        ...

    def __len__(self) -> int: ...

    def clear(self) -> None: ...


@dataclass(frozen=True)
class MapSpec:
    """What ``State.map`` was asked for: the bounds of a ``KeyValues`` and its codec."""

    max_entries: int | None
    max_bytes: int | None
    lru: bool
    codec: Codec[Any]


@dataclass(frozen=True)
class LogSpec:
    """What ``State.log`` was asked for: the bounds of an ``AppendLog`` and its codec."""

    count: int
    budget: int | None
    size: Callable[[Any], int] | None
    codec: Codec[Any]


class State(abc.ABC):
    """One scope of a backend: the spaces of one mock.

    The three kinds of space are asked for here, with their options and defaults; a
    backend says only how it opens each (``_open_map``, ``_open_counters``, ``_open_log``).
    """

    shared: bool
    """Whether other processes see what this state holds (SQLite, Redis)."""

    where: str
    """The backend, as the ``--state`` option names it (for messages)."""

    def map(
        self,
        space: str,
        *,
        max_entries: int | None = None,
        max_bytes: int | None = None,
        lru: bool = False,
        codec: Codec[Any] = JSON_CODEC,
    ) -> KeyValues[Any]:
        """The space ``space``; past a bound the oldest entries go (``lru``: in memory, a
        read makes an entry newest; shared backends drop the least recently written)."""
        return self._open_map(space, MapSpec(max_entries, max_bytes, lru, codec))

    def counters(self, space: str, *, max_keys: int | None = None) -> Counters:
        return self._open_counters(space, max_keys)

    def log(
        self,
        space: str,
        *,
        count: int,
        budget: int | None = None,
        size: Callable[[Any], int] | None = None,
        codec: Codec[Any] = JSON_CODEC,
    ) -> AppendLog[Any]:
        return self._open_log(space, LogSpec(count, budget, size, codec))

    @abc.abstractmethod
    def _open_map(self, space: str, spec: MapSpec) -> KeyValues[Any]: ...

    @abc.abstractmethod
    def _open_counters(self, space: str, max_keys: int | None) -> Counters: ...

    @abc.abstractmethod
    def _open_log(self, space: str, spec: LogSpec) -> AppendLog[Any]: ...

    @abc.abstractmethod
    def scope(self, name: str) -> State:
        """Another scope of the same backend (a session's), beside this one."""
        ...

    @abc.abstractmethod
    def clear(self) -> None:
        """Empty every space of this scope (other scopes keep theirs)."""
        ...

    @abc.abstractmethod
    def drop(self, name: str) -> None:
        """Empty the scope ``name`` (beside this one) and forget it (a deleted session)."""
        ...

    @abc.abstractmethod
    def batch(self) -> contextlib.AbstractContextManager[None]:
        """Group the writes of the block (one transaction where the backend has them)."""
        ...

    @abc.abstractmethod
    def check(self) -> None:
        """Raise ``StateConfigError`` if the backend cannot be used (at startup)."""
        ...

    @abc.abstractmethod
    def close(self) -> None: ...


@contextlib.contextmanager
def no_batch() -> Iterator[None]:
    yield
