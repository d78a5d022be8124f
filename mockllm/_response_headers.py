"""The headers of what the engine answers: content type, request ids, mock headers.

Real providers put a request id on every reply, rejections included (the SDKs show it as
``error.request_id``); the mock derives it from the body (same request, same id), or
from the plan's response id for a reply it plans.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

from mockllm._limits import HEADER_VALUE_MAX, header_value

__all__ = ["JSON_TYPE", "body_request_id", "with_headers"]

JSON_TYPE = "application/json"


def body_request_id(body: bytes) -> str:
    """The request id of a reply that plans no response: derived from ``body``."""
    return "req_" + hashlib.blake2b(body, digest_size=12).hexdigest()


def with_headers(
    values: Mapping[str, str], *, content_type: str, extra: list[tuple[str, str]] | None = None
) -> list[tuple[str, str]]:
    """The header list of a reply: its content type, then ``values`` (made sendable),
    then ``extra``."""
    headers = [("content-type", content_type)]
    # ``header_value``'s test of a value already sendable, made once over them all
    # (joined by a printable "|"; a value's edge space is then beside a "|" or at an
    # end): most replies' values are the mock's own ids, and pass as they are. A value
    # holding "| " or " |" is sent through ``header_value`` with the rest.
    joined = "|".join(values.values())
    if (
        joined.isascii()
        and joined.isprintable()
        and max(map(len, values.values()), default=0) <= HEADER_VALUE_MAX
        and " |" not in joined
        and "| " not in joined
        and joined[:1] != " " != joined[-1:]
    ):
        headers.extend(values.items())
    else:
        headers.extend([(name, header_value(value)) for name, value in values.items()])
    if extra:
        headers.extend(extra)
    return headers
