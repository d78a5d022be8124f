"""The acceptance criteria of seed 003 (agentic loop mocking), requirements 5 to 7, and
the seed's flows.

Termination, error handling and backward compatibility, one test each, named after its
criterion (``test_req<R>_<C>_...``), in all three protocols. The seed's "Example Flow"
table and its Scenarios 1 and 2 are played as agent loops: each request is answered by
the mock's own reply plan, which is then appended to the history the way a real client
would append it.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from mockllm import INSTRUCTION_END, INSTRUCTION_START, explain
from mockllm._explain import select
from mockllm._plan_builder import build_reply_plan
from tests.mockllm.conversation_support import (
    ABC,
    ITEMS_KEY,
    PREFIX,
    PROTOCOLS,
    RENDER,
    assistant,
    chain,
    is_fallback,
    results,
    run_agent,
    selection_of,
    tagged,
    text_step,
    user,
)

# -- Requirement 5: natural loop termination ---------------------------------------------


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_req5_1_count_past_chain_length_uses_fallback_generation(protocol: str) -> None:
    played, _ = run_agent(tagged(ABC), protocol, 4)
    selection, plan = played[3]
    assert selection.turn_index == 3
    assert is_fallback(selection, plan, "turn index 3 is past the end of the chain of 3 instructions")
    assert plan.text.startswith("mockllm fallback reply: ")


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_req5_2_no_instruction_at_index_generates_default_response(protocol: str) -> None:
    played, _ = run_agent(tagged(chain(text_step("only", "the only step"))), protocol, 2)
    selection, plan = played[1]
    assert selection.instruction is None
    assert plan.text and plan.tool_calls == () and plan.reasoning is None
    assert plan.stop_reason == "end_turn" and plan.error is None
    assert plan.headers["x-mockllm-fallback"] == selection.fallback_reason


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_req5_3_termination_does_not_raise(protocol: str) -> None:
    tool_step = {"id": "t", "messages": [{"tool_call": [{"name": "f", "args": {}}]}]}
    played, conv = run_agent(tagged(chain(tool_step)), protocol, 12)
    body = RENDER[protocol](conv)
    # explain, select and plan building all succeed on the terminated conversation.
    assert explain(body, protocol).fallback_reason == select(body, protocol).fallback_reason
    assert "past the end" in str(explain(json.dumps(body), protocol))
    assert [s.turn_index for s, _ in played] == list(range(12))


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_req5_4_keeps_answering_with_fallback_after_termination(protocol: str) -> None:
    played, _ = run_agent(tagged(ABC), protocol, 8)
    assert [s.instruction_id for s, _ in played[:3]] == ["A", "B", "C"]
    for n, (selection, plan) in enumerate(played[3:], start=3):
        assert selection.turn_index == n
        assert is_fallback(selection, plan, f"turn index {n} is past the end")


# -- Requirement 6: error handling -------------------------------------------------------


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_req6_1_malformed_json_is_reported_and_falls_back(protocol: str) -> None:
    bad_line = '  {"id": "a", "messages": [}'
    block = '{"instruction_chain": [\n' + bad_line + "\n]}"
    column = bad_line.index("}") + 1
    selection = selection_of([user(tagged(block))], protocol)
    plan = build_reply_plan(selection, tool_call_prefix=PREFIX[protocol])
    reason = selection.fallback_reason or ""
    # The block starts after the tag's newline, so the bad "}" is on its line 3.
    assert "malformed JSON" in reason and f"line 3 column {column}" in reason
    assert is_fallback(selection, plan, "malformed JSON")
    assert plan.headers["x-mockllm-fallback"] == reason
    assert reason in str(selection)


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize(
    ("message", "reason_part"),
    [
        (f'go {INSTRUCTION_START} {{"instruction_chain": []}}', f"without a closing {INSTRUCTION_END}"),
        (tagged("[1, 2, 3]"), "must hold a JSON object, got list"),
        (tagged('"a string"'), "must hold a JSON object, got str"),
        (tagged('{"instruction_chain": "A,B,C"}'), "'instruction_chain' must be a list"),
        (tagged(""), "malformed JSON"),
        (tagged('{"instruction_chain": [1, null]}'), "instruction_chain[0] must be a JSON object"),
        (
            tagged('{"instruction_chain": [{"messages": [{"image": {}}]}]}'),
            "a message needs a 'text_message' or a 'tool_call' key",
        ),
        (tagged("[" * 50_000), "nested too deeply to parse"),
        (
            tagged(
                '{"instruction_chain": [{"messages": [{"tool_call": [{"name": "f", "args": {"a": '
                + "[" * 150
                + "]" * 150
                + "}}]}]}]}"
            ),
            "nested more than 100 levels deep",
        ),
    ],
    ids=[
        "unclosed-tag",
        "list-block",
        "string-block",
        "chain-not-a-list",
        "empty-block",
        "entries-not-objects",
        "unknown-message-kind",
        "absurdly-deep",
        "too-deep-args",
    ],
)
def test_req6_2_chain_parsing_failure_continues_with_default(protocol: str, message: str, reason_part: str) -> None:
    conv = [user(message)]
    selection = selection_of(conv, protocol)
    plan = build_reply_plan(selection, tool_call_prefix=PREFIX[protocol])
    assert selection.chain_found
    assert is_fallback(selection, plan, reason_part)
    # The conversation goes on: the next request is answered too.
    conv += [assistant(plan.text), user("and now?")]
    assert selection_of(conv, protocol).instruction is None


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_req6_3_counting_never_fails_defaults_to_index_0(protocol: str) -> None:
    key = ITEMS_KEY.get(protocol, "messages")
    first = RENDER[protocol]([user(tagged(ABC))])[key][0]
    junk: list[Any] = [
        None,
        42,
        "assistant",
        [],
        {},
        {"role": None},
        {"role": ["assistant"]},
        {"content": "no role"},
        {"type": {"not": "hashable"}},
        {"type": ["x"]},
        {"role": "robot", "content": "beep"},
    ]
    selection = select({key: [first, *junk]}, protocol)
    assert (selection.turn_index, selection.instruction_id) == (0, "A")
    assert build_reply_plan(selection, tool_call_prefix=PREFIX[protocol]).text == "reply A"


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_req6_4_unexpected_message_structure_is_handled_gracefully(protocol: str) -> None:
    odd_bodies: list[Any] = [
        None,
        3,
        "text",
        [],
        {},
        {"messages": None},
        {"messages": "hello"},
        {"input": 7},
        {"messages": {"role": "user"}},
        {"input": {"role": "user"}},
        {"messages": [{"role": "user", "content": {"text": tagged(ABC)}}]},
        {"messages": [{"role": "user", "content": [None, 1, {"type": "text"}, {"type": "text", "text": 5}]}]},
        {"messages": [{"role": "assistant", "tool_calls": "x", "content": [[[]]]}]},
        {"input": [{"type": "function_call", "call_id": None}, {"type": "message", "role": "user"}]},
        {"system": 5, "instructions": [1], "messages": [{"role": "user", "content": None}]},
    ]
    for body in odd_bodies:
        selection = select(body, protocol)
        plan = build_reply_plan(selection, tool_call_prefix=PREFIX[protocol])
        assert selection.instruction is None and plan.text.startswith("mockllm fallback reply")
        if not isinstance(body, str):  # explain() reads a str as the body's JSON text
            assert explain(body, protocol).fallback_reason == selection.fallback_reason
    # Odd but readable shapes still work: plain-string content, parts given as strings.
    bodies = {
        "openai-chat": {"messages": [{"role": "user", "content": ["prefix", tagged(ABC)]}]},
        "anthropic-messages": {"messages": [{"role": "user", "content": tagged(ABC)}]},
        "openai-responses": {"input": tagged(ABC)},
        "gemini": {"contents": [{"parts": [{"text": "prefix"}, {"text": tagged(ABC)}]}]},  # role defaults to user
        "azure-openai": {"messages": [{"role": "user", "content": ["prefix", tagged(ABC)]}]},
        "ollama": {"messages": [{"role": "user", "content": "prefix " + tagged(ABC)}]},  # content is a string
        "bedrock-converse": {"messages": [{"role": "user", "content": [{"text": "prefix"}, {"text": tagged(ABC)}]}]},
        "bedrock-invoke": {"messages": [{"role": "user", "content": tagged(ABC)}]},
    }
    assert select(bodies[protocol], protocol).instruction_id == "A"


def test_req6_4_unreadable_items_neither_count_nor_split_an_assistant_turn() -> None:
    script = {"role": "user", "content": tagged(ABC)}
    cases = [
        (
            "openai-chat",
            [
                script,
                {"role": "assistant", "content": "a"},
                {"role": "robot"},
                7,
                {"role": "assistant", "content": "b"},
            ],
            1,
        ),
        (
            "openai-chat",
            [
                script,
                {"role": "assistant", "content": "a"},
                {"role": "system", "content": "s"},
                {"role": "assistant", "content": "b"},
            ],
            2,
        ),
        (
            "anthropic-messages",
            [
                script,
                {"role": "assistant", "content": "a"},
                {"role": "system"},
                None,
                {"role": "assistant", "content": "b"},
            ],
            1,
        ),
        (
            "openai-responses",
            [
                script,
                {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"},
                {"type": "item_reference", "id": "x"},
                {"type": ["odd"]},
                {"type": "message", "role": "assistant", "content": "b"},
            ],
            1,
        ),
        (
            "openai-responses",
            [
                script,
                {"type": "code_interpreter_call", "id": "ci"},
                {"type": "function_call_output", "call_id": "c", "output": "o"},
                {"type": "image_generation_call", "id": "ig"},
            ],
            2,
        ),
    ]
    for protocol, items, turns in cases:
        key = "input" if protocol == "openai-responses" else "messages"
        body = {key: items}
        selection = select(body, protocol)
        assert (selection.turn_index, selection.instruction_id) == (turns, "ABC"[turns]), (protocol, items)


# -- Requirement 7: backward compatibility -----------------------------------------------

LEGACY = {"id": "legacy", "reasoning": {"length": 4}, "messages": [{"text_message": {"text": "old style reply"}}]}


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_req7_1_without_instruction_chain_uses_single_instruction_format(protocol: str) -> None:
    selection = selection_of([user(tagged(LEGACY))], protocol)
    plan = build_reply_plan(selection, tool_call_prefix=PREFIX[protocol])
    assert selection.legacy and selection.chain_length == 1
    assert (selection.instruction_id, plan.text) == ("legacy", "old style reply")
    assert plan.reasoning is not None and len(plan.reasoning.split()) == 4


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_req7_2_old_format_executes_as_a_single_instruction(protocol: str) -> None:
    played, conv = run_agent(tagged(LEGACY), protocol, 3)
    assert played[0][1].text == "old style reply"
    for selection, plan in played[1:]:
        assert is_fallback(selection, plan, "the legacy instruction was already answered")
    # Each new message in the old format is answered once, by its own instruction.
    other = {"messages": [{"text_message": {"text": "second old style reply"}}]}
    conv.append(user(tagged(other)))
    selection = selection_of(conv, protocol)
    assert (selection.turn_index, selection.instruction_id) == (0, "0")
    assert build_reply_plan(selection, tool_call_prefix=PREFIX[protocol]).text == "second old style reply"


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_req7_3_mixing_formats_prefers_the_chain(protocol: str) -> None:
    mixed = {**LEGACY, **ABC}
    selection = selection_of([user(tagged(mixed))], protocol)
    plan = build_reply_plan(selection, tool_call_prefix=PREFIX[protocol])
    assert (selection.legacy, selection.instruction_id, plan.text) == (False, "A", "reply A")
    assert plan.reasoning is None  # the legacy reasoning is not mixed in
    assert any("are ignored: the chain is used" in w for w in selection.warnings)
    assert "are ignored: the chain is used" in str(selection)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_req7_4_both_formats_present_uses_instruction_chain(protocol: str) -> None:
    mixed = {**LEGACY, **ABC}
    played, _ = run_agent(tagged(mixed), protocol, 4)
    # Counting applies (the chain's semantics), not the legacy "answer once".
    assert [s.instruction_id for s, _ in played] == ["A", "B", "C", None]
    assert [p.text for _, p in played[:3]] == ["reply A", "reply B", "reply C"]
    assert "past the end" in (played[3][0].fallback_reason or "")


# -- The seed's Example Flow and Scenarios -----------------------------------------------


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_example_flow_chain_abc_runs_a_then_b_then_c_then_fallback(protocol: str) -> None:
    # Conversation State          Count  Executes
    # User (with chain [A,B,C])     -      -
    # Assistant responds            0      A   ... User/Tool responds
    # Assistant responds            1      B   ... User/Tool responds
    # Assistant responds            2      C   ... User/Tool responds
    # Assistant responds            3      Fallback (no more instructions)
    conv = [user(tagged(ABC))]
    executed = []
    for n, responder in enumerate(["user", "tool", "user", "tool"]):
        selection = selection_of(conv, protocol)
        plan = build_reply_plan(selection, tool_call_prefix=PREFIX[protocol])
        assert selection.counted_turns == n
        executed.append(selection.instruction_id or "Fallback")
        if responder == "tool":
            conv += [assistant(plan.text, [(f"call_{n}", "noop", {})]), results((f"call_{n}", "done"))]
        else:
            conv += [assistant(plan.text), user("continue")]
    assert executed == ["A", "B", "C", "Fallback"]


SCENARIO_1 = {
    "instruction_chain": [
        {"id": "analyze", "messages": [{"text_message": {"length": 30}}]},
        {"id": "process", "messages": [{"tool_call": [{"name": "process_data", "args": {}}]}]},
        {"id": "summarize", "messages": [{"text_message": {"length": 50}}]},
    ]
}

SCENARIO_2 = {
    "instruction_chain": [
        {"id": "fetch", "reasoning": {"length": 20}, "messages": [{"tool_call": [{"name": "fetch_data", "args": {}}]}]},
        {"id": "validate", "messages": [{"tool_call": [{"name": "validate", "args": {}}]}]},
        {"id": "report", "messages": [{"text_message": {"length": 100}}]},
    ]
}


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_scenario_1_three_step_analysis_workflow(protocol: str) -> None:
    played, conv = run_agent(tagged(SCENARIO_1), protocol, 4)
    (_, analyze), (_, process), (_, summarize), (s3, fallback) = played
    assert [s.instruction_id for s, _ in played] == ["analyze", "process", "summarize", None]
    assert len(analyze.text.split()) == 30 and analyze.tool_calls == ()
    assert [(c.name, c.arguments) for c in process.tool_calls] == [("process_data", "{}")]
    assert process.text == "" and process.stop_reason == "tool_use"
    assert len(summarize.text.split()) == 50 and summarize.stop_reason == "end_turn"
    assert is_fallback(s3, fallback, "past the end of the chain of 3")
    # The history the client built is the seed's flow: user, assistant, user/tool, ...
    roles = [t[0] for t in conv]
    assert roles == ["user", "assistant", "user", "assistant", "tool", "assistant", "user", "assistant", "user"]
    assert len({p.response_id for _, p in played}) == 4


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_scenario_2_tool_chain_with_reasoning(protocol: str) -> None:
    played, _ = run_agent(tagged(SCENARIO_2), protocol, 4)
    (_, fetch), (_, validate), (_, report), (s3, fallback) = played
    assert [s.instruction_id for s, _ in played] == ["fetch", "validate", "report", None]
    assert fetch.reasoning is not None and len(fetch.reasoning.split()) == 20
    assert fetch.reasoning_signature
    assert [c.name for c in fetch.tool_calls] == ["fetch_data"]
    assert validate.reasoning is None and [c.name for c in validate.tool_calls] == ["validate"]
    assert fetch.tool_calls[0].id != validate.tool_calls[0].id
    assert len(report.text.split()) == 100 and report.tool_calls == ()
    assert is_fallback(s3, fallback, "past the end")
