"""The chain service's WebSocket door: run chains and hear their events live.

Messages are JSON objects. From the client:

- ``{"type": "auth", "token": "..."}`` — browsers cannot set headers on a WebSocket;
  other clients may instead send ``Authorization: Bearer <token>`` on the handshake.
- ``{"type": "chain", ...}`` — a chain request (``planQuery``, ``steps``, ``maxSteps``…
  as for ``POST /chat/chain``), run in the background.
- ``{"type": "watch", "planId": "..."}`` — hear a chain started elsewhere (another
  connection, ``POST /chat/chain``): its events from now on, then its result (at once
  if it has ended).
- ``{"type": "cancel", "planId": "..."}`` and ``{"type": "status", "planId": "..."}``.

From the server:

- ``{"type": "authenticated", "user": ..., "organization": ...}``;
- ``{"type": "chainStarted", "planId", "planUri", "name", "totalSteps", "steps",
  "streamSessionId"}`` — the plan about to run, its steps as in the result (all
  ``PENDING``; none yet when the model is to plan them), and this connection's session
  id, which the plan records as its ``streamSessionId``;
- ``{"chirps": ["chainEvent", <eventType>, <event JSON text>]}`` for every chain event,
  in order, as it happens (the seed's chirp form);
- ``{"type": "chainResult", ...}`` once the chain has ended, however it ended: the plan
  result of ``POST /chat/chain``, chat history included;
- ``{"type": "status", ...}`` — a chain's status, the answer to ``cancel`` and ``status``;
- ``{"type": "error", "status": ..., "detail": ..., "planId"?: ...}``. A 401 closes the
  connection (code 1008); any other error leaves it open.

A connection only ever writes to its own queue; one task drains it to the socket. So a
slow or vanished client never holds up a chain, and a client that goes away leaves its
chains running: they end as they would have, their status readable as usual.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from starlette.websockets import WebSocket

from harness.systems.chain import ChainEvent, ChainPlan
from harness.systems.service.auth import Principal, TokenAuth
from harness.systems.service.core import ChainRequest, ChainService
from harness.systems.service.errors import BadRequest, ChainServiceError, Unauthorized, read_json
from harness.systems.service.status import ChainStatus

__all__ = ["ChainSocket", "POLICY_VIOLATION"]

POLICY_VIOLATION = 1008
"""The close code after a failed authentication."""

PlanResult = Callable[[ChainStatus, ChainPlan], dict[str, Any]]
_MESSAGE_TYPES = ("auth", "chain", "watch", "cancel", "status")
_STARTED = ("planId", "planUri", "name", "totalSteps", "steps")


@dataclass(frozen=True)
class _Close:
    code: int


@dataclass
class _Followed:
    principal: Principal
    watcher: asyncio.Task[None]  # sends the chainResult


class ChainSocket:
    """One WebSocket connection to the chain service."""

    def __init__(self, websocket: WebSocket, service: ChainService, auth: TokenAuth, result: PlanResult) -> None:
        self.websocket = websocket
        self.service = service
        self.auth = auth
        self.result = result
        self.principal: Principal | None = None
        self.outbox: asyncio.Queue[dict[str, Any] | _Close] = asyncio.Queue()
        self.chains: dict[str, _Followed] = {}
        self.session_id = uuid.uuid4().hex  # the plans this connection starts stream to it

    @classmethod
    def endpoint(
        cls, service: ChainService, auth: TokenAuth, result: PlanResult
    ) -> Callable[[WebSocket], Awaitable[None]]:
        """A WebSocket route endpoint serving each connection with a new ``ChainSocket``."""

        async def endpoint(websocket: WebSocket) -> None:
            await cls(websocket, service, auth, result).serve()

        return endpoint

    async def serve(self) -> None:
        """Serve the connection until the client goes away or fails to authenticate."""
        await self.websocket.accept()
        sender = asyncio.ensure_future(self._drain())
        try:
            header = self.websocket.headers.get("authorization")
            if header is not None:
                self._authenticate(header)
            while not sender.done():
                message = await self.websocket.receive()
                if message["type"] == "websocket.disconnect":
                    break
                text = message.get("text")
                if text is None:
                    text = (message.get("bytes") or b"").decode("utf-8", "replace")
                self._handle(text)
        except Unauthorized as exc:
            self.outbox.put_nowait({"type": "error", **exc.body()})
            self.outbox.put_nowait(_Close(POLICY_VIOLATION))
            await sender
        finally:
            self._forget()
            sender.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await sender

    # -- the one writer ------------------------------------------------------------------

    async def _drain(self) -> None:
        while True:
            item = await self.outbox.get()
            try:
                if isinstance(item, _Close):
                    await self.websocket.close(item.code)
                    return
                await self.websocket.send_text(json.dumps(item))
            except Exception:  # the client went away; its chains carry on without it
                return

    def _forget(self) -> None:
        for plan_id, followed in self.chains.items():
            self.service.unsubscribe(followed.principal, plan_id, self._forward)
            followed.watcher.cancel()  # only the watcher: wait() shields the chain
        self.chains.clear()

    # -- messages ------------------------------------------------------------------------

    def _authenticate(self, authorization: str) -> None:
        self.principal = self.auth.authenticate(authorization)
        self.outbox.put_nowait(
            {"type": "authenticated", "user": self.principal.user, "organization": self.principal.organization}
        )

    def _handle(self, text: str) -> None:
        """One client message; a 401 propagates (it ends the connection), other
        errors are answered and the connection stays open."""
        plan_id = None
        try:
            message = read_json(text, "a message")
            if not isinstance(message, dict) or message.get("type") not in _MESSAGE_TYPES:
                kind = message.get("type") if isinstance(message, dict) else type(message).__name__
                raise BadRequest(
                    f'unknown message type {kind!r}; expected an object whose "type" is one of '
                    f"{', '.join(_MESSAGE_TYPES)}"
                )
            kind = message["type"]
            if kind == "auth":
                token = message.get("token")
                self._authenticate(f"Bearer {token}" if isinstance(token, str) and token else "")
                return
            if self.principal is None:
                raise Unauthorized(
                    f'not authenticated: send {{"type": "auth", "token": ...}} '
                    f"(or an Authorization header) before {kind!r}"
                )
            if kind == "chain":
                self._start(self.principal, {k: v for k, v in message.items() if k != "type"})
                return
            plan_id = message.get("planId")
            if not isinstance(plan_id, str) or not plan_id:
                raise BadRequest(f"planId: a {kind!r} message needs the plan's id, got {plan_id!r}")
            if kind == "watch":
                self.service.plan(self.principal, plan_id)  # NotFound for an unknown or foreign plan
                if plan_id not in self.chains:
                    self._follow(self.principal, plan_id, subscribe=True)
                return
            status = (self.service.cancel if kind == "cancel" else self.service.status)(self.principal, plan_id)
            self.outbox.put_nowait({"type": "status", **status.as_json()})
        except Unauthorized:
            raise
        except ChainServiceError as exc:
            error = {"type": "error", **exc.body()}
            self.outbox.put_nowait(error | ({"planId": plan_id} if plan_id else {}))
        except Exception as exc:  # a bug of the service's own: answered, and the connection stays
            self.outbox.put_nowait(
                {
                    "type": "error",
                    "status": 500,
                    "detail": f"the chain service failed on this message: {type(exc).__name__}: {exc}",
                }
                | ({"planId": plan_id} if plan_id else {})
            )

    def _forward(self, event: ChainEvent) -> None:
        self.outbox.put_nowait({"chirps": ["chainEvent", event.event_type, event.to_json()]})

    def _start(self, principal: Principal, fields: dict[str, Any]) -> None:
        plan_id = self.service.start(
            principal, ChainRequest.parse(fields), self._forward, stream_session_id=self.session_id
        )
        # The run has not begun yet (it starts at our next await), so this comes first.
        planned = self.result(self.service.status(principal, plan_id), self.service.plan(principal, plan_id))
        self.outbox.put_nowait(
            {"type": "chainStarted", **{key: planned[key] for key in _STARTED}, "streamSessionId": self.session_id}
        )
        self._follow(principal, plan_id, subscribe=False)

    def _follow(self, principal: Principal, plan_id: str, *, subscribe: bool) -> None:
        if subscribe:
            self.service.subscribe(principal, plan_id, self._forward)  # False once ended: the result follows
        self.chains[plan_id] = _Followed(principal, asyncio.ensure_future(self._announce_end(principal, plan_id)))

    async def _announce_end(self, principal: Principal, plan_id: str) -> None:
        try:
            plan = await self.service.wait(principal, plan_id)
            message = {"type": "chainResult", **self.result(self.service.status(principal, plan_id), plan)}
        except Exception as exc:
            message = {
                "type": "error",
                "status": 500,
                "planId": plan_id,
                "detail": f"the chain {plan_id} broke: {type(exc).__name__}: {exc}",
            }
        self.service.unsubscribe(principal, plan_id, self._forward)  # the run's record keeps its subscribers
        self.outbox.put_nowait(message)
        self.chains.pop(plan_id, None)
