"""The gate's TOOL step, ``waitForRelease``, in a module of its own: a server subprocess
imports it by its dotted name when it reads its configuration, and this one imports
nothing but asyncio (``mcp_support``, where the gate's other half is, would bring the
MCP client, uvicorn and the mock into every server process: a second of CPU each)."""

from __future__ import annotations

import asyncio

__all__ = ["wait_for_release"]


async def wait_for_release(port: int) -> str:
    """The gate's TOOL step: returns the line the test releases it with."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        line = await reader.readline()
    finally:
        writer.close()
    if not line:
        raise RuntimeError("the test closed the gate without releasing this step")
    return line.decode().strip()
