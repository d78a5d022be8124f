"""SCIM 2.0 over HTTP (RFC 7644) in the chain service, under ``/scim/v2``: the users,
groups, bulk and discovery endpoints of ``harness.systems.service.scim_routes``.

Behind the chain service's bearer tokens: the token's organization is the only one a
request sees, and another organization's resource is a 404 exactly like one that does
not exist.

The endpoints are built by the first SCIM request: the SCIM models (``scim2-models``)
cost most of a second of CPU to import, which a service nobody asks over SCIM need not
pay.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from starlette.routing import Mount
from starlette.types import ASGIApp, Receive, Scope, Send

if TYPE_CHECKING:
    from harness.systems.identity import SQLiteIdentityStore
    from harness.systems.service.auth import Principal

__all__ = ["SCIM_PREFIX", "scim_mount"]

SCIM_PREFIX = "/scim/v2"


def scim_mount(identity: SQLiteIdentityStore, authenticate: Callable[[str | None], Principal]) -> Mount:
    """The SCIM endpoints over ``identity``, mounted at ``/scim/v2``; ``authenticate``
    turns an ``Authorization`` header into the caller."""
    return Mount(SCIM_PREFIX, app=_ScimDoor(identity, authenticate))


class _ScimDoor:
    """The SCIM routes, built by the first request that comes for them."""

    def __init__(self, identity: SQLiteIdentityStore, authenticate: Callable[[str | None], Principal]) -> None:
        self.identity, self.authenticate = identity, authenticate
        self._routes: ASGIApp | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self._routes is None:  # building takes no await: a second request finds it built
            from harness.systems.service.scim_routes import scim_router

            self._routes = scim_router(self.identity, self.authenticate, SCIM_PREFIX)
        await self._routes(scope, receive, send)
