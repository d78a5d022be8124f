"""Which recorded exchange answers a request: a signature of what matters, and the diff
that explains a miss.

A request's signature is its method, its path (decoded: where Gemini, Bedrock and Azure
name the model or deployment, and where Gemini and Bedrock say whether the reply
streams), its beta headers (``anthropic-beta``, ``openai-beta``) and its whole JSON body — model, system prompt,
tools, messages, tool results, sampling parameters — after the normalisers:

- ``ignore``: body fields left out of the match, as dotted paths with ``*`` for every
  item of a list (``temperature``, ``messages.*.name``). By default ``metadata``,
  ``user``, ``safety_identifier`` and ``prompt_cache_key``, which identify the caller,
  not the question.
- ``replace``: ``(regex, replacement)`` pairs applied to every string of the body, for
  volatile text (a date in a system prompt, a generated id):
  ``(r"\\d{4}-\\d{2}-\\d{2}", "<date>")``.

Two requests with the same signature are the same question. A request no recording
matches gets ``nearest``: the recording whose body differs in fewest fields, and the
differences field by field (``messages[3].content differs``).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from mockllm._limits import clip_text
from mockllm._recording.format import ExchangeRequest

__all__ = ["DEFAULT_IGNORE", "RequestMatcher", "field_diff", "signature_path"]

DEFAULT_IGNORE = ("metadata", "user", "safety_identifier", "prompt_cache_key")
MATCHED_HEADERS = ("anthropic-beta", "openai-beta")
"""Request headers that change an answer, so a part of the signature (the API version
header is kept in a recording but not matched: SDK upgrades change it)."""


@dataclass(frozen=True)
class RequestMatcher:
    """How requests are compared (see the module docstring)."""

    ignore: Sequence[str] = DEFAULT_IGNORE
    replace: Sequence[tuple[str, str]] = ()
    _patterns: tuple[tuple[re.Pattern[str], str], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        patterns = []
        for pattern, replacement in self.replace:
            try:
                patterns.append((re.compile(pattern), replacement))
            except re.error as exc:
                raise ValueError(f"normaliser {pattern!r} is not a valid regular expression: {exc}") from None
        object.__setattr__(self, "_patterns", tuple(patterns))

    def normalised(self, body: Any) -> Any:
        """``body`` with the ignored fields dropped and the replacements made."""
        for dotted in self.ignore:
            body = _without(body, dotted.split("."))
        if self._patterns:
            body = _replaced(body, self._patterns)
        return body

    def key(self, method: str, path: str, headers: dict[str, str], body: Any) -> str:
        """The signature of a request (``body`` parsed JSON, or text)."""
        betas = {name: value for name, value in headers.items() if name in MATCHED_HEADERS}
        canonical = json.dumps(
            [method.upper(), signature_path(path), betas, self.normalised(body)], sort_keys=True, ensure_ascii=False
        )
        return hashlib.blake2b(canonical.encode(), digest_size=16).hexdigest()

    def key_of(self, request: ExchangeRequest) -> str:
        return self.key(request.method, request.path, request.headers, request.body_for_match())


def signature_path(path: str) -> str:
    """The path as a signature compares it: decoded (a recording keeps it as sent, the
    server hands the engine the decoded one), without a trailing slash."""
    return unquote(path).rstrip("/") or "/"


def _without(value: Any, parts: list[str]) -> Any:
    if not parts:
        return value
    head, rest = parts[0], parts[1:]
    if head == "*" and isinstance(value, list):
        return [_without(item, rest) for item in value]
    if isinstance(value, dict) and head in value:
        if not rest:
            return {k: v for k, v in value.items() if k != head}
        return {**value, head: _without(value[head], rest)}
    return value


def _replaced(value: Any, patterns: Iterable[tuple[re.Pattern[str], str]]) -> Any:
    if isinstance(value, str):
        for pattern, replacement in patterns:
            value = pattern.sub(replacement, value)
        return value
    if isinstance(value, list):
        return [_replaced(item, patterns) for item in value]
    if isinstance(value, dict):
        return {key: _replaced(item, patterns) for key, item in value.items()}
    return value


def _show(value: Any) -> str:
    return clip_text(json.dumps(value, ensure_ascii=False), 80)


def field_diff(sent: Any, recorded: Any, where: str = "") -> list[str]:
    """What differs between a request body and a recorded one, field by field."""
    name = where or "the body"
    if isinstance(sent, dict) and isinstance(recorded, dict):
        out: list[str] = []
        for key in list(recorded) + [k for k in sent if k not in recorded]:
            path = f"{where}.{key}" if where else str(key)
            if key not in sent:
                out.append(f"{path} is missing (recorded: {_show(recorded[key])})")
            elif key not in recorded:
                out.append(f"{path} is new (sent: {_show(sent[key])})")
            else:
                out.extend(field_diff(sent[key], recorded[key], path))
        return out
    if isinstance(sent, list) and isinstance(recorded, list):
        out = []
        for i in range(max(len(sent), len(recorded))):
            path = f"{where}[{i}]"
            if i >= len(sent):
                out.append(f"{path} is missing (recorded: {_show(recorded[i])})")
            elif i >= len(recorded):
                out.append(f"{path} is new (sent: {_show(sent[i])})")
            else:
                out.extend(field_diff(sent[i], recorded[i], path))
        return out
    if sent == recorded and type(sent) is type(recorded):
        return []
    return [f"{name} differs (sent: {_show(sent)}, recorded: {_show(recorded)})"]
