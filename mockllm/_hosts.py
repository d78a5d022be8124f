"""The providers' default hosts, and the host patterns ``intercept``/``refuse_hosts`` take.

A pattern is one of

- a host name, ``api.openai.com``: that host on any port;
- a host and a port, ``localhost:11434``: that port only (Ollama's default, where other
  ports of the same host are the test's own servers);
- ``*`` and a suffix that starts with ``.`` or ``-``, ``*.openai.azure.com``: every host
  that ends with the suffix (an Azure resource's own host, a Vertex AI region's).

``DEFAULT_HOSTS`` are the hosts an SDK sends to when nobody gave it a base URL: the ones
a client a test forgot to point at the mock would reach, for every protocol the mock
serves.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

__all__ = ["DEFAULT_HOSTS", "HostPatterns", "telemetry_refusal"]

DEFAULT_HOSTS: tuple[str, ...] = (
    "api.openai.com",
    "api.anthropic.com",
    # Gemini: the Gemini API, and Vertex AI's global and regional endpoints.
    "generativelanguage.googleapis.com",
    "aiplatform.googleapis.com",
    "*-aiplatform.googleapis.com",
    # Azure OpenAI: a resource's own host, under each of Azure's domains for it.
    "*.openai.azure.com",
    "*.cognitiveservices.azure.com",
    "*.services.ai.azure.com",
    # Ollama: a local server on its default port.
    "localhost:11434",
    "127.0.0.1:11434",
)

_TELEMETRY = {
    ("api.openai.com", "/v1/traces/ingest"): "openai-agents' trace export (its BatchTraceProcessor's thread)",
}
"""Requests to a provider's host that are no model call, by host and path."""


def telemetry_refusal(host: str, path: str, shown: str) -> str | None:
    """The refusal's message for a request to ``host`` and ``path`` that is a library's
    telemetry, not a model call; None for any other. Such a request is still refused (a
    test's traces never reach the provider, whose key the environment may hold) but not
    reported: it comes from a timer's thread, every few seconds, so whether one falls inside
    a test is chance, and nothing the app asked the model is in it."""
    what = _TELEMETRY.get((host, path))
    if what is None:
        return None
    return (
        f"mockllm refused {shown} before it left the process: {what}, not a model call, so it does not fail the "
        "test. To send none while testing, turn tracing off: agents.set_tracing_disabled(True), or the "
        "environment variable OPENAI_AGENTS_DISABLE_TRACING=1 before the first run."
    )


_SHAPES = (
    "a host name ('api.openai.com'), a host and port ('localhost:11434') or '*' and a suffix "
    "starting with '.' or '-' ('*.openai.azure.com')"
)


@dataclass(frozen=True)
class HostPatterns:
    """A set of host patterns, checked once; ``covers(host, port)`` on each request."""

    hosts: frozenset[str]
    ports: frozenset[tuple[str, int]]
    suffixes: tuple[str, ...]

    @classmethod
    def parse(cls, patterns: Any) -> HostPatterns:
        """Check ``patterns`` (an iterable of strings, see the module) or raise saying which
        one is wrong and what a pattern may be."""
        if isinstance(patterns, str) or not isinstance(patterns, Iterable):
            raise TypeError(f"hosts must be a tuple of host names such as ('api.openai.com',), not {patterns!r}.")
        hosts: set[str] = set()
        ports: set[tuple[str, int]] = set()
        suffixes: list[str] = []
        for pattern in patterns:
            if not isinstance(pattern, str) or not pattern or any(c in pattern for c in "/@ "):
                raise ValueError(f"hosts must hold bare host names: {_SHAPES}, no scheme or path; got {pattern!r}.")
            name = pattern.lower()
            if name.startswith("*"):
                suffix = name[1:]
                if suffix[:1] not in (".", "-") or len(suffix) < 2 or "*" in suffix or ":" in suffix:
                    raise ValueError(f"hosts: {pattern!r} is not a pattern; a pattern is {_SHAPES}.")
                suffixes.append(suffix)
            elif ":" in name:
                host, _, port = name.rpartition(":")
                if not host or ":" in host or not port.isdigit() or not 0 < int(port) < 65536:
                    raise ValueError(f"hosts: {pattern!r} is not a host and port; a pattern is {_SHAPES}.")
                ports.add((host, int(port)))
            elif "*" in name:
                raise ValueError(f"hosts: {pattern!r} puts '*' inside a name; a pattern is {_SHAPES}.")
            else:
                hosts.add(name)
        if not (hosts or ports or suffixes):
            raise ValueError("hosts is empty, so nothing would be intercepted; name at least one host.")
        return cls(frozenset(hosts), frozenset(ports), tuple(suffixes))

    def covers(self, host: str, port: int | None) -> bool:
        """Whether a request to ``host`` (lower-case, as httpx gives it) on ``port`` (None:
        the scheme's default) is one of these."""
        if host in self.hosts:
            return True
        if port is not None and (host, port) in self.ports:
            return True
        return any(host.endswith(suffix) for suffix in self.suffixes)

    def __str__(self) -> str:
        if self == _DEFAULT:
            return "the providers' default hosts (OpenAI, Anthropic, Gemini, Vertex AI, Azure OpenAI, Ollama)"
        shown = [*self.hosts, *(f"{host}:{port}" for host, port in self.ports), *(f"*{s}" for s in self.suffixes)]
        return ", ".join(sorted(shown))


_DEFAULT = HostPatterns.parse(DEFAULT_HOSTS)
