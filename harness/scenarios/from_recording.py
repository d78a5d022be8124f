"""``python -m harness scenario from-recording FILE``: a recording becomes a scenario.

Each recorded exchange is one model turn; its reply (text, reasoning, tool calls, an
HTTP or mid-stream error; ``mockllm._recording.replies``) becomes one instruction of the
scenario's ``script:``, so the deterministic engine says the same under every protocol.
The prompt is the first request's first user message; the tools are the ones the first
request declared, each with the first result the recording shows being sent back for it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mockllm.testing import RecordedTurn, Recording

# ``python -m harness`` imports this module for its parser before ``replay`` starts pytest:
# mockllm and yaml are imported when a recording is converted, so that pytest still
# rewrites the modules of its plugins (anyio's among them).

__all__ = ["add_parser", "run", "scenario_from_recording"]


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            part.get("text", "")
            for part in content
            if isinstance(part, dict) and part.get("type") in ("text", "input_text")
        )
    return ""


def _first_user_text(body: dict[str, Any]) -> str:
    messages = body.get("messages")
    if messages is None:
        messages = (
            [{"role": "user", "content": body["input"]}] if isinstance(body.get("input"), str) else body.get("input")
        )
    for message in messages or []:
        if isinstance(message, dict) and message.get("role") == "user":
            text = _text_of(message.get("content"))
            if text:
                return text
    return ""


def _declared_tools(body: dict[str, Any]) -> list[dict[str, Any]]:
    tools = []
    for tool in body.get("tools") or []:
        spec = tool.get("function", tool)
        name = spec.get("name")
        if not name:
            continue
        schema = spec.get("parameters") or spec.get("input_schema") or {"type": "object", "properties": {}}
        tools.append({"name": name, "description": spec.get("description", ""), "input_schema": schema})
    return tools


def _results_sent(body: dict[str, Any]) -> dict[str, tuple[Any, bool]]:
    """tool call id -> (the result the client sent back, whether it is an error)."""
    results: dict[str, tuple[Any, bool]] = {}
    for item in body.get("messages") or body.get("input") or []:
        if not isinstance(item, dict):
            continue
        if item.get("role") == "tool":
            results[item.get("tool_call_id", "")] = (item.get("content"), False)
        elif item.get("type") == "function_call_output":
            results[item.get("call_id", "")] = (item.get("output"), False)
        elif isinstance(item.get("content"), list):
            for block in item["content"]:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    value = _text_of(block.get("content")) or block.get("content")
                    results[block.get("tool_use_id", "")] = (value, bool(block.get("is_error")))
    return results


def _instruction(turn: RecordedTurn, index: int) -> dict[str, Any]:
    instruction: dict[str, Any] = {"id": f"turn-{index + 1}"}
    if turn.reasoning:
        instruction["reasoning"] = {"text": turn.reasoning}
    messages: list[dict[str, Any]] = []
    if turn.text:
        messages.append({"text_message": {"text": turn.text}})
    if turn.tool_calls:
        messages.append({"tool_call": [{"name": name, "args": args} for _, name, args in turn.tool_calls]})
    if messages:
        instruction["messages"] = messages
    if turn.error is not None:
        error: dict[str, Any] = {"status": turn.error.status if turn.error.status >= 400 else 500}
        if turn.error.type:
            error["type"] = turn.error.type
        if turn.error.message:
            error["message"] = turn.error.message
        if turn.error.after_events is not None:
            error["after_chunks"] = turn.error.after_events
        instruction["error"] = error
    elif not messages:
        instruction["messages"] = [{"text_message": {"text": ""}}]
    return instruction


def _parsed_result(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def scenario_from_recording(recording: Recording, name: str) -> dict[str, Any]:
    """The scenario (as YAML-ready data) whose script reproduces ``recording``'s replies."""
    from mockllm.testing import read_reply

    exchanges = [ex for ex in recording.exchanges if isinstance(ex.request.body, dict)]
    if not exchanges:
        raise ValueError("the recording holds no provider request with a JSON body to make a scenario of")
    first = exchanges[0].request.body
    turns = [read_reply(ex.request.protocol, ex.response) for ex in exchanges]
    tools = _declared_tools(first)
    names_by_id = {cid: tool for turn in turns for cid, tool, _ in turn.tool_calls}
    results: dict[str, tuple[Any, bool]] = {}
    for ex in exchanges[1:]:
        for call_id, (value, is_error) in _results_sent(ex.request.body).items():
            results.setdefault(names_by_id.get(call_id, ""), (_parsed_result(value), is_error))
    declared = {tool["name"] for tool in tools}
    tools += [
        {"name": n, "description": "", "input_schema": {"type": "object"}}
        for n in names_by_id.values()
        if n not in declared
    ]
    for tool in tools:
        value, is_error = results.get(tool["name"], (None, False))
        tool["error" if is_error else "result"] = value
    failed = next((t.error for t in turns if t.error is not None), None)
    if failed is not None:
        expect: dict[str, Any] = {"success": False, "flow": "error"}
        if failed.message:
            expect["error_contains"] = failed.message
    elif any(t.tool_calls for t in turns):
        expect = {"success": True, "flow": "tool_use"}
    elif any(t.reasoning for t in turns):
        expect = {"success": True, "flow": "extended_thinking"}
    else:
        expect = {"success": True, "flow": "simple_message"}
    scenario: dict[str, Any] = {
        "description": f"From the recording {name}",
        "runner": "agent",
        "protocols": "all",
        "prompt": _first_user_text(first) or "(no user text recorded)",
    }
    if any(t.reasoning for t in turns):
        scenario["options"] = {"enable_thinking": True, "thinking_budget": 2048}
    scenario["script"] = [_instruction(turn, i) for i, turn in enumerate(turns)]
    if tools:
        scenario["tools"] = tools
    scenario["expect"] = expect
    return scenario


def add_parser(verbs: Any) -> None:
    scenario = verbs.add_parser(
        "scenario",
        help="make scenario files",
        description="Makes scenario files: from-recording turns a recording's replies into a scenario's script.",
    )
    kinds = scenario.add_subparsers(dest="scenario_verb", required=True)
    made = kinds.add_parser(
        "from-recording",
        help="a scenario whose script reproduces a recording's replies",
        description=(
            "Writes a scenario file whose script reproduces the recorded replies (text, reasoning, tool calls, "
            "errors), so the deterministic engine replays it under every protocol its runner speaks."
        ),
    )
    made.add_argument("file", help="a recording file (python -m mockllm record, or a test's recording)")
    made.add_argument("--out", "-o", help="the scenario file to write (default: <recording>.scenario.yaml here)")


def run(args: argparse.Namespace) -> int:
    import yaml

    from mockllm import RecordingError
    from mockllm.testing import load_recording

    source = Path(args.file)
    try:
        recording = load_recording(source)
        scenario = scenario_from_recording(recording, source.name)
    except (RecordingError, ValueError) as exc:
        print(f"harness: {exc}", file=sys.stderr)
        return 2
    out = Path(args.out) if args.out else Path(f"{source.stem}.scenario.yaml")
    header = f"# Made by python -m harness scenario from-recording {source.name}\n"
    out.write_text(header + yaml.safe_dump(scenario, sort_keys=False, allow_unicode=True, width=100), encoding="utf-8")
    print(out)
    return 0
