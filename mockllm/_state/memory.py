"""The in-memory state: one process, the default without ``serve --workers``.

Values are kept as the objects given (no copy, no encoding), so a mock in one process
costs what it did before the state interface existed.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from mockllm._limits import ByteBoundedLog
from mockllm._state.base import LogSpec, MapSpec, State

__all__ = ["MemoryState"]

_NO_BATCH = contextlib.nullcontext()


class MemoryKeyValues:
    """key -> value in an ``OrderedDict``, bounded in entries and in bytes (each value's
    JSON), the oldest (``lru``: least recently used) forgotten first."""

    def __init__(self, max_entries: int | None, max_bytes: int | None, lru: bool) -> None:
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._lru = lru
        self._held: OrderedDict[str, tuple[Any, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, key: str) -> Any:
        with self._lock:
            held = self._held.get(key)
            if held is None:
                return None
            if self._lru:
                self._held.move_to_end(key)
            return held[0]

    def put(self, key: str, value: Any) -> None:
        size = self._size(value)
        with self._lock:
            self._write(key, value, size)

    def put_new(self, key: str, value: Any) -> bool:
        size = self._size(value)
        with self._lock:  # the check and the write at once: of two callers, one sets it
            if key in self._held:
                return False
            self._write(key, value, size)
            return True

    def _size(self, value: Any) -> int:
        # Weighed before the lock is taken: the JSON of a large value takes a while.
        return len(json.dumps(value)) if self.max_bytes is not None else 0

    def _write(self, key: str, value: Any, size: int) -> None:
        old = self._held.get(key)
        if old is not None:
            self._bytes -= old[1]
            if self._lru:
                self._held.move_to_end(key)
        self._held[key] = (value, size)
        self._bytes += size
        self._trim()

    def _trim(self) -> None:
        while self._held and (
            (self.max_entries is not None and len(self._held) > self.max_entries)
            or (self.max_bytes is not None and self._bytes > self.max_bytes)
        ):
            _, (_, dropped) = self._held.popitem(last=False)
            self._bytes -= dropped

    def remove(self, key: str) -> Any:
        with self._lock:
            held = self._held.pop(key, None)
            if held is None:
                return None
            self._bytes -= held[1]
            return held[0]

    def items(self) -> list[tuple[str, Any]]:
        with self._lock:
            return [(key, value) for key, (value, _) in self._held.items()]

    def oldest(self) -> tuple[str, Any] | None:
        with self._lock:
            for key, (value, _) in self._held.items():
                return key, value
            return None

    def __len__(self) -> int:
        return len(self._held)

    def clear(self) -> None:
        with self._lock:
            self._held.clear()
            self._bytes = 0


class MemoryCounters:
    """key -> int; at most ``max_keys`` keys, the least recently counted forgotten first."""

    def __init__(self, max_keys: int | None) -> None:
        self._max_keys = max_keys
        self._counts: OrderedDict[str, int] = OrderedDict()
        self._lock = threading.Lock()

    def incr(self, key: str, by: int = 1) -> int:
        with self._lock:
            value = self._counts.pop(key, 0) + by
            self._counts[key] = value
            if self._max_keys is not None:
                while len(self._counts) > self._max_keys:
                    self._counts.popitem(last=False)
            return value

    def get(self, key: str) -> int:
        return self._counts.get(key, 0)

    def items(self) -> list[tuple[str, int]]:
        with self._lock:
            return list(self._counts.items())

    def clear(self) -> None:
        with self._lock:
            self._counts.clear()


class MemoryLog:
    """A ``ByteBoundedLog`` (bounded by count and by bytes, as ``size`` weighs each value)
    that numbers what it is given."""

    def __init__(self, count: int, budget: int | None, size: Callable[[Any], int] | None) -> None:
        weigh = size if size is not None else _weightless
        self._log: ByteBoundedLog[Any] = ByteBoundedLog(count, budget if budget is not None else sys.maxsize, weigh)
        self._numbers = itertools.count()
        """Each append's index (``AppendLog.append``), from 0 again once cleared."""
        self._lock = threading.Lock()

    def append(self, make: Callable[[int], Any]) -> Any:
        with self._lock:
            value = make(next(self._numbers))
            self._log.append(value)
            return value

    def items(self) -> list[Any]:
        with self._lock:
            return list(self._log)

    def __len__(self) -> int:
        return len(self._log)

    def clear(self) -> None:
        with self._lock:
            self._log.clear()
            self._numbers = itertools.count()


def _weightless(value: Any) -> int:
    return 0


class MemoryState(State):
    """The spaces of one mock, in this process's memory."""

    shared = False
    where = "--state memory"

    def __init__(self) -> None:
        self._spaces: dict[str, Any] = {}
        self._scopes: dict[str, MemoryState] = {}
        self._lock = threading.Lock()

    def _space(self, space: str, make: Callable[[], Any]) -> Any:
        with self._lock:
            found = self._spaces.get(space)
            if found is None:
                found = self._spaces[space] = make()
            return found

    def _open_map(self, space: str, spec: MapSpec) -> MemoryKeyValues:
        return self._space("map:" + space, lambda: MemoryKeyValues(spec.max_entries, spec.max_bytes, spec.lru))  # type: ignore[no-any-return]

    def _open_counters(self, space: str, max_keys: int | None) -> MemoryCounters:
        return self._space("counters:" + space, lambda: MemoryCounters(max_keys))  # type: ignore[no-any-return]

    def _open_log(self, space: str, spec: LogSpec) -> MemoryLog:
        return self._space("log:" + space, lambda: MemoryLog(spec.count, spec.budget, spec.size))  # type: ignore[no-any-return]

    def scope(self, name: str) -> MemoryState:
        with self._lock:
            found = self._scopes.get(name)
            if found is None:
                found = self._scopes[name] = MemoryState()
            return found

    def drop(self, name: str) -> None:
        with self._lock:
            self._scopes.pop(name, None)

    def clear(self) -> None:
        with self._lock:
            spaces = list(self._spaces.values())
        for space in spaces:
            space.clear()

    def batch(self) -> contextlib.AbstractContextManager[None]:
        return _NO_BATCH

    def check(self) -> None:
        return None

    def close(self) -> None:
        return None
