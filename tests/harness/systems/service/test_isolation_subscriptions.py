"""MCP subscriptions stay inside the organization (seed 001 §6.2; Group M
``testChainOrgScopingEnforced``): a client of acme follows acme's plan of an id that
globex also runs, and hears nothing while globex's plan of that id changes — then hears
its own plan change, on the same connection, so silence is not just a dead stream.

Both protocol eras: the 2026-07-28 ``subscriptions/listen`` stream and the 2025
``resources/subscribe`` notifications. The same scene for both: globex's chain X runs
(held at a tool) while acme holds a finished plan stored under the same id X and runs
its own chain Y (held at another tool); acme follows X and Y; globex's X runs to its
end first, then acme's Y.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

import anyio
import pytest
from mcp.client.subscriptions import ResourceUpdated, listen

from harness.systems.chain import ChainEvent
from harness.systems.service.auth import Principal
from harness.systems.service.core import ChainRequest
from tests.harness.systems.service.mcp_support import McpClient, http_mcp, planned_query, serving
from tests.harness.systems.service.service_support import HeldTool
from tests.harness.systems.service.test_isolation import Two

ACME, GLOBEX = Principal("ada", "acme"), Principal("eve", "globex")


@dataclass
class Scene:
    two: Two
    own: HeldTool  # holds acme's chain Y; ``two.held`` holds globex's chain X
    ada: McpClient
    shared_id: str  # X: running in globex, a finished plan of acme's
    acme_x: str
    acme_y: str

    async def globex_runs_to_its_end(self) -> None:
        self.two.held.release.set()
        with anyio.fail_after(15):
            plan = await self.two.service.wait(GLOBEX, self.shared_id)
        assert plan.executed and plan.object_id == self.shared_id

    async def acme_runs_to_its_end(self) -> None:
        self.own.release.set()
        with anyio.fail_after(15):
            assert (await self.two.service.wait(ACME, self.acme_y.rsplit("/", 1)[1])).executed


@asynccontextmanager
async def scene(*, modern: bool) -> AsyncIterator[Scene]:
    two = Two()
    own = HeldTool(lambda: "acme's own").hold()
    two.config.tools["own"] = own
    two.held.hold()
    held = planned_query("Q", [{"stepType": "TOOL", "toolName": "lookup", "inputs": {"topic": "x"}}])
    mine = planned_query("Q", [{"stepType": "TOOL", "toolName": "own"}])
    try:
        async with serving(two.app) as base:
            url = f"{base}/mcp"
            async with http_mcp(url, "tok-ada", modern=modern) as ada, http_mcp(url, "tok-eve", modern=modern) as eve:
                chat = {"chatConfigUri": "am7://globex/chat.config/studio", "wait": False}
                globex_x = (await eve.ok("am7_chain_execute", query=held, **chat))["planUri"]
                shared_id = globex_x.rsplit("/", 1)[1]
                await anyio.to_thread.run_sync(two.held.wait_for_calls)
                two.stored(shared_id, "acme", "acme's")  # the same id in acme, not running
                chat = {"chatConfigUri": "am7://acme/chat.config/studio", "wait": False}
                acme_y = (await ada.ok("am7_chain_execute", query=mine, **chat))["planUri"]
                await anyio.to_thread.run_sync(own.wait_for_calls)
                assert globex_x == f"am7://globex/tool.plan/{shared_id}"
                yield Scene(two, own, ada, shared_id, f"am7://acme/tool.plan/{shared_id}", acme_y)
    finally:
        two.held.release.set()
        own.release.set()
        two.config.store.close()


@pytest.mark.anyio
async def test_a_listen_stream_hears_nothing_of_another_organizations_plan_of_the_same_id() -> None:
    async with scene(modern=True) as s:
        heard: list[ResourceUpdated] = []
        async with listen(s.ada.session, resource_subscriptions=[s.acme_x, s.acme_y]) as changes:
            await s.globex_runs_to_its_end()
            await s.acme_runs_to_its_end()
            with anyio.fail_after(15):
                async for change in changes:  # in order: anything of globex's run would come first
                    heard.append(change)
                    if change == ResourceUpdated(s.acme_y) and (await s.ada.read_plan(s.acme_y))["executed"]:
                        break
        assert heard and set(heard) == {ResourceUpdated(s.acme_y)}, heard


@pytest.mark.anyio
async def test_resources_subscribe_hears_nothing_of_another_organizations_plan_of_the_same_id() -> None:
    async with scene(modern=False) as s:
        for uri in (s.acme_x, s.acme_y):
            await s.ada.subscribe(uri)
        await s.ada.notifications_ready()
        await s.globex_runs_to_its_end()
        await s.acme_runs_to_its_end()
        queue = s.ada.updates.queue
        heard = []
        with anyio.fail_after(15):
            while not heard or heard[-1] != s.acme_y:  # anything of globex's run would come first
                heard.append(await queue.get())
        while not queue.empty():
            heard.append(queue.get_nowait())
        assert set(heard) == {s.acme_y}, heard


@pytest.mark.anyio
async def test_an_unsubscribed_callback_hears_no_more_and_another_organization_cannot_unsubscribe_it() -> None:
    """``ChainService.unsubscribe``, which a WebSocket watcher's leaving calls: the
    callback hears nothing more of the run; the same call by globex, for the id of
    acme's running chain, leaves acme's subscriber in place."""
    two = Two()
    two.held.hold()
    lookup = {"stepType": "TOOL", "toolName": "lookup", "inputs": {"topic": "x"}}
    try:
        plan_id = two.service.start(ACME, ChainRequest.parse({"planQuery": "Q", "steps": [lookup]}))
        gone: list[str] = []
        kept: list[str] = []

        async def leaves(event: ChainEvent) -> None:
            gone.append(event.event_type)

        async def stays(event: ChainEvent) -> None:
            kept.append(event.event_type)

        assert two.service.subscribe(ACME, plan_id, leaves) and two.service.subscribe(ACME, plan_id, stays)
        assert not two.service.subscribe(GLOBEX, plan_id, stays)  # not globex's run
        two.service.unsubscribe(GLOBEX, plan_id, stays)
        two.service.unsubscribe(ACME, plan_id, leaves)
        two.held.release.set()
        with anyio.fail_after(15):
            assert (await two.service.wait(ACME, plan_id)).executed
        assert gone == [] and kept == ["stepStart", "stepComplete", "chainComplete"]
    finally:
        two.held.release.set()
        two.config.store.close()
