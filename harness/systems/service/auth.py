"""Who is asking: bearer tokens mapped to principals (a user in an organization, with
its permissions).

There are no built-in tokens: no token, no access. ``TokenAuth.from_env`` reads them
from ``HARNESS_CHAIN_TOKENS`` (a JSON object, or a JSON file's path)::

    {"tok-ada": {"user": "ada", "organization": "acme"},
     "tok-kid": {"user": "kid", "organization": "acme",
                 "permissions": {"tools": ["lookup", "find*"], "vectors": ["am7://acme/data.data/public-*"],
                                 "data": []}}}

A token without ``permissions`` (or a kind left out) may use everything of its
organization, as before permissions existed; see ``harness.systems.chain.access``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.systems.chain.access import EVERYTHING, Permissions
from harness.systems.service.errors import Unauthorized

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = ["TOKENS_ENV", "Principal", "TokenAuth", "token_gate"]

TOKENS_ENV = "HARNESS_CHAIN_TOKENS"
"""Names a JSON file, or holds JSON: ``{"<token>": {"user": "...", "organization": "...", "permissions"?: {...}}}``."""


@dataclass(frozen=True)
class Principal:
    """Who a request is made as: a user of an organization, which scopes what they see,
    and their permissions, which decide what of it they may use."""

    user: str
    organization: str
    permissions: Permissions = EVERYTHING


class TokenAuth:
    """Bearer tokens to principals. There are no built-in tokens: no token, no access."""

    def __init__(self, tokens: Mapping[str, Principal]) -> None:
        self.tokens = dict(tokens)

    @classmethod
    def from_json(cls, data: Any, source: str = "tokens") -> TokenAuth:
        if not isinstance(data, dict):
            raise ValueError(
                f"{source}: expected an object of token -> {{user, organization}}, got {type(data).__name__}"
            )
        tokens = {}
        for token, who in data.items():
            if not isinstance(who, dict) or not who.get("user") or not who.get("organization"):
                raise ValueError(f"{source}: token {token[:4]}…: needs 'user' and 'organization', got {who!r}")
            permissions = Permissions.from_json(who.get("permissions"), f"{source}: token {token[:4]}…: permissions")
            tokens[token] = Principal(str(who["user"]), str(who["organization"]), permissions)
        return cls(tokens)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ) -> TokenAuth:
        """Tokens from ``HARNESS_CHAIN_TOKENS`` (a JSON file's path, or JSON); none if unset."""
        raw = environ.get(TOKENS_ENV, "").strip()
        if not raw:
            return cls({})
        source = TOKENS_ENV
        if not raw.startswith("{"):
            try:
                source, raw = raw, Path(raw).read_text(encoding="utf-8")
            except OSError as exc:
                raise ValueError(f"{TOKENS_ENV}: cannot read the tokens file {raw!r}: {exc.strerror or exc}") from exc
        try:
            data = json.loads(raw)
        except ValueError as exc:
            raise ValueError(f"{source}: not valid JSON: {exc}") from exc
        return cls.from_json(data, source)

    def authenticate(self, authorization: str | None) -> Principal:
        """The principal of an ``Authorization: Bearer <token>`` header value."""
        if not authorization:
            raise Unauthorized("missing bearer token: send 'Authorization: Bearer <token>'")
        scheme, _, token = authorization.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise Unauthorized("the Authorization header must be 'Bearer <token>'")
        principal = self.tokens.get(token.strip())
        if principal is None:
            raise Unauthorized("unknown bearer token")
        return principal


def token_gate(app: ASGIApp, auth: TokenAuth, *, also: tuple[str, ...] = ()) -> ASGIApp:
    """``app`` reachable only with one of ``auth``'s tokens (or a key in ``also``), sent as
    ``Authorization: Bearer <token>`` or as ``x-api-key`` (what the Anthropic SDK sends):
    how ``harness serve --with-mock`` keeps its mock's journal and reset behind the tokens.
    Anything else is a 401 ``{status, detail}``."""
    # Starlette with the gate, not with the tokens: a server that refuses to start for want
    # of a token has read them, and ends before it imports anything that serves.
    from starlette.responses import JSONResponse

    keys = frozenset(also)

    async def gated(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        scheme, _, bearer = headers.get("authorization", "").partition(" ")
        offered = [headers.get("x-api-key", "").strip()]
        if scheme.lower() == "bearer":
            offered.append(bearer.strip())
        if any(key and (key in keys or key in auth.tokens) for key in offered):
            await app(scope, receive, send)
            return
        detail = "missing or unknown token: send 'Authorization: Bearer <token>' or 'x-api-key: <token>'"
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008, "reason": "unauthorized"})
            return
        await JSONResponse({"status": 401, "detail": detail}, status_code=401)(scope, receive, send)

    return gated
