"""The chain service's MCP server over stdio, driven by the official SDK's own client:
``python -m harness.service.mcp_server --stdio`` as a subprocess, serving the principal
whose token is in its environment."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from mcp_support import (
    McpClient,
    Tokens,
    Updates,
    check_a_caller_that_stops_waiting_stops_its_chain,
    check_a_subscriber_hears_a_running_chain,
    check_another_organization_finds_nothing,
    check_bad_requests_are_tool_errors,
    check_cancel_stops_a_running_chain,
    check_execute_answers_with_the_chain,
    check_tools_are_the_seeds,
    write_config,
)

pytestmark = pytest.mark.anyio

REPO = Path(__file__).resolve().parents[3]
SERVER = [sys.executable, "-m", "harness.service.mcp_server", "--stdio"]


def server_env(tokens: Tokens, token: str | None) -> dict[str, str]:
    """This environment, the tokens table, the server's own token, and the gate tool importable."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("HARNESS_CHAIN_TOKEN")}
    env["HARNESS_CHAIN_TOKENS"] = tokens.env_json()
    if token is not None:
        env["HARNESS_CHAIN_TOKEN"] = token
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(Path(__file__).parent), env.get("PYTHONPATH")]))
    return env


async def _stdio_ready() -> None:
    """Over stdio a notification can reach the client as soon as the session is up."""


@asynccontextmanager
async def stdio_mcp(directory: Path, tokens: Tokens, token: str) -> AsyncIterator[McpClient]:
    """A server subprocess serving ``token``'s principal, and an initialized client of it."""
    config = write_config(directory)
    params = StdioServerParameters(command=SERVER[0], args=[*SERVER[1:], "--config", str(config)],
                                   env=server_env(tokens, token), cwd=REPO)
    errors = directory / f"server-{token[:6]}.stderr"
    updates = Updates()
    with errors.open("w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write, message_handler=updates) as session:
                await session.initialize()
                yield McpClient(session, updates, _stdio_ready)
    assert "Traceback" not in errors.read_text(), errors.read_text()


@pytest.fixture(scope="module")
def tokens() -> Tokens:
    return Tokens()


@pytest.fixture(scope="module")
def servers_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The configuration and plan database of the module's servers."""
    return tmp_path_factory.mktemp("stdio")


@pytest.fixture(scope="module")
async def alice(servers_dir: Path, tokens: Tokens) -> AsyncIterator[McpClient]:
    """One server for the module's tests (starting one takes seconds), serving alice of acme."""
    async with stdio_mcp(servers_dir, tokens, tokens.alice) as client:
        yield client


async def test_tools_and_resource_template_are_the_seeds(alice: McpClient) -> None:
    await check_tools_are_the_seeds(alice)


async def test_execute_waits_for_the_chain_and_answers_with_output_steps_and_plan_uri(alice: McpClient) -> None:
    await check_execute_answers_with_the_chain(alice)


async def test_bad_requests_are_tool_errors_that_say_what_is_wrong(alice: McpClient) -> None:
    await check_bad_requests_are_tool_errors(alice)


async def test_another_organizations_plan_is_not_found(alice: McpClient, servers_dir: Path, tokens: Tokens
                                                     ) -> None:
    """A second server on the same plan database, serving bob of another organization."""
    async with stdio_mcp(servers_dir, tokens, tokens.bob) as bob:
        uri = await check_execute_answers_with_the_chain(alice)
        await check_another_organization_finds_nothing(alice, bob, uri)


async def test_cancel_stops_a_chain_held_at_a_tool_step(alice: McpClient) -> None:
    await check_cancel_stops_a_running_chain(alice)


async def test_a_caller_that_stops_waiting_for_its_chain_cancels_it(alice: McpClient) -> None:
    await check_a_caller_that_stops_waiting_stops_its_chain(alice)


async def test_a_subscriber_is_told_of_every_change_while_the_chain_runs(alice: McpClient) -> None:
    await check_a_subscriber_hears_a_running_chain(alice)


@pytest.mark.parametrize(("token", "reason"), [
    (None, "HARNESS_CHAIN_TOKEN is not set"),
    ("not-a-listed-token", "HARNESS_CHAIN_TOKEN: unknown bearer token"),
], ids=["no-token", "unknown-token"])
def test_the_server_refuses_to_start_without_a_known_token(tmp_path: Path, token: str | None, reason: str) -> None:
    done = subprocess.run([*SERVER, "--config", str(write_config(tmp_path))], env=server_env(Tokens(), token),
                          cwd=REPO, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stdout == ""
    assert f"cannot start: {reason}" in done.stderr and "Traceback" not in done.stderr
