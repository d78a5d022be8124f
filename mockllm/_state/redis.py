"""The Redis state: one Redis shared by every worker and every replica (``--state
redis://host:port/db``; the ``redis`` extra).

Keys are ``mockllm:<scope>:<kind>:<space>``: a map is a hash beside a sorted set that
keeps its order, counters a hash, a log a list trimmed to its count. Every call has a
short timeout and one retry (a pooled connection Redis dropped is reopened), so a Redis
that goes away makes requests fail fast with ``StateUnavailable`` (the server's 503),
never hang, and the next request after it is back succeeds. A bounded map drops the
least recently written entries past its count (byte bounds apply in memory and SQLite).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from mockllm._optional import require
from mockllm._state.base import Codec, LogSpec, MapSpec, State, StateConfigError, StateUnavailable, no_batch

__all__ = ["RedisState", "connect_redis"]

_PREFIX = "mockllm"
_TIMEOUT_S = 2.0


def connect_redis(url: str, where: str) -> Any:
    """A client for ``url`` (not yet connected)."""
    redis = require("redis", extra="redis", feature="--state redis://… (the Redis state)")
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    try:
        return redis.Redis.from_url(
            url,
            socket_timeout=_TIMEOUT_S,
            socket_connect_timeout=_TIMEOUT_S,
            retry=Retry(NoBackoff(), 1),
            decode_responses=True,
        )
    except ValueError as exc:
        raise StateConfigError(f"{where}: not a Redis URL ({exc}); use redis://host:port/db.") from None


class _Client:
    """The Redis client, its errors turned into ``StateUnavailable``."""

    def __init__(self, client: Any, where: str) -> None:
        import redis

        self.raw = client
        self.where = where
        self._errors = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, OSError)

    @contextlib.contextmanager
    def guarded(self) -> Iterator[None]:
        try:
            yield
        except self._errors as exc:
            raise StateUnavailable(self.where, exc) from exc

    def call(self, name: str, *args: Any) -> Any:
        with self.guarded():
            return getattr(self.raw, name)(*args)

    def pipeline(self, build: Callable[[Any], object]) -> list[Any]:
        with self.guarded():
            pipe = self.raw.pipeline(transaction=True)
            build(pipe)
            return list(pipe.execute())


class RedisKeyValues:
    def __init__(self, client: _Client, base: str, max_entries: int | None, codec: Codec[Any]) -> None:
        self._c, self._hash, self._order, self._seq = client, base, base + ":order", base + ":seq"
        self._max_entries, self._codec = max_entries, codec

    def get(self, key: str) -> Any:
        value = self._c.call("hget", self._hash, key)
        return None if value is None else self._codec.decode(value)

    def put(self, key: str, value: Any) -> None:
        self._write(key, value, only_new=False)

    def put_new(self, key: str, value: Any) -> bool:
        return self._write(key, value, only_new=True)

    def _write(self, key: str, value: Any, *, only_new: bool) -> bool:
        text = self._codec.encode(value)
        seq = self._c.call("incr", self._seq)
        set_ = "hsetnx" if only_new else "hset"

        def build(pipe: Any) -> None:
            getattr(pipe, set_)(self._hash, key, text)
            pipe.zadd(self._order, {key: seq}, nx=True)

        written = bool(self._c.pipeline(build)[0]) or not only_new
        if written and self._max_entries is not None and self._c.call("zcard", self._order) > self._max_entries:
            extra = self._c.call("zcard", self._order) - self._max_entries
            dropped = [k for k, _ in self._c.call("zpopmin", self._order, extra)]
            if dropped:
                self._c.call("hdel", self._hash, *dropped)
        return written

    def remove(self, key: str) -> Any:
        value, _, _ = self._c.pipeline(
            lambda p: (p.hget(self._hash, key), p.hdel(self._hash, key), p.zrem(self._order, key))
        )
        return None if value is None else self._codec.decode(value)

    def items(self) -> list[tuple[str, Any]]:
        keys = self._c.call("zrange", self._order, 0, -1)
        if not keys:
            return []
        values = self._c.call("hmget", self._hash, keys)
        return [(k, self._codec.decode(v)) for k, v in zip(keys, values, strict=True) if v is not None]

    def oldest(self) -> tuple[str, Any] | None:
        for key in self._c.call("zrange", self._order, 0, 0):
            value = self.get(key)
            if value is not None:
                return key, value
        return None

    def __len__(self) -> int:
        return int(self._c.call("hlen", self._hash))

    def clear(self) -> None:
        self._c.call("delete", self._hash, self._order, self._seq)


class RedisCounters:
    def __init__(self, client: _Client, base: str) -> None:
        self._c, self._hash = client, base

    def incr(self, key: str, by: int = 1) -> int:
        return int(self._c.call("hincrby", self._hash, key, by))

    def get(self, key: str) -> int:
        value = self._c.call("hget", self._hash, key)
        return int(value) if value is not None else 0

    def items(self) -> list[tuple[str, int]]:
        return [(k, int(v)) for k, v in self._c.call("hgetall", self._hash).items()]

    def clear(self) -> None:
        self._c.call("delete", self._hash)


class RedisLog:
    def __init__(self, client: _Client, base: str, count: int, codec: Codec[Any]) -> None:
        self._c, self._list, self._next, self._count, self._codec = client, base, base + ":next", count, codec

    def append(self, make: Callable[[int], Any]) -> Any:
        index = int(self._c.call("incr", self._next)) - 1
        value = make(index)
        text = self._codec.encode(value)
        self._c.pipeline(lambda p: (p.rpush(self._list, text), p.ltrim(self._list, -self._count, -1)))
        return value

    def items(self) -> list[Any]:
        return [self._codec.decode(v) for v in self._c.call("lrange", self._list, 0, -1)]

    def __len__(self) -> int:
        return int(self._c.call("llen", self._list))

    def clear(self) -> None:
        self._c.call("delete", self._list, self._next)


class RedisState(State):
    """One scope (one mock) of a Redis database."""

    shared = True

    def __init__(self, client: Any, where: str, scope: str = "mock") -> None:
        self._c = client if isinstance(client, _Client) else _Client(client, where)
        self._scope = scope
        self.where = where

    def _base(self, kind: str, space: str) -> str:
        return f"{_PREFIX}:{self._scope}:{kind}:{space}"

    def _open_map(self, space: str, spec: MapSpec) -> RedisKeyValues:
        return RedisKeyValues(self._c, self._base("map", space), spec.max_entries, spec.codec)

    def _open_counters(self, space: str, max_keys: int | None) -> RedisCounters:
        return RedisCounters(self._c, self._base("counters", space))

    def _open_log(self, space: str, spec: LogSpec) -> RedisLog:
        return RedisLog(self._c, self._base("log", space), spec.count, spec.codec)

    def scope(self, name: str) -> RedisState:
        return RedisState(self._c, self.where, f"{self._scope}/{name}")

    def clear(self) -> None:
        self._clear_scope(self._scope)

    def drop(self, name: str) -> None:
        self._clear_scope(f"{self._scope}/{name}")

    def _clear_scope(self, scope: str) -> None:
        pattern = f"{_PREFIX}:{_glob_escaped(scope)}:*"
        with self._c.guarded():
            keys = list(self._c.raw.scan_iter(match=pattern, count=1000))
            if keys:
                self._c.raw.delete(*keys)

    def batch(self) -> contextlib.AbstractContextManager[None]:
        return no_batch()

    def check(self) -> None:
        try:
            self._c.call("ping")
        except StateUnavailable as exc:
            raise StateConfigError(
                f"{self.where}: cannot reach Redis ({exc.__cause__}). Start it, or fix the URL (redis://host:port/db)."
            ) from None

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._c.raw.close()


def _glob_escaped(text: str) -> str:
    return "".join("\\" + ch if ch in "*?[]\\" else ch for ch in text)
