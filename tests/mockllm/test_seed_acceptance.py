"""The acceptance criteria of seed 003 (agentic loop mocking), requirements 1 to 4.

Discovery, counting, execution by count and the chain format, one test each, named
after its criterion (``test_req<R>_<C>_...``). Where a criterion is about conversations,
the same conversation is written in all three protocols (OpenAI Chat Completions,
Anthropic Messages, OpenAI Responses) and must behave the same way. Requirements 5 to 7
and the seed's flows are in ``test_seed_acceptance_loops.py``.
"""

from __future__ import annotations

import pytest

from mockllm._explain import select
from mockllm._plan_builder import build_reply_plan, fallback_text
from tests.mockllm.conversation_support import (
    ABC,
    PREFIX,
    PROTOCOLS,
    assistant,
    chain,
    is_fallback,
    results,
    run_agent,
    selection_of,
    tagged,
    text_step,
    to_chat,
    to_responses,
    user,
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
    for body, protocol in ((chat, "openai-chat"), (anthropic, "anthropic-messages"), (responses, "openai-responses")):
        assert not select(body, protocol).chain_found, protocol


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_req1_4_no_chain_falls_back_to_default(protocol: str) -> None:
    for conv in ([], [user("What is the weather?")], [user("hi"), assistant("hello"), user("no tags here")]):
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
    calls = [("call_a", "search", {"q": "a"}), ("call_b", "search", {"q": "b"}), ("call_c", "fetch", {"url": "c"})]
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
    conv = [user(tagged(steps)), assistant("Looking.", calls), results(("call_a", "A"), ("call_b", "B"))]
    body = to_chat(conv, split=True)
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "assistant", "assistant", "tool", "tool"]
    assert select(body, "openai-chat").turn_index == 1
    # Responses: reasoning, message and two function_call items are one response.
    body = to_responses(
        [user(tagged(steps)), assistant("Looking.", calls, reasoning="hmm"), results(("call_a", "A"), ("call_b", "B"))]
    )
    assert [i["type"] for i in body["input"]][1:5] == ["reasoning", "message", "function_call", "function_call"]
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
    body = {
        "messages": [
            {"role": "user", "content": tagged(steps)},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "cat", "input": {}}]},
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": tagged(ABC)}]}
                ],
            },
        ]
    }
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
        assert (selection.counted_turns, selection.turn_index, selection.instruction_id) == (n, n, f"step-{n}")
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
        {
            "id": "tools",
            "messages": [
                {"text_message": {"length": 3}},
                {
                    "tool_call": [
                        {"name": "search", "args": {"query": "café", "limit": 5, "tags": ["a", "b"]}},
                        {"name": "fetch", "args": {}},
                    ]
                },
            ],
        },
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
