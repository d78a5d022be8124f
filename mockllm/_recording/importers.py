"""Other tools' cassettes and fixtures, brought in: ``python -m mockllm import FILE --out DIR``.

- **vcrpy / pytest-recording cassettes** (YAML or JSON: ``interactions`` of ``request``
  ``{method, uri, body, headers}`` and ``response`` ``{status: {code, message},
  headers, body: {string}}``, or the older httpx form ``{status_code, content}``) become
  one recording, exact: a streamed body is cut back into its events (vcrpy kept them as
  one string; their timing is lost, so their delays are 0), a gzip or deflate body is
  decoded, and the usual scrubbing applies (credentials dropped, key-shaped text refused).
- **aimock fixture files** (``{"fixtures": [{"match": {"userMessage": ...},
  "response": {"content" | "toolCalls" | "reasoning" | "blocks" | "error"}}]}``) hold no
  requests to replay, so they become registered scripts: one chain per ``userMessage``,
  its fixtures in order (a tool call, then the answer after the tool result), written as
  ``<name>.scripts.json`` and loaded with ``serve --scripts FILE`` or ``load_scripts``.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import yaml

from mockllm._recording.capture import body_fields, exchange_request
from mockllm._recording.format import Exchange, ExchangeResponse, RecordedEvent, Recording, RecordingError
from mockllm._recording.scrub import kept_response_headers
from mockllm._recording.sse import event_record, parse_events
from mockllm._recording.store import write_recording

__all__ = ["import_file", "load_scripts", "scripts_from_aimock", "recording_from_vcr"]


def import_file(source: Path | str, folder: Path | str) -> list[Path]:
    """Convert ``source`` (a vcrpy cassette or an aimock fixture file) into ``folder``."""
    source, folder = Path(source), Path(folder)
    try:
        text = source.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RecordingError(source, None, f"cannot read the file: {exc}") from exc
    try:
        data = json.loads(text) if source.suffix == ".json" else yaml.safe_load(text)
    except json.JSONDecodeError as exc:
        raise RecordingError(source, exc.lineno, f"not valid JSON: {exc.msg}") from exc
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise RecordingError(source, mark.line + 1 if mark else None, f"not valid YAML: {exc}") from exc
    if isinstance(data, dict) and isinstance(data.get("interactions"), list):
        return [write_recording(recording_from_vcr(data, source), folder / f"{source.stem}.json")]
    if isinstance(data, dict) and isinstance(data.get("fixtures"), list):
        out = folder / f"{source.stem}.scripts.json"
        folder.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(scripts_from_aimock(data, source), indent=2, ensure_ascii=False) + "\n")
        return [out]
    raise RecordingError(
        source, 1, "neither a vcrpy cassette (an 'interactions' list) nor an aimock fixture file (a 'fixtures' list)"
    )


# -- vcrpy --------------------------------------------------------------------------------


def _pairs(headers: Any) -> list[tuple[str, str]]:
    pairs = []
    for name, values in (headers or {}).items():
        for value in values if isinstance(values, list) else [values]:
            pairs.append((str(name), str(value)))
    return pairs


def _bytes(body: Any) -> bytes:
    if isinstance(body, dict):
        body = body.get("string")
    if body is None:
        return b""
    return body if isinstance(body, bytes) else str(body).encode("utf-8")


def _decoded(body: bytes, headers: list[tuple[str, str]]) -> bytes:
    encoding = next((v.lower() for k, v in headers if k.lower() == "content-encoding"), "")
    if "gzip" in encoding:
        return zlib.decompress(body, 16 + zlib.MAX_WBITS)
    if "deflate" in encoding:
        return zlib.decompress(body)
    return body


def _vcr_exchange(interaction: dict[str, Any]) -> Exchange:
    request, response = interaction["request"], interaction["response"]
    url = urlsplit(request["uri"])
    request_headers = _pairs(request.get("headers"))
    recorded = exchange_request(
        request.get("method", "POST"),
        url.path,
        parse_qsl(url.query),
        {k.lower(): v for k, v in request_headers},
        _bytes(request.get("body")),
    )
    if "status_code" in response:  # the httpx form older vcrpy wrote
        status, body = response["status_code"], _bytes(response.get("content"))
    else:
        status, body = response["status"]["code"], _bytes(response.get("body"))
    headers = _pairs(response.get("headers"))
    body = _decoded(body, headers)
    kept = kept_response_headers(headers)
    if "text/event-stream" in kept.get("content-type", ""):
        events = [RecordedEvent.model_validate(event_record(raw, 0.0)) for raw in parse_events(body)]
        reply = ExchangeResponse(status=status, headers=kept, events=events)
    else:
        reply = ExchangeResponse(status=status, headers=kept, **body_fields(body))
    return Exchange(request=recorded, response=reply)


def recording_from_vcr(cassette: dict[str, Any], source: Path | str = "<cassette>") -> Recording:
    """The recording of a vcrpy cassette's interactions, in order."""
    exchanges = []
    for i, interaction in enumerate(cassette["interactions"]):
        try:
            exchanges.append(_vcr_exchange(interaction))
        except (KeyError, TypeError, zlib.error) as exc:
            raise RecordingError(
                source, None, f"interactions[{i}] is not a vcrpy interaction ({type(exc).__name__}: {exc})"
            ) from exc
    return Recording(exchanges=exchanges)


