"""``python -m harness.systems.service.mcp_server`` as a process: when it refuses to start, and
how it stops. (Its MCP tools over stdio are tested in ``test_mcp_tools``.)"""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

import httpx
import pytest

from tests.harness.systems.service.mcp_support import REPO, SERVER, Tokens, server_env, write_config
from tests.harness.systems.service.service_support import stop


@pytest.mark.parametrize(
    ("token", "reason"),
    [
        (None, "HARNESS_CHAIN_TOKEN is not set"),
        ("not-a-listed-token", "HARNESS_CHAIN_TOKEN: unknown bearer token"),
    ],
    ids=["no-token", "unknown-token"],
)
def test_the_server_refuses_to_start_without_a_known_token(tmp_path: Path, token: str | None, reason: str) -> None:
    done = subprocess.run(
        [*SERVER, "--stdio", "--config", str(write_config(tmp_path))],
        env=server_env(Tokens(), token),
        cwd=REPO,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert f"cannot start: {reason}" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_the_http_server_serves_until_a_signal_then_exits_0(tmp_path: Path, signum: int) -> None:
    tokens = Tokens()
    process = subprocess.Popen(
        [*SERVER, "--http", "--port", "0", "--config", str(write_config(tmp_path))],
        env=server_env(tokens, None),
        cwd=REPO,
        stdin=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stderr is not None
        line = process.stderr.readline()  # once the socket is bound
        assert "MCP at http://127.0.0.1:" in line, line
        url = line.split(" at ")[1].strip()
        assert httpx.post(url, json={}, timeout=30).status_code == 401  # serving, behind its tokens
    finally:
        returncode, err = stop(process, signum)
    assert returncode == 0, err
    assert "Traceback" not in err, err
