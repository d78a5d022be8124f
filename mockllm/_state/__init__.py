"""Where a mock keeps what outlives one request: one interface, three backends.

``open_state(url)`` reads the ``serve --state`` option: ``memory`` (one process, the
default without ``--workers``), ``sqlite:///path`` (one file shared by the workers of
one machine; ``sqlite://`` alone is a temporary file, the default with ``--workers``) or
``redis://host:port/db`` (shared by replicas). See ``mockllm._state.base``.
"""

from __future__ import annotations

import os
import tempfile
from urllib.parse import urlsplit

# The package's door is the interface (``base``, re-exported whole, as asyncio's is)
# and its backends' front: the in-memory state, ``open_state``.
from mockllm._state import base
from mockllm._state.base import *  # noqa: F403
from mockllm._state.base import State, StateConfigError
from mockllm._state.memory import MemoryState

__all__ = ["MemoryState", "open_state", "temporary_sqlite_url"]
__all__ += base.__all__

_FORMS = "memory, sqlite:///path/to/state.db (sqlite:// for a temporary file) or redis://host:port/db"


def temporary_sqlite_url() -> str:
    """A ``sqlite:///`` URL of a new file in a new temporary directory."""
    folder = tempfile.mkdtemp(prefix="mockllm-state-")
    return "sqlite://" + os.path.join(folder, "state.db")  # folder is absolute: sqlite:///tmp/…


def open_state(url: str) -> State:
    """The state ``url`` names (``--state``), checked: ``StateConfigError`` if it is
    malformed or its store cannot be used (a corrupt file, an unreachable Redis)."""
    where = f"--state {url}"
    if url == "memory":
        return MemoryState()
    parts = urlsplit(url)
    state: State
    if parts.scheme == "sqlite":
        from mockllm._state.sqlite import SqliteState, SqliteStore

        if not url.startswith("sqlite://"):  # sqlite:/tmp/s.db would lose its path's first characters
            raise StateConfigError(
                f"{where}: a SQLite state is sqlite:// and a path, e.g. sqlite:///tmp/s.db for /tmp/s.db."
            )
        path = url[len("sqlite://") :]  # sqlite:///tmp/s.db is /tmp/s.db
        if not path:
            return open_state(temporary_sqlite_url())
        if os.path.isdir(path):
            raise StateConfigError(f"{where}: {path!r} is a directory; name a file, e.g. sqlite://{path}/state.db.")
        state = SqliteState(SqliteStore(path, where))
    elif parts.scheme in ("redis", "rediss", "unix"):
        from mockllm._state.redis import RedisState, connect_redis

        state = RedisState(connect_redis(url, where), where)
    else:
        raise StateConfigError(f"{where}: not a state the mock knows; use {_FORMS}.")
    state.check()
    return state
