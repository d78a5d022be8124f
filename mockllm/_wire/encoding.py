"""How the codecs write what they send: compact JSON, and server-sent events."""

from __future__ import annotations

import json
from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]
from typing import Any

__all__ = ["SSE_MEDIA_TYPE", "dumps", "sse_event"]

SSE_MEDIA_TYPE = "text/event-stream; charset=utf-8"

# ``json.dumps(obj, separators=(",", ":"), ensure_ascii=False)``, its encoder built once
# (``json.dumps`` builds one per call given options; a stream dumps a few per reply),
# and its C part too where there is one (``JSONEncoder.encode`` builds that per call,
# with the table that finds cycles, which nothing the mock renders has).
_compact = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)
_c_compact = (
    c_make_encoder(None, _compact.default, encode_basestring, None, ":", ",", False, False, True)
    if c_make_encoder is not None
    else None
)


def dumps(obj: Any) -> str:
    """Compact JSON, as the providers send it (and the same bytes on every run)."""
    if isinstance(obj, str):  # what ``_compact.encode`` does with a text, less its call
        return encode_basestring(obj)
    if _c_compact is None:
        return _compact.encode(obj)
    return "".join(_c_compact(obj, 0))


def sse_event(data: Any, event: str | None = None) -> bytes:
    """One server-sent event: optional ``event:`` line, one ``data:`` line, blank line."""
    payload = data if isinstance(data, str) else dumps(data)
    if event is None:
        return f"data: {payload}\n\n".encode()
    return f"event: {event}\ndata: {payload}\n\n".encode()
