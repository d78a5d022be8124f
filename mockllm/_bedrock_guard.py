"""Refusing boto3's requests to AWS Bedrock while a test runs.

boto3 sends through botocore and urllib3, not httpx, so the transport patches of
``mockllm._intercept`` never see it: a ``bedrock-runtime`` client nobody pointed at the
mock would reach real AWS with whatever credentials the machine has. While a refusal is
active, ``botocore.httpsession.URLLib3Session.send`` (every botocore request goes
through it) raises ``UnmockedRequestError`` for a Bedrock host
(``bedrock-runtime.REGION.amazonaws.com``, ``bedrock.REGION…``, their ``-fips`` and
``.com.cn`` forms) before any connection, and other hosts go on untouched. The patch goes
in when botocore is loaded (``mockllm._library_guard``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import ModuleType
from typing import Any
from urllib.parse import urlsplit

from mockllm._library_guard import Check, LibraryGuard, Refusal

__all__ = ["BEDROCK_HOST", "refuse_bedrock"]

BEDROCK_HOST = re.compile(r"^bedrock(?:-[a-z-]+)?\.[a-z0-9-]+\.amazonaws\.com(?:\.cn)?$")
"""AWS Bedrock's endpoints (runtime, control plane, agents; fips) in any region."""


def _patch(module: ModuleType, check: Check) -> Callable[[], None]:
    original = module.URLLib3Session.send

    def send(session: Any, request: Any) -> Any:
        parts = urlsplit(request.url)
        check(request.method, request.url, parts.hostname or "", parts.port)
        return original(session, request)

    module.URLLib3Session.send = send

    def undo() -> None:
        # If someone patched over ours since, leave theirs (as _intercept does).
        if module.URLLib3Session.send is send:
            module.URLLib3Session.send = original

    return undo


_guard = LibraryGuard("botocore.httpsession", _patch)


def _bedrock(host: str, port: int | None) -> bool:
    return BEDROCK_HOST.match(host) is not None


@contextmanager
def refuse_bedrock(message: Callable[[str], str], blocked: list[str]) -> Iterator[None]:
    """Refuse botocore's requests to Bedrock hosts with ``UnmockedRequestError(message("METHOD
    URL"))`` while the block runs, noting each in ``blocked`` (the most recent refusal's)."""
    with _guard.refusing(Refusal(_bedrock, message, blocked)):
        yield
