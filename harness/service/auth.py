"""Who is asking: bearer tokens mapped to principals (a user in an organization).

There are no built-in tokens: no token, no access. ``TokenAuth.from_env`` reads them
from ``HARNESS_CHAIN_TOKENS`` (a JSON object, or a JSON file's path).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.service.errors import Unauthorized

__all__ = ["TOKENS_ENV", "Principal", "TokenAuth"]

TOKENS_ENV = "HARNESS_CHAIN_TOKENS"
"""Names a JSON file, or holds JSON: ``{"<token>": {"user": "...", "organization": "..."}}``."""


@dataclass(frozen=True)
class Principal:
    """Who a request is made as: a user of an organization, which scopes what they see."""

    user: str
    organization: str


class TokenAuth:
    """Bearer tokens to principals. There are no built-in tokens: no token, no access."""

    def __init__(self, tokens: Mapping[str, Principal]) -> None:
        self.tokens = dict(tokens)

    @classmethod
    def from_json(cls, data: Any, source: str = "tokens") -> TokenAuth:
        if not isinstance(data, dict):
            raise ValueError(f"{source}: expected an object of token -> {{user, organization}}, "
                             f"got {type(data).__name__}")
        tokens = {}
        for token, who in data.items():
            if not isinstance(who, dict) or not who.get("user") or not who.get("organization"):
                raise ValueError(f"{source}: token {token[:4]}…: needs 'user' and 'organization', got {who!r}")
            tokens[token] = Principal(str(who["user"]), str(who["organization"]))
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
                raise ValueError(f"{TOKENS_ENV}: cannot read the tokens file {raw!r}: "
                                 f"{exc.strerror or exc}") from exc
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
