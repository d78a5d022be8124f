"""Refusing boto3's requests to AWS Bedrock while a test runs.

boto3 sends through botocore and urllib3, not httpx, so the transport patches of
``mockllm._intercept`` never see it: a ``bedrock-runtime`` client nobody pointed at the
mock would reach real AWS with whatever credentials the machine has. While a refusal is
active, ``botocore.httpsession.URLLib3Session.send`` (every botocore request goes
through it) raises ``UnmockedRequestError`` for a Bedrock host
(``bedrock-runtime.REGION.amazonaws.com``, ``bedrock.REGION…``, their ``-fips`` and
``.com.cn`` forms) before any connection, and other hosts go on untouched.

botocore is never imported here: if it is loaded the patch goes in at once, else an
import hook puts it in when something imports ``botocore.httpsession``, so a project
without boto3 (or a test that never uses it) pays nothing. Refusals nest and may come
from several threads; the patch and the hook come out when the last one ends.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import re
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from types import ModuleType
from typing import Any
from urllib.parse import urlsplit

from mockllm._exceptions import UnmockedRequestError

__all__ = ["BEDROCK_HOST", "refuse_bedrock"]

BEDROCK_HOST = re.compile(r"^bedrock(?:-[a-z-]+)?\.[a-z0-9-]+\.amazonaws\.com(?:\.cn)?$")
"""AWS Bedrock's endpoints (runtime, control plane, agents; fips) in any region."""

_MODULE = "botocore.httpsession"


class _Refusal:
    def __init__(self, message: Callable[[str], str], blocked: list[str]) -> None:
        self.message, self.blocked = message, blocked


class _Guard:
    """The active refusals of this process, the patch they need and its import hook."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.refusals: tuple[_Refusal, ...] = ()  # replaced whole: requests read it without the lock
        self.original: Callable[..., Any] | None = None
        self.patched: Callable[..., Any] | None = None
        self.hook: _PatchOnImport | None = None

    def add(self, refusal: _Refusal) -> None:
        with self.lock:
            self.refusals = (*self.refusals, refusal)
            if len(self.refusals) > 1:
                return
            module = sys.modules.get(_MODULE)
            if module is not None:
                self.install(module)
            else:
                self.hook = _PatchOnImport(self)
                sys.meta_path.insert(0, self.hook)

    def remove(self, refusal: _Refusal) -> None:
        with self.lock:
            self.refusals = tuple(r for r in self.refusals if r is not refusal)
            if self.refusals:
                return
            if self.hook is not None and self.hook in sys.meta_path:
                sys.meta_path.remove(self.hook)
            self.hook = None
            module = sys.modules.get(_MODULE)
            # If someone patched over ours since, leave theirs (as _intercept does).
            if module is not None and self.patched is not None and module.URLLib3Session.send is self.patched:
                module.URLLib3Session.send = self.original
            self.original = self.patched = None

    def install(self, module: ModuleType) -> None:
        original = module.URLLib3Session.send

        def send(session: Any, request: Any) -> Any:
            refusals = self.refusals
            if refusals and BEDROCK_HOST.match(urlsplit(request.url).hostname or ""):
                refusal = refusals[-1]
                shown = f"{request.method} {request.url}"
                refusal.blocked.append(shown)
                raise UnmockedRequestError(refusal.message(shown))
            return original(session, request)

        module.URLLib3Session.send = send
        self.original, self.patched = original, send


class _PatchOnImport(importlib.abc.MetaPathFinder):
    """Patches ``botocore.httpsession`` right after it is first imported."""

    def __init__(self, guard: _Guard) -> None:
        self.guard = guard

    def find_spec(self, name: str, path: Sequence[str] | None, target: ModuleType | None = None) -> Any:
        if name != _MODULE:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        loader = spec.loader if spec is not None else None
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        run = loader.exec_module

        def exec_module(module: ModuleType) -> None:
            run(module)
            with self.guard.lock:
                if self.guard.refusals and self.guard.patched is None:
                    self.guard.install(module)

        loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


_guard = _Guard()


@contextmanager
def refuse_bedrock(message: Callable[[str], str], blocked: list[str]) -> Iterator[None]:
    """Refuse botocore's requests to Bedrock hosts with ``UnmockedRequestError(message("METHOD
    URL"))`` while the block runs, noting each in ``blocked`` (the most recent refusal's)."""
    refusal = _Refusal(message, blocked)
    _guard.add(refusal)
    try:
        yield
    finally:
        _guard.remove(refusal)
