"""The acceptance criteria of seed 003 (agentic loop mocking), one test each.

Each test is named after its criterion (``test_req<R>_<C>_...``). Where a criterion is
about conversations, the same conversation is written in all three protocols (OpenAI
Chat Completions, Anthropic Messages, OpenAI Responses) and must behave the same way.
The seed's "Example Flow" table and its Scenarios 1 and 2 are played as agent loops:
each request is answered by the mock's own reply plan, which is then appended to the
history the way a real client would append it.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from mockllm import INSTRUCTION_END, INSTRUCTION_START, build_reply_plan, explain, select
from mockllm.plan import ReplyPlan
from mockllm.replies import fallback_text
from mockllm.selection import Selection
from tests.mockllm.conversation_support import (
    PREFIX,
    PROTOCOLS,
    RENDER,
    Turn,
    assistant,
    results,
    tagged,
    to_chat,
    to_responses,
    user,
)

def selection_of(conv: list[Turn], protocol: str) -> Selection:
    return select(RENDER[protocol](conv), protocol)


def text_step(step_id: str, text: str | None = None, length: int | None = None) -> dict[str, Any]:
    spec = {"text": text} if text is not None else {"length": length if length is not None else 5}
    return {"id": step_id, "messages": [{"text_message": spec}]}


def chain(*steps: dict[str, Any]) -> dict[str, Any]:
    return {"instruction_chain": list(steps)}


ABC = chain(text_step("A", "reply A"), text_step("B", "reply B"), text_step("C", "reply C"))


def run_agent(
    prompt: str, protocol: str, replies: int, *, history: list[Turn] | None = None
) -> tuple[list[tuple[Selection, ReplyPlan]], list[Turn]]:
    """Play an agent loop: ask, append the mock's reply, answer its tool calls (or, when
    it made none, send a user follow-up), and ask again."""
    conv = list(history or []) + [user(prompt)]
    out = []
    for n in range(replies):
        selection = selection_of(conv, protocol)
        plan = build_reply_plan(selection, tool_call_prefix=PREFIX[protocol])
        out.append((selection, plan))
        calls = tuple((c.id, c.name, json.loads(c.arguments)) for c in plan.tool_calls)
        conv.append(assistant(plan.text or None, calls, plan.reasoning))
        if calls:
            conv.append(results(*((c[0], f'{{"rows": {n}}}') for c in calls)))
        else:
            conv.append(user(f"follow-up {n}"))
    return out, conv


def is_fallback(selection: Selection, plan: ReplyPlan, reason_part: str) -> bool:
    return (
        selection.instruction is None
        and reason_part in (selection.fallback_reason or "")
        and plan.text == fallback_text(selection.fallback_reason or "")
        and plan.tool_calls == ()
        and plan.error is None
    )


# -- Requirement 1: instruction chain discovery ------------------------------------------


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_req1_1_scans_messages_newest_to_oldest(protocol: str) -> None:
    # An older, valid chain and a newer, broken one: scanning from the newest end stops
    # at the broken one, so the reply is a fallback saying why, not the old chain.
    conv = [
        user(tagged(ABC)),
        assistant("reply A"),
        user(tagged('{"instruction_chain": [ {"id": "X" ')),
    ]
    selection = selection_of(conv, protocol)
    assert selection.chain_found
    assert selection.instruction is None
    assert "malformed JSON" in (selection.fallback_reason or "")
    assert selection.message_index == 2
    # Drop the newer message: the older chain is found, one turn later.
    selection = selection_of(conv[:2], protocol)
    assert (selection.instruction_id, selection.turn_index, selection.message_index) == ("B", 1, 0)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_req1_2_multiple_chains_uses_the_last_one(protocol: str) -> None:
    old = chain(text_step("old-1"), text_step("old-2"), text_step("old-3"))
    new = chain(text_step("new-1"), text_step("new-2"))
    conv = [user(tagged(old)), assistant("a"), user("thanks"), assistant("b"), user(tagged(new))]
    selection = selection_of(conv, protocol)
    assert (selection.instruction_id, selection.turn_index) == ("new-1", 0)
    assert selection.chain_length == 2
    conv += [assistant("c"), user("more")]
    assert selection_of(conv, protocol).instruction_id == "new-2"
    conv += [assistant("d"), user("more")]
    selection = selection_of(conv, protocol)
    # Past the end of the newest chain: fallback, the old chain's third step never runs.
    assert selection.instruction is None
    assert "past the end" in (selection.fallback_reason or "")


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_req1_3_tags_in_a_user_message_are_parsed_and_validated(protocol: str) -> None:
    script = chain(
        text_step("ok-0", "zero"),
        {"id": "bad-1", "messages": [{"text_message": {"length": -3}}]},
        text_step("ok-2", "two"),
    )
    conv = [user(tagged(script, prompt="Please run this workflow, then summarise."))]
    selection = selection_of(conv, protocol)
    assert selection.instruction_id == "ok-0"
    assert any("instruction_chain[1]" in w and "length" in w for w in selection.warnings)
    conv += [assistant("zero"), user("next")]
    selection = selection_of(conv, protocol)
    assert selection.instruction is None
    assert "instruction_chain[1] skipped" in (selection.fallback_reason or "")
    assert "length" in (selection.fallback_reason or "")

    # The same tags anywhere but a user message are not a script.
    echoed = tagged(script)
    not_user = [
        user("hello"),
        assistant(echoed, [("call_1", "read_file", {"path": "chain.txt"})]),
        results(("call_1", echoed)),
    ]
    selection = selection_of(not_user, protocol)
    assert not selection.chain_found
    assert "no user message" in (selection.fallback_reason or "")


def test_req1_3_tags_in_system_instructions_are_not_a_script() -> None:
    script = tagged(ABC)
    chat = {"messages": [{"role": "system", "content": script}, {"role": "user", "content": "hi"}]}
    anthropic = {"system": script, "messages": [{"role": "user", "content": "hi"}]}
    responses = {"instructions": script, "input": [{"role": "developer", "content": script}, "x"]}
    for body, protocol in ((chat, "openai-chat"), (anthropic, "anthropic-messages"),
                           (responses, "openai-responses")):
        assert not select(body, protocol).chain_found, protocol


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_req1_4_no_chain_falls_back_to_default(protocol: str) -> None:
    for conv in ([], [user("What is the weather?")],
                 [user("hi"), assistant("hello"), user("no tags here")]):
        selection = selection_of(conv, protocol)
        assert not selection.chain_found
        assert selection.turn_index is None
        plan = build_reply_plan(selection, tool_call_prefix=PREFIX[protocol])
        assert is_fallback(selection, plan, "no user message holds an instruction block")
        assert plan.stop_reason == "end_turn"


# -- Requirement 2: assistant response counting ------------------------------------------


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_req2_1_counts_assistant_messages_after_the_chain(protocol: str) -> None:
    steps = chain(*(text_step(f"s{i}") for i in range(4)))
    # Three assistant turns before the chain message: none of them count.
    history = [user("a"), assistant("1"), user("b"), assistant("2"), user("c"), assistant("3")]
    conv = history + [user(tagged(steps))]
    assert selection_of(conv, protocol).turn_index == 0
    conv += [assistant("x"), user("y"), assistant("z"), user("w")]
    selection = selection_of(conv, protocol)
    assert (selection.turn_index, selection.counted_turns, selection.instruction_id) == (2, 2, "s2")


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_req2_2_multiple_tool_calls_in_one_response_count_as_one_turn(protocol: str) -> None:
    steps = chain(*(text_step(f"s{i}") for i in range(3)))
    calls = [("call_a", "search", {"q": "a"}), ("call_b", "search", {"q": "b"}),
             ("call_c", "fetch", {"url": "c"})]
    conv = [
        user(tagged(steps)),
        assistant("Let me look that up.", calls, reasoning="thinking it over"),
        results(("call_a", "A"), ("call_b", "B"), ("call_c", "C")),
    ]
    selection = selection_of(conv, protocol)
    assert (selection.turn_index, selection.instruction_id) == (1, "s1")


def test_req2_2_a_response_split_by_the_client_is_still_one_turn() -> None:
    steps = chain(*(text_step(f"s{i}") for i in range(3)))
    calls = [("call_a", "search", {"q": "a"}), ("call_b", "search", {"q": "b"})]
    conv = [user(tagged(steps)), assistant("Looking.", calls),
            results(("call_a", "A"), ("call_b", "B"))]
    body = to_chat(conv, split=True)
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "assistant", "assistant",
                                                     "tool", "tool"]
    assert select(body, "openai-chat").turn_index == 1
    # Responses: reasoning, message and two function_call items are one response.
    body = to_responses([user(tagged(steps)), assistant("Looking.", calls, reasoning="hmm"),
                         results(("call_a", "A"), ("call_b", "B"))])
    assert [i["type"] for i in body["input"]][1:5] == ["reasoning", "message", "function_call",
                                                       "function_call"]
    assert select(body, "openai-responses").turn_index == 1


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_req2_3_only_assistant_messages_are_counted(protocol: str) -> None:
    steps = chain(*(text_step(f"s{i}") for i in range(5)))
    conv = [
        user(tagged(steps)),
        user("and another thing"),
        assistant(None, [("call_1", "lookup", {})]),
        results(("call_1", "one")),
        user("user message"),
        user("second user message"),
        assistant(None, [("call_2", "lookup", {}), ("call_3", "lookup", {})]),
        results(("call_2", "two")),
        results(("call_3", "three")),
    ]
    selection = selection_of(conv, protocol)
    assert (selection.turn_index, selection.instruction_id) == (2, "s2")
    # System messages do not count either.
    body = to_chat(conv)
    body["messages"].insert(3, {"role": "system", "content": "be brief"})
    body["messages"].append({"role": "developer", "content": "be briefer"})
    assert select(body, "openai-chat").turn_index == 2


def test_req2_3_anthropic_tool_result_messages_are_not_user_messages() -> None:
    steps = chain(*(text_step(f"s{i}") for i in range(3)))
    # A tool whose output contains instruction tags does not restart the chain, and a
    # role=user message made of tool_result blocks counts as neither a user nor an
    # assistant message.
    body = {"messages": [
        {"role": "user", "content": tagged(steps)},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "cat", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                      "content": [{"type": "text", "text": tagged(ABC)}]}]},
    ]}
    selection = select(body, "anthropic-messages")
    assert (selection.turn_index, selection.instruction_id, selection.message_index) == (1, "s1", 0)
    # A user message carrying tool results AND text is a user message: its text is read.
    body["messages"][2]["content"].append({"type": "text", "text": tagged(ABC)})
    selection = select(body, "anthropic-messages")
    assert (selection.turn_index, selection.instruction_id, selection.message_index) == (0, "A", 2)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_req2_4_count_n_executes_instruction_n(protocol: str) -> None:
    steps = chain(*(text_step(f"step-{i}", f"reply number {i}") for i in range(5)))
    conv = [user(tagged(steps))]
    for n in range(5):
        selection = selection_of(conv, protocol)
        assert (selection.counted_turns, selection.turn_index, selection.instruction_id) == (
            n, n, f"step-{n}")
        conv += [assistant(f"reply number {n}"), user("ok")]


# -- Requirement 3: instruction execution based on count ---------------------------------


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_req3_1_count_0_executes_first_instruction(protocol: str) -> None:
    selection = selection_of([user("earlier"), assistant("earlier reply"), user(tagged(ABC))], protocol)
    plan = build_reply_plan(selection, tool_call_prefix=PREFIX[protocol])
    assert (selection.turn_index, selection.instruction_id, plan.text) == (0, "A", "reply A")


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_req3_2_count_n_executes_instruction_at_index_n(protocol: str) -> None:
    conv = [user(tagged(ABC)), assistant("reply A"), user("go"), assistant("reply B"), user("go")]
    selection = selection_of(conv, protocol)
    plan = build_reply_plan(selection, tool_call_prefix=PREFIX[protocol])
    assert (selection.turn_index, selection.instruction_id, plan.text) == (2, "C", "reply C")
    assert plan.headers["x-mockllm-turn"] == "2"
    assert plan.headers["x-mockllm-instruction"] == "C"


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("extra_turns", [0, 1, 5])
def test_req3_3_count_at_or_past_chain_length_uses_fallback(protocol: str, extra_turns: int) -> None:
    conv = [user(tagged(ABC))]
    for n in range(3 + extra_turns):
        conv += [assistant(f"r{n}"), user("go")]
    selection = selection_of(conv, protocol)
    plan = build_reply_plan(selection, tool_call_prefix=PREFIX[protocol])
    assert selection.turn_index == 3 + extra_turns
    assert is_fallback(selection, plan, f"turn index {3 + extra_turns} is past the end of the chain of 3")
    assert "past the end" in plan.headers["x-mockllm-fallback"]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_req3_4_reply_follows_the_instruction_spec(protocol: str) -> None:
    script = chain(
        {"id": "words", "reasoning": {"length": 17}, "messages": [{"text_message": {"length": 42}}]},
        {"id": "verbatim", "messages": [{"text_message": {"text": "Exactly  this,\n verbatim."}}]},
        {"id": "tools", "messages": [
            {"text_message": {"length": 3}},
            {"tool_call": [
                {"name": "search", "args": {"query": "café", "limit": 5, "tags": ["a", "b"]}},
                {"name": "fetch", "args": {}},
            ]},
        ]},
    )
    (words, verbatim, tools), _ = run_agent(tagged(script), protocol, 3)

    plan = words[1]
    assert len(plan.text.split()) == 42
    assert plan.reasoning is not None and len(plan.reasoning.split()) == 17
    assert plan.tool_calls == () and plan.stop_reason == "end_turn"

    assert verbatim[1].text == "Exactly  this,\n verbatim."
    assert verbatim[1].reasoning is None

    plan = tools[1]
    assert len(plan.text.split()) == 3
    assert [(c.name, c.arguments) for c in plan.tool_calls] == [
        ("search", '{"query":"café","limit":5,"tags":["a","b"]}'),
        ("fetch", "{}"),
    ]
    assert len({c.id for c in plan.tool_calls}) == 2
    assert plan.stop_reason == "tool_use"


# -- Requirement 4: instruction chain format ---------------------------------------------


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_req4_1_instruction_chain_is_an_array(protocol: str) -> None:
    selection = selection_of([user(tagged(ABC))], protocol)
    assert (selection.chain_length, selection.legacy) == (3, False)
    not_a_list = {"instruction_chain": {"id": "A", "messages": [{"text_message": {"length": 3}}]}}
    selection = selection_of([user(tagged(not_a_list))], protocol)
    assert selection.instruction is None
    assert "'instruction_chain' must be a list" in (selection.fallback_reason or "")


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_req4_2_chain_order_is_kept_throughout_execution(protocol: str) -> None:
    ids = ["zeta", "alpha", "mu", "beta", "omega"]  # not sorted: order is the array's
    steps = chain(*(text_step(i, f"I am {i}") for i in ids))
    played, _ = run_agent(tagged(steps), protocol, 6)
    assert [s.instruction_id for s, _ in played] == [*ids, None]
    assert [p.text for _, p in played[:5]] == [f"I am {i}" for i in ids]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_req4_3_instruction_lacking_required_fields_is_skipped_with_warning(protocol: str) -> None:
    script = chain(
        text_step("first", "one"),
        {"id": "hollow", "id_message": "nothing to do"},
        text_step("third", "three"),
    )
    played, _ = run_agent(tagged(script), protocol, 3)
    (s0, p0), (s1, p1), (s2, p2) = played
    assert (s0.instruction_id, p0.text) == ("first", "one")
    assert s1.instruction is None and s1.turn_index == 1
    reason = s1.fallback_reason or ""
    assert "instruction_chain[1] skipped" in reason
    assert all(field in reason for field in ("'messages'", "'reasoning'", "'error'"))
    assert p1.text == fallback_text(reason)
    assert any("instruction_chain[1] skipped" in w for w in s0.warnings)
    # The instruction after it keeps its index.
    assert (s2.turn_index, s2.instruction_id, p2.text) == (2, "third", "three")


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_req4_4_empty_chain_uses_fallback(protocol: str) -> None:
    played, _ = run_agent(tagged({"instruction_chain": []}), protocol, 2)
    for selection, plan in played:
        assert selection.chain_found and selection.chain_length == 0
        assert is_fallback(selection, plan, "the instruction chain is empty")


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
    block = '{"instruction_chain": [\n' + bad_line + '\n]}'
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
        (f"go {INSTRUCTION_START} {{\"instruction_chain\": []}}", f"without a closing {INSTRUCTION_END}"),
        (tagged("[1, 2, 3]"), "must hold a JSON object, got list"),
        (tagged('"a string"'), "must hold a JSON object, got str"),
        (tagged('{"instruction_chain": "A,B,C"}'), "'instruction_chain' must be a list"),
        (tagged(""), "malformed JSON"),
        (tagged('{"instruction_chain": [1, null]}'), "instruction_chain[0] must be a JSON object"),
        (tagged('{"instruction_chain": [{"messages": [{"image": {}}]}]}'),
         "a message needs a 'text_message' or a 'tool_call' key"),
        (tagged("[" * 50_000), "nested too deeply to parse"),
        (tagged('{"instruction_chain": [{"messages": [{"tool_call": [{"name": "f", "args": {"a": '
                + "[" * 150 + "]" * 150 + "}}]}]}]}"), "nested more than 100 levels deep"),
    ],
    ids=["unclosed-tag", "list-block", "string-block", "chain-not-a-list", "empty-block",
         "entries-not-objects", "unknown-message-kind", "absurdly-deep", "too-deep-args"],
)
def test_req6_2_chain_parsing_failure_continues_with_default(
    protocol: str, message: str, reason_part: str
) -> None:
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
    key = "input" if protocol == "openai-responses" else "messages"
    first = RENDER[protocol]([user(tagged(ABC))])[key][0]
    junk: list[Any] = [None, 42, "assistant", [], {}, {"role": None}, {"role": ["assistant"]},
                       {"content": "no role"}, {"type": {"not": "hashable"}}, {"type": ["x"]},
                       {"role": "robot", "content": "beep"}]
    selection = select({key: [first, *junk]}, protocol)
    assert (selection.turn_index, selection.instruction_id) == (0, "A")
    assert build_reply_plan(selection, tool_call_prefix=PREFIX[protocol]).text == "reply A"


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_req6_4_unexpected_message_structure_is_handled_gracefully(protocol: str) -> None:
    odd_bodies: list[Any] = [
        None, 3, "text", [], {}, {"messages": None}, {"messages": "hello"}, {"input": 7},
        {"messages": {"role": "user"}}, {"input": {"role": "user"}},
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
    }
    assert select(bodies[protocol], protocol).instruction_id == "A"


def test_req6_4_unreadable_items_neither_count_nor_split_an_assistant_turn() -> None:
    script = {"role": "user", "content": tagged(ABC)}
    cases = [
        ("openai-chat", [script, {"role": "assistant", "content": "a"}, {"role": "robot"}, 7,
                         {"role": "assistant", "content": "b"}], 1),
        ("openai-chat", [script, {"role": "assistant", "content": "a"}, {"role": "system", "content": "s"},
                         {"role": "assistant", "content": "b"}], 2),
        ("anthropic-messages", [script, {"role": "assistant", "content": "a"}, {"role": "system"}, None,
                                {"role": "assistant", "content": "b"}], 1),
        ("openai-responses", [script, {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"},
                              {"type": "item_reference", "id": "x"}, {"type": ["odd"]},
                              {"type": "message", "role": "assistant", "content": "b"}], 1),
        ("openai-responses", [script, {"type": "code_interpreter_call", "id": "ci"},
                              {"type": "function_call_output", "call_id": "c", "output": "o"},
                              {"type": "image_generation_call", "id": "ig"}], 2),
    ]
    for protocol, items, turns in cases:
        key = "input" if protocol == "openai-responses" else "messages"
        body = {key: items}
        selection = select(body, protocol)
        assert (selection.turn_index, selection.instruction_id) == (turns, "ABC"[turns]), (protocol, items)


# -- Requirement 7: backward compatibility -----------------------------------------------

LEGACY = {"id": "legacy", "reasoning": {"length": 4},
          "messages": [{"text_message": {"text": "old style reply"}}]}


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


SCENARIO_1 = {"instruction_chain": [
    {"id": "analyze", "messages": [{"text_message": {"length": 30}}]},
    {"id": "process", "messages": [{"tool_call": [{"name": "process_data", "args": {}}]}]},
    {"id": "summarize", "messages": [{"text_message": {"length": 50}}]},
]}

SCENARIO_2 = {"instruction_chain": [
    {"id": "fetch", "reasoning": {"length": 20},
     "messages": [{"tool_call": [{"name": "fetch_data", "args": {}}]}]},
    {"id": "validate", "messages": [{"tool_call": [{"name": "validate", "args": {}}]}]},
    {"id": "report", "messages": [{"text_message": {"length": 100}}]},
]}


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
    assert roles == ["user", "assistant", "user", "assistant", "tool", "assistant", "user",
                     "assistant", "user"]
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
