"""A real Redis for the state tests: Debian's ``redis-server`` on a free loopback port,
with no persistence, started and stopped by PID. Without it the tests skip, unless
HARNESS_REQUIRE_REDIS=1 (CI, ``.ci/run``), where they fail."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

REDIS_SERVER = "/usr/bin/redis-server"
START_TIMEOUT_S = 10


def redis_binary() -> str:
    """The redis-server to run; skips (fails under HARNESS_REQUIRE_REDIS=1) without one."""
    found = REDIS_SERVER if os.access(REDIS_SERVER, os.X_OK) else shutil.which("redis-server")
    reason = ""
    if found is None:
        reason = "redis-server is not installed (apt-get install redis-server)"
    else:
        try:
            import redis  # noqa: F401
        except ModuleNotFoundError:
            reason = "the redis package is not installed (the redis extra)"
    if reason:
        if os.environ.get("HARNESS_REQUIRE_REDIS") == "1":
            pytest.fail(f"HARNESS_REQUIRE_REDIS=1 but {reason}")
        pytest.skip(reason)
    assert found is not None
    return found


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class RedisServer:
    """One redis-server process on ``port``; ``stop()`` and ``start()`` again on the same port."""

    def __init__(self, binary: str, port: int, folder: Path) -> None:
        self.binary, self.port, self.folder = binary, port, folder
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> RedisServer:
        log = open(self.folder / "redis.log", "ab")  # noqa: SIM115 (the process holds it)
        self.proc = subprocess.Popen(
            [
                self.binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.folder),
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        log.close()
        deadline = time.monotonic() + START_TIMEOUT_S
        while not self.answers():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise AssertionError(f"redis-server did not start: {(self.folder / 'redis.log').read_text()}")
            time.sleep(0.02)
        return self

    def answers(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as sock:
                sock.sendall(b"PING\r\n")
                return sock.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def stop(self) -> None:
        """Kill it by its PID (SIGKILL: a crash, not a shutdown)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)
        self.proc = None


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    server = RedisServer(redis_binary(), free_port(), tmp_path).start()
    try:
        yield server
    finally:
        server.stop()
