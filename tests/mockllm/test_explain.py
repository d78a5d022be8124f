"""``mockllm.explain``: what a user calls when a test does something they don't understand."""

from __future__ import annotations

import json
from typing import Any

import pytest

import mockllm
from mockllm import INSTRUCTION_END, INSTRUCTION_START, explain
from mockllm._explain import select
from mockllm._selection import Selection

CHAIN = {
    "instruction_chain": [
        {"id": "analyze", "messages": [{"text_message": {"length": 3}}]},
        {"id": "process", "messages": [{"tool_call": [{"name": "process_data", "args": {}}]}]},
    ]
}
SCRIPT = f"Start\n{INSTRUCTION_START}\n{json.dumps(CHAIN)}\n{INSTRUCTION_END}"

ANTHROPIC_AT_TURN_1 = {
    "model": "claude-sonnet-4-5",
    "max_tokens": 100,
    "messages": [
        {"role": "user", "content": SCRIPT},
        {"role": "assistant", "content": [{"type": "text", "text": "Three words here."}]},
        {"role": "user", "content": "go on"},
    ],
}


def test_explain_is_public_and_documented() -> None:
    assert mockllm.explain is explain
    assert "explain" in mockllm.__all__
    assert explain.__doc__ and "protocol" in explain.__doc__


@pytest.mark.parametrize("as_type", [dict, str, bytes])
def test_explain_accepts_dict_str_and_bytes_bodies(as_type: type) -> None:
    body: Any = ANTHROPIC_AT_TURN_1
    if as_type is str:
        body = json.dumps(body)
    elif as_type is bytes:
        body = json.dumps(body, ensure_ascii=False).encode()
    selection = explain(body, "anthropic-messages")
    assert isinstance(selection, Selection)
    assert (selection.chain_found, selection.turn_index, selection.instruction_id) == (True, 1, "process")


@pytest.mark.parametrize("body", ["{not json", b"\xff\xfe", "", b"", '{"messages": [}'], ids=repr)
def test_invalid_json_body_is_a_fallback_reason_not_an_exception(body: str | bytes) -> None:
    selection = explain(body, "openai-chat")
    assert not selection.chain_found and selection.instruction is None
    assert (selection.fallback_reason or "").startswith("the request body is not valid JSON")
    assert "not valid JSON" in str(selection)


def test_deeply_nested_json_body_is_a_fallback_reason_not_an_exception() -> None:
    selection = explain("[" * 100_000, "openai-chat")
    assert selection.instruction is None
    assert "not valid JSON" in (selection.fallback_reason or "")


@pytest.mark.parametrize(
    ("short", "full"),
    [
        ("openai", "openai-chat"),
        ("chat", "openai-chat"),
        ("chat-completions", "openai-chat"),
        ("anthropic", "anthropic-messages"),
        ("messages", "anthropic-messages"),
        ("responses", "openai-responses"),
    ],
)
def test_protocol_short_names(short: str, full: str) -> None:
    bodies = {
        "openai-chat": {"messages": [{"role": "user", "content": SCRIPT}, {"role": "assistant", "content": "x"}]},
        "anthropic-messages": ANTHROPIC_AT_TURN_1,
        "openai-responses": {
            "input": [
                {"role": "user", "content": SCRIPT},
                {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"},
            ]
        },
    }
    selection = explain(bodies[full], short)
    assert selection.protocol == full
    assert selection.instruction_id == "process"


def test_default_protocol_is_openai_chat() -> None:
    assert explain({"messages": [{"role": "user", "content": SCRIPT}]}).protocol == "openai-chat"


def test_unknown_protocol_is_a_value_error_naming_it() -> None:
    with pytest.raises(ValueError, match="'cohere'"):
        explain({"messages": []}, "cohere")
    with pytest.raises(ValueError, match="'cohere'"):
        explain("{not json", "cohere")


def test_explain_reads_gemini_contents_by_its_names() -> None:
    body = {
        "contents": [
            {"role": "user", "parts": [{"text": SCRIPT}]},
            {"role": "model", "parts": [{"functionCall": {"name": "fetch", "args": {}}}]},
            {"role": "user", "parts": [{"functionResponse": {"name": "fetch", "response": {}}}]},
        ]
    }
    for name in ("gemini", "google"):
        selection = explain(body, name)
        assert (selection.protocol, selection.turn_index) == ("gemini", 1)
        assert "protocol: gemini" in str(selection)


def test_explain_agrees_with_select_and_leaves_the_body_alone() -> None:
    before = json.dumps(ANTHROPIC_AT_TURN_1, sort_keys=True)
    assert explain(ANTHROPIC_AT_TURN_1, "anthropic") == select(ANTHROPIC_AT_TURN_1, "anthropic-messages")
    assert json.dumps(ANTHROPIC_AT_TURN_1, sort_keys=True) == before


def test_str_of_a_selection_names_chain_turn_and_instruction() -> None:
    selection = explain(ANTHROPIC_AT_TURN_1, "anthropic")
    report = str(selection)
    assert selection.chain_id and selection.chain_id in report
    assert "chain of 2" in report
    assert "in message 0" in report
    assert "turn index: 1 (1 assistant turns counted)" in report
    assert "runs: instruction 'process'" in report
    assert report.splitlines()[0] == "protocol: anthropic-messages"


def test_str_of_a_selection_names_the_fallback_reason() -> None:
    past_end = dict(
        ANTHROPIC_AT_TURN_1,
        messages=ANTHROPIC_AT_TURN_1["messages"]
        + [{"role": "assistant", "content": "y"}, {"role": "user", "content": "z"}],
    )
    report = str(explain(past_end, "anthropic"))
    assert "turn index: 2" in report
    assert "runs: fallback (the script has 2 steps and this is turn 3: turn index 2 is past the end" in report

    broken = {"messages": [{"role": "user", "content": f"{INSTRUCTION_START}{{oops{INSTRUCTION_END}"}]}
    report = str(explain(broken, "openai"))
    assert "unusable instruction block in message 0" in report
    assert "runs: fallback (malformed JSON in the instruction block at line 1 column 2" in report

    report = str(explain({"messages": [{"role": "user", "content": "hello"}]}, "openai"))
    assert "chain: none (no user message holds an instruction block)" in report


def test_str_of_a_legacy_selection_says_so() -> None:
    legacy = {"id": "old", "messages": [{"text_message": {"text": "hi"}}]}
    body = {"messages": [{"role": "user", "content": f"{INSTRUCTION_START}{json.dumps(legacy)}{INSTRUCTION_END}"}]}
    report = str(explain(body, "openai"))
    assert "legacy single instruction" in report and "runs: instruction 'old'" in report
