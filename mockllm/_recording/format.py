"""What a recording keeps, and its file: one JSON file holding exchanges in order.

::

    {
      "format": "mockllm-recording",
      "version": 1,
      "exchanges": [
        {
          "request": {"method": "POST", "path": "/v1/chat/completions", "protocol": "openai-chat",
                      "body": {"model": "gpt-4o", "messages": [...], "stream": true}},
          "response": {
            "status": 200,
            "headers": {"content-type": "text/event-stream", "x-request-id": "req_1"},
            "events": [
              {"delay_ms": 212.4, "data": {"id": "chatcmpl-1", "choices": [...]}},
              {"delay_ms": 3.1, "text": "[DONE]"}
            ]
          }
        }
      ]
    }

A request keeps its method, path, scrubbed query, protocol, the few request headers
that change an answer (``anthropic-version``, ``*-beta``) and the body as sent (parsed
JSON, ``body_text``, or ``body_base64`` when not UTF-8). A response keeps its status, the provider headers a client
reads (request id, rate limits, retry hints, content type: ``mockllm._recording.scrub``)
and either ``body`` / ``body_text`` / ``body_base64`` (bytes that are not UTF-8, such as
Bedrock's binary event stream, kept exactly) or, for a stream, every event exactly as sent with
the delay before it (``mockllm._recording.sse``); ``interrupted`` says how a stream that
did not end cleanly ended. Keys come in a fixed order and each event is one line, so a
re-recording shows as a small diff. A file that is not valid JSON or not this shape is a
``RecordingError`` naming the file and line.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from mockllm._exceptions import FileError

__all__ = [
    "FORMAT",
    "VERSION",
    "Exchange",
    "Recording",
    "RecordingError",
    "RecordedEvent",
    "ExchangeRequest",
    "ExchangeResponse",
    "dump_recording",
    "load_recording",
]

FORMAT: Literal["mockllm-recording"] = "mockllm-recording"
VERSION: Literal[1] = 1


class RecordingError(FileError):
    """A recording file that cannot be used; the message names the file and line."""


class _Strict(BaseModel):
    # Built on first use: the recording proxy announces itself before it writes a file.
    model_config = ConfigDict(extra="forbid", defer_build=True)


class ExchangeRequest(_Strict):
    method: str = "POST"
    path: str
    protocol: str | None = None
    query: dict[str, str] = Field(default_factory=dict)
    headers: dict[str, str] = Field(default_factory=dict)
    body: Any = None
    body_text: str | None = None
    body_base64: str | None = None
    """A body that is not UTF-8, byte for byte (a text body would replace its bytes)."""

    def body_for_match(self) -> Any:
        """The body as a signature compares it (``mockllm._recording.matching``)."""
        if self.body_base64 is not None:
            return {"body_base64": self.body_base64}
        return self.body if self.body_text is None else self.body_text

    def body_bytes(self) -> bytes:
        """The body's bytes, as sent (a JSON body as compact JSON)."""
        if self.body_base64 is not None:
            return base64.b64decode(self.body_base64)
        if self.body_text is not None:
            return self.body_text.encode()
        return b"" if self.body is None else json.dumps(self.body).encode()


class RecordedEvent(_Strict):
    """One SSE event: ``data`` (JSON), ``text`` (a plain data line) or ``raw`` bytes."""

    delay_ms: float = Field(ge=0, allow_inf_nan=False)
    event: str | None = None
    data: dict[str, Any] | list[Any] | None = None
    text: str | None = None
    raw: str | None = None
    encoding: Literal["utf-8", "latin-1"] | None = None

    @model_validator(mode="after")
    def _one_payload(self) -> RecordedEvent:
        given = [name for name in ("data", "text", "raw") if getattr(self, name) is not None]
        if len(given) != 1:
            raise ValueError(f"an event holds exactly one of 'data', 'text' or 'raw', got {given or 'none'}")
        if self.raw is not None and self.event is not None:
            raise ValueError("a 'raw' event carries its own 'event:' line; drop 'event'")
        return self

    def as_record(self) -> dict[str, Any]:
        return self.model_dump(exclude_none=True)


