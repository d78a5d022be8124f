"""Subscriptions to chain plans over MCP: who hears that a plan changed.

A client follows a plan (``am7://<org>/tool.plan/<id>``) in its protocol era's way:

- 2025 era (``initialize`` handshake): ``resources/subscribe`` with the plan URI. Each
  change is a ``notifications/resources/updated`` on the connection's standalone
  channel (stdio: the pipe; streamable HTTP: the session's GET stream).
- 2026-07-28 era: ``subscriptions/listen`` naming plan URIs. The changes ride that
  request's own stream (the SDK's ``ListenHandler``, one per organization, so a stream
  never hears of another organization's plans).

Either way a running plan is watched once: one ``ChainService`` subscriber per plan
turns every chain event into "this URI changed". Notifications are level triggers
("read it again"), so sending them is decoupled from the chain: a slow client never
holds a chain up, and changes made while a notification is on its way to a connection
coalesce into one more notification after it.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.session import ServerSession
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ResourceUpdated

from harness.systems.chain import ChainEvent, plan_uri
from harness.systems.chain.models import CHAIN_ENDINGS
from harness.systems.service.auth import Principal
from harness.systems.service.core import ChainService

__all__ = ["PlanSubscriptions"]

logger = logging.getLogger(__name__)

# After these events a run emits nothing more (a stepError is always followed by the
# run failing), so what was kept for it can go.
_LAST_EVENTS = CHAIN_ENDINGS | {"stepError"}


class PlanSubscriptions:
    """The subscriptions of one MCP server to the plans of one ``ChainService``."""

    def __init__(self, service: ChainService) -> None:
        self.service = service
        self._watched: set[str] = set()  # URIs of running plans with a service subscriber
        self._sessions: dict[str, dict[str, ServerSession]] = {}  # plan URI -> connection -> session
        self._listeners: dict[str, ListenHandler] = {}  # organization -> its listen streams
        self._buses: dict[str, InMemorySubscriptionBus] = {}
        self._sending: set[tuple[str, str]] = set()  # (connection, URI) with a notification on its way
        self._again: set[tuple[str, str]] = set()  # ... and a change since it was sent
        self._tasks: set[asyncio.Future[None]] = set()

    def plan(self, principal: Principal, uri: str) -> tuple[str, str]:
        """The plan's id and URI as the service spells it; ``NotFound`` for another organization's plan."""
        plan_id = self.service.plan_by_uri(principal, uri).object_id
        assert plan_id is not None
        return plan_id, plan_uri(principal.organization, plan_id)

    def subscribe(self, principal: Principal, uri: str, connection: str, session: ServerSession) -> None:
        """``resources/subscribe``: notify ``session``'s connection of every change to the plan."""
        plan_id, uri = self.plan(principal, uri)
        if self._watch(principal, plan_id, uri):
            self._sessions.setdefault(uri, {})[connection] = session

    def unsubscribe(self, principal: Principal, uri: str, connection: str) -> None:
        """``resources/unsubscribe``: stop notifying ``connection``."""
        _, uri = self.plan(principal, uri)
        sessions = self._sessions.get(uri, {})
        sessions.pop(connection, None)
        if not sessions:
            self._sessions.pop(uri, None)

    async def listen(
        self, principal: Principal, ctx: ServerRequestContext[Any, Any], params: types.SubscriptionsListenRequestParams
    ) -> types.SubscriptionsListenResult:
        """``subscriptions/listen``: serve one stream of the organization's plan changes.

        Every plan URI named must be the caller's, checked before the stream is acknowledged.
        """
        for uri in params.notifications.resource_subscriptions or ():
            self._watch(principal, *self.plan(principal, uri))
        organization = principal.organization
        if organization not in self._listeners:
            self._buses[organization] = InMemorySubscriptionBus()
            self._listeners[organization] = ListenHandler(self._buses[organization])
        return await self._listeners[organization](ctx, params)

    def _watch(self, principal: Principal, plan_id: str, uri: str) -> bool:
        """Follow the plan's events; ``False`` if it is not running (it will not change)."""
        if uri in self._watched:
            return True

        async def changed(event: ChainEvent) -> None:
            bus = self._buses.get(principal.organization)
            if bus is not None:
                await bus.publish(ResourceUpdated(uri))
            for connection, session in list(self._sessions.get(uri, {}).items()):
                self._notify(connection, uri, session)
            if event.event_type in _LAST_EVENTS:
                self._watched.discard(uri)
                self._sessions.pop(uri, None)

        if not self.service.subscribe(principal, plan_id, changed):
            return False
        self._watched.add(uri)
        return True

    def _notify(self, connection: str, uri: str, session: ServerSession) -> None:
        key = (connection, uri)
        if key in self._sending:
            self._again.add(key)
            return
        self._sending.add(key)
        task = asyncio.ensure_future(self._send(key, session))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _send(self, key: tuple[str, str], session: ServerSession) -> None:
        try:
            while True:
                self._again.discard(key)
                await session.send_resource_updated(key[1])
                if key not in self._again:
                    return
        except Exception:  # a connection that broke is the client's loss, not the chain's
            logger.debug("could not notify %s of a change to %s", *key, exc_info=True)
        finally:
            self._sending.discard(key)