# -- aimock ---------------------------------------------------------------------------------


def _args(value: Any) -> dict[str, Any]:
    if isinstance(value, str):
        try:
            value = json.loads(value or "{}")
        except ValueError:
            return {"_raw": value}
    return value if isinstance(value, dict) else {}


def _instruction(response: dict[str, Any]) -> dict[str, Any]:
    instruction: dict[str, Any] = {}
    messages: list[dict[str, Any]] = []
    blocks = response.get("blocks")
    if isinstance(blocks, list):
        for block in blocks:
            if block.get("type") == "text":
                messages.append({"text_message": {"text": block.get("text", "")}})
            elif block.get("type") == "toolCall":
                messages.append({"tool_call": [{"name": block["name"], "args": _args(block.get("arguments"))}]})
    if isinstance(response.get("content"), str):
        messages.append({"text_message": {"text": response["content"]}})
    calls = response.get("toolCalls")
    if isinstance(calls, list) and calls:
        messages.append({"tool_call": [{"name": c["name"], "args": _args(c.get("arguments"))} for c in calls]})
    if isinstance(response.get("reasoning"), str):
        instruction["reasoning"] = {"text": response["reasoning"]}
    error = response.get("error")
    if isinstance(error, dict):
        instruction["error"] = {
            "status": int(response.get("status", 500)),
            **{k: error[k] for k in ("message", "type") if isinstance(error.get(k), str)},
        }
    if messages:
        instruction["messages"] = messages
    return instruction


def scripts_from_aimock(data: dict[str, Any], source: Path | str = "<fixtures>") -> dict[str, Any]:
    """Registered scripts (``{"scripts": [{"match", "instruction_chain"}]}``) for aimock fixtures."""
    chains: dict[str, list[dict[str, Any]]] = {}
    for i, fixture in enumerate(data["fixtures"]):
        match, response = fixture.get("match") or {}, fixture.get("response")
        if not isinstance(response, dict):
            raise RecordingError(source, None, f"fixtures[{i}] has no 'response' object")
        text = match.get("userMessage")
        if not isinstance(text, str):
            raise RecordingError(
                source, None, f"fixtures[{i}]: only fixtures matching a userMessage string can be imported"
            )
        instruction = _instruction(response)
        if not instruction:
            raise RecordingError(source, None, f"fixtures[{i}]: a response with nothing this importer reads")
        chains.setdefault(text, []).append(instruction)
    return {"scripts": [{"match": {"text": text}, "instruction_chain": chain} for text, chain in chains.items()]}


def load_scripts(path: Path | str, mock: Any) -> list[str]:
    """Register the scripts of an imported ``*.scripts.json`` file on ``mock``; their ids."""
    from mockllm._instructions import InstructionChain
    from mockllm._registered import ScriptMatch

    data = json.loads(Path(path).read_text(encoding="utf-8"))
    ids = []
    for entry in _entries(data):
        chain = InstructionChain(instruction_chain=entry["instruction_chain"])
        ids.append(mock.script(chain, ScriptMatch(**entry.get("match", {}))).id)
    return ids


def _entries(data: Any) -> Iterable[dict[str, Any]]:
    return data.get("scripts", []) if isinstance(data, dict) else []
