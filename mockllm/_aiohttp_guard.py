"""Refusing aiohttp's requests to the providers' hosts while a test runs.

Some clients send through aiohttp, not httpx: google-genai's async client does whenever
aiohttp is installed (LiteLLM brings it), unless it was given an httpx client. The
transport patches of ``mockllm._intercept`` never see those requests, and nothing can
serve them in process, so while a refusal is active
``aiohttp.ClientSession._request`` (every request and websocket of a session goes
through it) raises ``UnmockedRequestError`` for a covered host before any connection;
other hosts go on untouched. The patch goes in when aiohttp is loaded
(``mockllm._library_guard``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import ModuleType
from typing import Any

from mockllm._library_guard import Check, LibraryGuard, Refusal

__all__ = ["refuse_aiohttp"]


def _patch(module: ModuleType, check: Check) -> Callable[[], None]:
    session_class = module.ClientSession
    original = session_class._request

    async def _request(session: Any, method: str, str_or_url: Any, *args: Any, **kwargs: Any) -> Any:
        build = getattr(session, "_build_url", None)
        url = build(str_or_url) if build is not None else module.client.URL(str_or_url)
        check(method.upper(), str(url), (url.host or "").lower(), getattr(url, "explicit_port", url.port))
        return await original(session, method, str_or_url, *args, **kwargs)

    session_class._request = _request

    def undo() -> None:
        if session_class._request is _request:
            session_class._request = original

    return undo


_guard = LibraryGuard("aiohttp", _patch)


@contextmanager
def refuse_aiohttp(
    covers: Callable[[str, int | None], bool], message: Callable[[str], str], blocked: list[str]
) -> Iterator[None]:
    """Refuse aiohttp's requests to the hosts ``covers`` accepts with
    ``UnmockedRequestError(message("METHOD URL"))`` while the block runs, noting each in
    ``blocked``."""
    with _guard.refusing(Refusal(covers, message, blocked)):
        yield
