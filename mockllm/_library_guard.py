"""Refusing a client library's requests to some hosts while a test runs, for the libraries
that do not send through httpx or httpx2 (``mockllm._intercept`` patches those).

A ``LibraryGuard`` owns one patch of one library's send method: boto3's
(``mockllm._bedrock_guard``) and aiohttp's (``mockllm._aiohttp_guard``). While a refusal
is active, the patched method asks the most recent refusal that covers the request's host
and, if one does, raises ``UnmockedRequestError`` before any connection, noting the
request in that refusal's ``blocked`` list; other requests go on untouched.

The library is never imported here: if it is loaded the patch goes in at once, else an
import hook puts it in when something imports the module, so a project without the
library (or a test that never uses it) pays nothing. Refusals nest and may come from
several threads; the patch and the hook come out when the last one ends.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from mockllm._exceptions import UnmockedRequestError

__all__ = ["Check", "LibraryGuard", "Patch", "Refusal"]

Check = Callable[[str, str, str, "int | None"], None]
"""``check(method, url, host, port)``: raises for a refused request, else returns."""

Patch = Callable[[ModuleType, Check], Callable[[], None]]
"""``patch(module, check)`` puts a send method that calls ``check`` first into the loaded
module and returns what takes it out again (leaving a later patch of someone else's)."""


@dataclass(eq=False)
class Refusal:
    covers: Callable[[str, int | None], bool]
    """Whether a request to ``host`` on ``port`` (None: the scheme's default) is refused."""
    message: Callable[[str], str]
    """The error's message for ``METHOD URL``."""
    blocked: list[str]
    """Where the refused requests are noted, for the caller's report when its block ends."""


class LibraryGuard:
    """The active refusals for one library in this process, its patch and its import hook."""

    def __init__(self, module: str, patch: Patch) -> None:
        self.module, self.patch = module, patch
        self.lock = threading.Lock()
        self.refusals: tuple[Refusal, ...] = ()  # replaced whole: requests read it without the lock
        self.undo: Callable[[], None] | None = None
        self.hook: _PatchOnImport | None = None

    def check(self, method: str, url: str, host: str, port: int | None) -> None:
        for refusal in reversed(self.refusals):
            if refusal.covers(host, port):
                shown = f"{method} {url}"
                refusal.blocked.append(shown)
                raise UnmockedRequestError(refusal.message(shown))

    @contextmanager
    def refusing(self, refusal: Refusal) -> Iterator[None]:
        """Refuse what ``refusal`` covers while the block runs."""
        self._add(refusal)
        try:
            yield
        finally:
            self._remove(refusal)

    def install(self, module: ModuleType) -> None:
        """Patch ``module`` (loaded) while refusals are active; the lock is held."""
        if self.refusals and self.undo is None:
            self.undo = self.patch(module, self.check)

    def _add(self, refusal: Refusal) -> None:
        with self.lock:
            self.refusals = (*self.refusals, refusal)
            if len(self.refusals) > 1:
                return
            module = sys.modules.get(self.module)
            if module is not None:
                self.install(module)
            else:
                self.hook = _PatchOnImport(self)
                sys.meta_path.insert(0, self.hook)

    def _remove(self, refusal: Refusal) -> None:
        with self.lock:
            self.refusals = tuple(r for r in self.refusals if r is not refusal)
            if self.refusals:
                return
            if self.hook is not None and self.hook in sys.meta_path:
                sys.meta_path.remove(self.hook)
            self.hook = None
            if self.undo is not None:
                self.undo()
            self.undo = None


class _PatchOnImport(importlib.abc.MetaPathFinder):
    """Patches the guard's module right after it is first imported."""

    def __init__(self, guard: LibraryGuard) -> None:
        self.guard = guard

    def find_spec(self, name: str, path: Sequence[str] | None, target: ModuleType | None = None) -> Any:
        if name != self.guard.module:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        loader = spec.loader if spec is not None else None
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        run = loader.exec_module

        def exec_module(module: ModuleType) -> None:
            run(module)
            with self.guard.lock:
                self.guard.install(module)

        loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec
