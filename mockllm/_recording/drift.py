"""``python -m mockllm drift DIR --upstream URL``: has the provider changed shape?

Each recorded request is sent again and the new reply is compared with the recorded one
by shape, never by content: the status, the order of a stream's event types (repeats
collapsed: 40 text deltas or 38 is content), and per event type (or for the body) the
field paths and their JSON types (``choices[].delta.content: string``; null is no type
of its own, so a field that is sometimes null is not drift). Any difference is drift, and
the command exits 1.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from mockllm._recording.capture import Capture, exchange_request
from mockllm._recording.format import Exchange, ExchangeResponse
from mockllm._recording.proxy import Upstreams
from mockllm._recording.store import load_directory

__all__ = ["DriftReport", "check_drift", "shape_of"]

_KEYS = {
    "openai-chat": ("MOCKLLM_RECORD_OPENAI_API_KEY", "authorization", "Bearer {}"),
    "openai-responses": ("MOCKLLM_RECORD_OPENAI_API_KEY", "authorization", "Bearer {}"),
    "anthropic-messages": ("MOCKLLM_RECORD_ANTHROPIC_API_KEY", "x-api-key", "{}"),
}


def _type(value: Any) -> str:
    return {bool: "boolean", int: "number", float: "number", str: "string", list: "array", dict: "object"}.get(
        type(value), "null"
    )


def _fields(value: Any, where: str, into: dict[str, set[str]]) -> None:
    kind = _type(value)
    if where:
        into.setdefault(where, set())
        if kind != "null":
            into[where].add(kind)
    if isinstance(value, dict):
        for key, item in value.items():
            _fields(item, f"{where}.{key}" if where else key, into)
    elif isinstance(value, list):
        for item in value:
            _fields(item, f"{where}[]", into)


def _event_type(event: Any) -> str:
    if event.data is None:
        return event.event or ("[DONE]" if event.text == "[DONE]" else "text" if event.text is not None else "raw")
    data = event.data if isinstance(event.data, dict) else {}
    if event.event or isinstance(data.get("type"), str):
        return str(event.event or data["type"])
    if "error" in data:
        return "error"
    return "chunk" if data.get("choices") else "usage" if "usage" in data else "chunk"


@dataclass
class Shape:
    status: int
    events: list[str] | None
    fields: dict[str, dict[str, set[str]]]


def shape_of(response: ExchangeResponse) -> Shape:
    """The shape of a reply (see the module docstring)."""
    fields: dict[str, dict[str, set[str]]] = {}
    if response.events is None:
        _fields(response.body, "", fields.setdefault("body", {}))
        return Shape(response.status, None, fields)
    order: list[str] = []
    for event in response.events:
        kind = _event_type(event)
        if not order or order[-1] != kind:
            order.append(kind)
        if event.data is not None:
            _fields(event.data, "", fields.setdefault(kind, {}))
    return Shape(response.status, order, fields)


def shape_differences(recorded: ExchangeResponse, now: ExchangeResponse) -> list[str]:
    before, after = shape_of(recorded), shape_of(now)
    out = []
    if before.status != after.status:
        out.append(f"status {before.status} is now {after.status}")
    if (before.events is None) != (after.events is None):
        out.append("the reply was " + ("a stream" if before.events is not None else "one body") + " and is no longer")
    elif before.events != after.events:
        out.append(f"event order {' > '.join(before.events or [])} is now {' > '.join(after.events or [])}")
    for kind in sorted(set(before.fields) | set(after.fields)):
        was, now_fields = before.fields.get(kind, {}), after.fields.get(kind, {})
        if not was or not now_fields:
            continue  # a whole event type appearing or going is in the order already
        for path in sorted(set(was) - set(now_fields)):
            out.append(f"{kind}: field {path} is gone")
        for path in sorted(set(now_fields) - set(was)):
            out.append(f"{kind}: field {path} is new")
        for path in sorted(set(was) & set(now_fields)):
            if was[path] and now_fields[path] and not was[path] & now_fields[path]:
                types = "/".join(sorted(was[path])), "/".join(sorted(now_fields[path]))
                out.append(f"{kind}: field {path} was {types[0]}, is now {types[1]}")
    return out


@dataclass
class DriftReport:
    checked: int = 0
    findings: list[tuple[str, list[str]]] = field(default_factory=list)

    @property
    def drifted(self) -> bool:
        return bool(self.findings)

    def describe(self) -> str:
        if not self.findings:
            return f"No drift: {self.checked} recorded exchange(s) answered in the same shape."
        lines = [f"Drift in {len(self.findings)} of {self.checked} recorded exchange(s):"]
        for label, differences in self.findings:
            lines.append(f"  {label}")
            lines.extend(f"    - {d}" for d in differences)
        return "\n".join(lines)


def _resend(client: httpx.Client, upstream: str, exchange: Exchange) -> Exchange:
    request = exchange.request
    body = request.body_bytes()
    headers = {**request.headers, "content-type": "application/json"}
    if request.protocol in _KEYS:
        variable, header, form = _KEYS[request.protocol]
        if os.environ.get(variable):
            headers[header] = form.format(os.environ[variable])
    capture = Capture(exchange_request(request.method, request.path, [], headers, body))
    url = upstream + request.path
    with client.stream(request.method, url, headers=headers, params=request.query, content=body) as reply:
        capture.started(reply.status_code, reply.headers.multi_items())
        for chunk in reply.iter_bytes():
            capture.chunk(chunk)
    return capture.finished()


def check_drift(folder: Path | str, upstreams: Upstreams, *, client: httpx.Client | None = None) -> DriftReport:
    """Send every recorded request under ``folder`` again and compare the shapes."""
    report = DriftReport()
    http = client if client is not None else httpx.Client(timeout=httpx.Timeout(600.0, connect=10.0))
    try:
        for path, recording in load_directory(folder):
            for i, exchange in enumerate(recording.exchanges):
                label = f"{path.name} (exchange {i}: {exchange.request.method} {exchange.request.path})"
                upstream = upstreams.for_path(exchange.request.path)
                if upstream is None:
                    report.findings.append((label, ["no upstream is set for this path"]))
                    continue
                report.checked += 1
                try:
                    now = _resend(http, upstream, exchange)
                except httpx.HTTPError as exc:
                    report.findings.append((label, [f"the upstream could not be reached: {exc}"]))
                    continue
                differences = shape_differences(exchange.response, now.response)
                if differences:
                    report.findings.append((label, differences))
    finally:
        if client is None:
            http.close()
    return report
