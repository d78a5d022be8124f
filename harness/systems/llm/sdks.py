"""Which official SDK speaks which protocol, importing it (or saying which extra brings
it), and the HTTP library each SDK sends through.

``anthropic-messages`` and ``openai-chat`` come with the ``agent`` extra; ``gemini``
(``google-genai``) with the ``gemini`` extra. ``installed_protocols`` is what the
model client can speak here: the two of the ``agent`` extra always (a missing SDK then
fails with the install command where it is used), Gemini where google-genai is installed.
"""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType

from harness.exceptions import missing_extra

__all__ = ["DEFAULT_MODEL", "http_library", "installed_protocols", "require_sdk", "sdk_for"]

DEFAULT_MODEL = {"anthropic-messages": "claude-mock-1", "openai-chat": "gpt-mock", "gemini": "gemini-mock-flash"}
"""The protocols ``model_client`` speaks, each with the model it asks for by default."""

_SDKS = {
    "anthropic": "anthropic",
    "anthropic-messages": "anthropic",
    "openai": "openai",
    "openai-chat": "openai",
    "gemini": "google.genai",
}
_EXTRAS = {"google.genai": "gemini"}
"""The SDKs not in the ``agent`` extra, and the extra that brings each."""
_DISTRIBUTIONS = {"google.genai": "google-genai"}
"""The package to name where its import name is not it."""


def _require(name: str, *, needed_by: str, extra: str) -> ModuleType:
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        # "google.genai" is missing as "google" where no google package is installed at all.
        if exc.name not in (name, name.partition(".")[0]):
            raise  # the package is there but broken: its own error says more
        raise missing_extra(_DISTRIBUTIONS.get(name, name), needed_by=needed_by, extra=extra) from exc


def require_sdk(name: str, *, needed_by: str) -> ModuleType:
    """The SDK ``name`` (``openai``, ``anthropic``, ``google.genai``), imported; or
    ``MissingExtra`` naming the extra that installs it (``agent``, ``gemini``)."""
    return _require(name, needed_by=needed_by, extra=_EXTRAS.get(name, "agent"))


def sdk_for(protocol: str) -> ModuleType:
    """The official SDK module that speaks ``protocol`` (``anthropic``, ``openai`` or
    ``google.genai``), imported; a ``MissingExtra`` naming its extra if it is not installed."""
    if protocol not in DEFAULT_MODEL:
        raise ValueError(f"unknown protocol {protocol!r}; use one of {', '.join(map(repr, DEFAULT_MODEL))}")
    return require_sdk(_SDKS[protocol], needed_by=f"harness.systems.llm's {protocol} client")


def installed_protocols() -> tuple[str, ...]:
    """The protocols ``model_client`` can speak here: Gemini only where google-genai is
    installed (looked up, not imported)."""
    try:
        gemini = importlib.util.find_spec("google.genai") is not None
    except ModuleNotFoundError:  # no "google" package at all
        gemini = False
    return tuple(p for p in DEFAULT_MODEL if p != "gemini" or gemini)


def http_library(sdk: ModuleType) -> ModuleType:
    """The HTTP library an official SDK is built on, whose clients it takes (as
    ``http_client=``, or google-genai's ``httpx_async_client``): ``httpx2`` (openai>=3,
    anthropic>=1) or ``httpx`` (openai 2.x, anthropic 0.x), read off its default client's
    base classes; for google-genai, which takes either, ``httpx2`` where it is installed
    (google-genai 3.x needs it), else ``httpx``."""
    # httpx imported only where it is the answer: the one installed for its command line
    # brings rich and pygments with it, a tenth of a second for a service that never uses it.
    if sdk.__name__ == "google.genai":
        return importlib.import_module("httpx" if importlib.util.find_spec("httpx2") is None else "httpx2")
    bases = {cls.__module__.partition(".")[0] for cls in sdk.DefaultHttpxClient.__mro__}
    if "httpx2" not in bases:
        return importlib.import_module("httpx")
    return _require("httpx2", needed_by=f"{sdk.__name__} {sdk.__version__}", extra="httpx2")
