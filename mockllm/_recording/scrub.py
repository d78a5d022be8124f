"""Secrets never reach a recording file.

Three guards, in order:

1. Only named headers are kept (``kept_response_headers``, ``kept_request_headers``):
   ``Authorization``, ``api-key``, ``x-api-key``, cookies and every other header are
   dropped; query parameters whose name looks like a credential (``key``, ``api_key``,
   ``token``, ``sig``...) are dropped too.
2. The user's scrubbers run over request and response bodies and stream events: a
   regular expression (``str`` or ``re.Pattern``) has every match replaced by
   ``[scrubbed]``; a callable gets each JSON value (a request body, a response body, an
   event's data) and returns the value to keep.
3. Before any write, ``find_secret`` scans every string of the recording for key-shaped
   text (``sk-…``, ``sk-ant-…``, ``AIza…``, ``AKIA…``/``ASIA…``), a ``body_base64``
   body's bytes included; ``SecretInRecording`` refuses the write naming the file and
   the field. (Scrubbers do not rewrite a ``body_base64`` body: its frames carry checksums.)
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Union

from mockllm._exceptions import MockLLMError
from mockllm._recording.format import Exchange, Recording

__all__ = [
    "SCRUBBED",
    "Scrubber",
    "SecretInRecording",
    "check_no_secrets",
    "find_secret",
    "kept_query",
    "kept_request_headers",
    "kept_response_headers",
    "scrub_exchange",
]

SCRUBBED = "[scrubbed]"
Scrubber = Union[str, "re.Pattern[str]", Callable[[Any], Any]]

_RESPONSE_HEADERS = re.compile(
    r"^(content-type|x-request-id|request-id|retry-after|retry-after-ms|x-should-retry|"
    r"(x-)?ratelimit-.*|x-ratelimit-.*|anthropic-ratelimit-.*)$"
)
_REQUEST_HEADERS = re.compile(r"^(anthropic-version|anthropic-beta|openai-beta)$")
_CREDENTIAL_NAME = re.compile(r"(?i)(key|token|secret|sig|signature|password|passwd|auth|credential|session)")

_KEY_SHAPES = (
    ("an Anthropic API key (sk-ant-…)", re.compile(r"sk-ant-[A-Za-z0-9_-]{16,}")),
    ("an OpenAI-style API key (sk-…)", re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{16,}")),
    ("a Google API key (AIza…)", re.compile(r"AIza[0-9A-Za-z_-]{35}")),
    ("an AWS access key id (AKIA…)", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
)


class SecretInRecording(MockLLMError, ValueError):
    """A recording about to be written holds key-shaped text; nothing was written."""

    def __init__(self, path: Path | str, field: str, kind: str) -> None:
        super().__init__(
            f"{path}: refusing to write the recording: {field} holds what looks like {kind}. "
            "Scrub it (record --scrub REGEX, or a scrubber callable) and record again."
        )
        self.path = Path(path)
        self.field = field


def kept_response_headers(headers: Iterable[tuple[str, str]]) -> dict[str, str]:
    """The provider headers a client reads, by lower-case name, in name order."""
    kept = {name.lower(): value for name, value in headers if _RESPONSE_HEADERS.match(name.lower())}
    return dict(sorted(kept.items()))


def kept_request_headers(headers: Iterable[tuple[str, str]]) -> dict[str, str]:
    """The request headers that change a provider's answer (API version and betas)."""
    kept = {name.lower(): value for name, value in headers if _REQUEST_HEADERS.match(name.lower())}
    return dict(sorted(kept.items()))


def kept_query(params: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Query parameters, minus those whose name looks like a credential."""
    return {name: value for name, value in params if not _CREDENTIAL_NAME.search(name)}


_Compiled = Union["re.Pattern[str]", Callable[[Any], Any]]


def _compiled(scrubbers: Sequence[Scrubber]) -> list[_Compiled]:
    compiled: list[_Compiled] = []
    for scrubber in scrubbers:
        if isinstance(scrubber, str):
            try:
                compiled.append(re.compile(scrubber))
            except re.error as exc:
                raise ValueError(f"scrubber {scrubber!r} is not a valid regular expression: {exc}") from None
        elif isinstance(scrubber, re.Pattern) or callable(scrubber):
            compiled.append(scrubber)
        else:
            raise TypeError(f"a scrubber is a regular expression or a callable, got {scrubber!r}")
    return compiled


def _replace_strings(value: Any, pattern: re.Pattern[str]) -> Any:
    if isinstance(value, str):
        return pattern.sub(SCRUBBED, value)
    if isinstance(value, list):
        return [_replace_strings(item, pattern) for item in value]
    if isinstance(value, dict):
        return {key: _replace_strings(item, pattern) for key, item in value.items()}
    return value


def _apply(value: Any, scrubbers: Sequence[_Compiled]) -> Any:
    for scrubber in scrubbers:
        if value is None:
            return None
        value = _replace_strings(value, scrubber) if isinstance(scrubber, re.Pattern) else scrubber(value)
    return value


def scrub_exchange(exchange: Exchange, scrubbers: Sequence[Scrubber]) -> Exchange:
    """``exchange`` with the user's scrubbers applied to its bodies and events."""
    if not scrubbers:
        return exchange
    compiled = _compiled(scrubbers)
    patterns: list[_Compiled] = [s for s in compiled if isinstance(s, re.Pattern)]
    request = exchange.request.model_copy(
        update={
            "body": _apply(exchange.request.body, compiled),
            "body_text": _apply(exchange.request.body_text, patterns),
        }
    )
    response = exchange.response
    events = None
    if response.events is not None:
        events = [
            event.model_copy(
                update={
                    "data": _apply(event.data, compiled),
                    "text": _apply(event.text, patterns),
                    "raw": _apply(event.raw, patterns),
                }
            )
            for event in response.events
        ]
    response = response.model_copy(
        update={
            "body": _apply(response.body, compiled),
            "body_text": _apply(response.body_text, patterns),
            "events": events,
        }
    )
    return Exchange(request=request, response=response)


def _strings(value: Any, where: str) -> Iterable[tuple[str, str]]:
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield f"{where}.{key}", str(key)
            yield from _strings(item, f"{where}.{key}")
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            yield from _strings(item, f"{where}[{i}]")


def _binary_bodies(recording: Recording) -> Iterable[tuple[str, str]]:
    """Each ``body_base64`` body's bytes, as text the key shapes can be found in."""
    for i, exchange in enumerate(recording.exchanges):
        if exchange.request.body_base64 is not None:
            text = base64.b64decode(exchange.request.body_base64).decode("latin-1")
            yield f"recording.exchanges[{i}].request.body_base64", text
        if exchange.response.body_base64 is not None:
            text = base64.b64decode(exchange.response.body_base64).decode("latin-1")
            yield f"recording.exchanges[{i}].response.body_base64", text


def find_secret(recording: Recording) -> tuple[str, str] | None:
    """(field, kind) of the first key-shaped string in ``recording``, or None."""
    document = recording.model_dump(exclude_none=True)
    for field, text in (*_strings(document, "recording"), *_binary_bodies(recording)):
        for kind, shape in _KEY_SHAPES:
            if shape.search(text):
                return field.removeprefix("recording."), kind
    return None


def check_no_secrets(recording: Recording, path: Path | str) -> None:
    """Raise ``SecretInRecording`` if ``recording`` (to be written at ``path``) holds a key."""
    found = find_secret(recording)
    if found is not None:
        raise SecretInRecording(path, *found)
