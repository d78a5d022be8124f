"""The chain service's errors: what a door answers with an HTTP status and a sentence.

::

    ChainServiceError (500)
    ├── BadRequest (400)
    ├── Unauthorized (401)
    ├── Forbidden (403)     the caller's permissions deny it (never for another organization's)
    └── NotFound (404)      an unknown plan and another organization's read the same

The doors render them as ``{"status": ..., "detail": ...}`` (the SCIM error form).
"""

from __future__ import annotations

import json
from typing import Any

from harness.exceptions import HarnessError

__all__ = ["BadRequest", "ChainServiceError", "Forbidden", "NotFound", "Unauthorized", "read_json"]


class ChainServiceError(HarnessError):
    """A request the service answers with ``status`` and ``detail``."""

    status = 500

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail

    def body(self) -> dict[str, Any]:
        return {"status": self.status, "detail": self.detail}


class BadRequest(ChainServiceError):
    status = 400


class Unauthorized(ChainServiceError):
    status = 401


class Forbidden(ChainServiceError):
    status = 403


class NotFound(ChainServiceError):
    status = 404


def read_json(raw: str | bytes, what: str) -> Any:
    """``raw`` parsed, or a ``BadRequest`` that names ``what`` (``"the request body"``,
    ``"a message"``): the REST and WebSocket doors read JSON the same way."""
    try:
        return json.loads(raw)
    except ValueError as exc:
        raise BadRequest(f"{what} is not valid JSON: {exc}") from exc
    except RecursionError as exc:
        raise BadRequest(f"{what} is nested too deeply to read") from exc