class ExchangeResponse(_Strict):
    status: int = Field(ge=100, le=599)
    headers: dict[str, str] = Field(default_factory=dict)
    body: Any = None
    body_text: str | None = None
    body_base64: str | None = None
    """A body that is not UTF-8 (Bedrock's ``application/vnd.amazon.eventstream``), byte for byte."""
    events: list[RecordedEvent] | None = None
    interrupted: str | None = None
    """How a stream that did not end cleanly ended (the upstream's error), if it did not."""

    @property
    def streamed(self) -> bool:
        return self.events is not None


class Exchange(_Strict):
    request: ExchangeRequest
    response: ExchangeResponse


class Recording(_Strict):
    format: Literal["mockllm-recording"] = FORMAT
    version: Literal[1] = VERSION
    exchanges: list[Exchange] = Field(default_factory=list)


# -- writing ---------------------------------------------------------------------------

_REQUEST_KEYS = ("method", "path", "protocol", "query", "headers", "body", "body_text", "body_base64")
_RESPONSE_KEYS = ("status", "headers", "body", "body_text", "body_base64", "interrupted", "events")


def _ordered(model: BaseModel, keys: tuple[str, ...]) -> dict[str, Any]:
    values = model.model_dump(exclude_none=True)
    if isinstance(model, ExchangeResponse) and model.events is not None:
        values["events"] = [event.as_record() for event in model.events]
    return {key: values[key] for key in keys if key in values and values[key] != {}}


def _document(recording: Recording) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "version": VERSION,
        "exchanges": [
            {"request": _ordered(ex.request, _REQUEST_KEYS), "response": _ordered(ex.response, _RESPONSE_KEYS)}
            for ex in recording.exchanges
        ],
    }


def _write(value: Any, indent: int, out: list[str], *, one_line_items: bool = False) -> None:
    pad = "  " * (indent + 1)
    if isinstance(value, dict) and value:
        out.append("{\n")
        for i, (key, item) in enumerate(value.items()):
            out.append(f"{pad}{json.dumps(key)}: ")
            _write(item, indent + 1, out, one_line_items=key == "events")
            out.append(",\n" if i < len(value) - 1 else "\n")
        out.append("  " * indent + "}")
    elif isinstance(value, list) and value:
        out.append("[\n")
        for i, item in enumerate(value):
            out.append(pad)
            if one_line_items:
                out.append(json.dumps(item, ensure_ascii=False))
            else:
                _write(item, indent + 1, out)
            out.append(",\n" if i < len(value) - 1 else "\n")
        out.append("  " * indent + "]")
    else:
        out.append(json.dumps(value, ensure_ascii=False))


def dump_recording(recording: Recording) -> str:
    """The file text of ``recording``: indented JSON, one line per stream event."""
    out: list[str] = []
    _write(_document(recording), 0, out)
    out.append("\n")
    return "".join(out)


# -- reading ---------------------------------------------------------------------------


def load_recording(path: Path | str) -> Recording:
    """Read and check one recording file; ``RecordingError`` says where it is wrong."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RecordingError(path, None, f"cannot read the file: {exc}") from exc
    return parse_recording(text, path)


def parse_recording(text: str, path: Path | str = "<recording>") -> Recording:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RecordingError(
            path, exc.lineno, f"not valid JSON ({exc.msg}); a truncated or hand-edited recording? Re-record it."
        ) from exc
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise RecordingError(path, 1, f'not a mockllm recording: the file needs "format": "{FORMAT}"')
    if data.get("version") != VERSION:
        raise RecordingError(
            path,
            _line_of(text, ("version",)),
            f"recording format version {data.get('version')!r} is not one this mockllm reads (it reads {VERSION})",
        )
    try:
        return Recording.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = tuple(first["loc"])
        field = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc).lstrip(".")
        raise RecordingError(path, _line_of(text, loc), f"{field}: {first['msg']}") from exc


def _line_of(text: str, loc: tuple[Any, ...]) -> int | None:
    """The 1-based line of the field at ``loc`` (JSON read as YAML keeps line marks)."""
    import yaml  # only to explain a bad file

    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return None
    line = node.start_mark.line + 1 if node is not None else None
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            found = next((v for k, v in node.value if k.value == part), None)
            if found is None:
                break
            node = found
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
        else:
            break
        line = node.start_mark.line + 1
    return line
