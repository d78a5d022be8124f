"""Properties of discovery and counting, checked with hypothesis.

1. Random conversations and random junk never raise, in any protocol.
2. Appending tool results never changes the selected index.
3. Appending one assistant turn advances the index by exactly one.
4. The selection does not depend on the protocol the conversation is written in, and
   equals the selection over the reference reading (the neutral conversation written
   straight from the abstract turns, without any codec); so does the pairing verdict.
5. Items a codec cannot read, put anywhere in a body, change nothing but positions.

Conversations are generated abstractly — user text, assistant responses (text, tool
calls, reasoning), tool results — and rendered into each protocol's request body.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from mockllm import INSTRUCTION_END, INSTRUCTION_START, explain
from mockllm._explain import read_conversation, select
from mockllm._pairing import find_pairing_problem
from mockllm._parsing import Script, parse_script
from mockllm._plan_builder import build_reply_plan
from mockllm._selection import Selection, select_in_conversation
from tests.mockllm.conversation_support import (
    ITEMS_KEY,
    PREFIX,
    PROTOCOLS,
    RENDER,
    Turn,
    reference_reading,
    renderings,
    tagged,
)

FAST = settings(max_examples=60, deadline=None)

# -- scripts -----------------------------------------------------------------------------

SCRIPTS: list[dict[str, Any]] = [
    {
        "instruction_chain": [
            {"id": "a", "messages": [{"text_message": {"length": 4}}]},
            {
                "id": "b",
                "reasoning": {"length": 3},
                "messages": [{"tool_call": [{"name": "f", "args": {"x": 1}}, {"name": "g"}]}],
            },
            {"messages": [{"text_message": {"text": "third"}}]},
        ]
    },
    {
        "instruction_chain": [
            {"id": "t0", "messages": [{"tool_call": [{"name": "search", "args": {}}]}]},
            {"id": "bad"},
            {"id": "t2", "error": {"status": 503, "times": 1}},
            {"id": "t3", "messages": [{"tool_call": [{"name": "a"}, {"name": "b"}, {"name": "c"}]}]},
        ]
    },
    {"instruction_chain": []},
    {"id": "legacy", "messages": [{"text_message": {"length": 2}}]},
    {"instruction_chain": [{"id": "only", "messages": [{"text_message": {"length": 1}}]}], "messages": "mixed"},
]


def _fingerprint(script: dict[str, Any]) -> str:
    parsed = parse_script(json.dumps(script))
    assert isinstance(parsed, Script)
    return parsed.fingerprint


FINGERPRINTS = [_fingerprint(s) for s in SCRIPTS]
FOREIGN = "0badc0de"


tagged_scripts = st.builds(lambda s, p: tagged(json.dumps(s), p), st.sampled_from(SCRIPTS), st.text(max_size=8))
broken_blocks = st.builds(
    lambda s, cut, p: tagged(json.dumps(s)[:cut], p),
    st.sampled_from(SCRIPTS),
    st.integers(0, 40),
    st.text(max_size=5),
)
odd_tags = st.sampled_from(
    [
        INSTRUCTION_START,
        INSTRUCTION_END + INSTRUCTION_START,
        f"{INSTRUCTION_START}[]{INSTRUCTION_END}",
        f"{INSTRUCTION_START}null{INSTRUCTION_END}",
        f'{INSTRUCTION_START}{{"instruction_chain": 3}}{INSTRUCTION_END}',
        f'{INSTRUCTION_START}{{"instruction_chain": [[], 1, "x"]}}{INSTRUCTION_END}',
    ]
)
texts = st.one_of(st.text(max_size=20), tagged_scripts, broken_blocks, odd_tags)

mock_ids = st.builds(
    lambda prefix, fp, t, n: f"{prefix}_mk{fp}_t{t}_{n}",
    st.sampled_from(["call", "toolu"]),
    st.sampled_from([*FINGERPRINTS, FOREIGN]),
    st.integers(0, 6),
    st.integers(0, 3),
)
ids = st.one_of(st.text(max_size=6), mock_ids, st.integers(), st.none())

# -- 1 and 5: junk -----------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=12,
)
part_types = st.sampled_from(
    ["text", "input_text", "output_text", "refusal", "tool_result", "tool_use", "thinking", "image", 5, ["text"]]
)
parts = st.fixed_dictionaries(
    {"type": part_types},
    optional={"text": texts | json_values, "tool_use_id": ids, "id": ids, "content": texts | json_values},
)
contents = st.one_of(texts, st.lists(st.one_of(parts, texts, json_values), max_size=4), json_values)
item_types = st.sampled_from(
    [
        "message",
        "function_call",
        "function_call_output",
        "reasoning",
        "custom_tool_call",
        "custom_tool_call_output",
        "image_generation_call",
        "code_interpreter_call",
        "item_reference",
        "mcp_list_tools",
        7,
        ["x"],
        {"y": 1},
    ]
)
roles = st.sampled_from(["user", "assistant", "tool", "function", "system", "developer", "robot", None, 3, ["user"]])
tool_calls = st.lists(
    st.one_of(
        st.fixed_dictionaries({"id": ids}, optional={"type": st.just("function"), "function": json_values}), json_values
    ),
    max_size=3,
)
messages = st.fixed_dictionaries(
    {},
    optional={
        "role": roles,
        "content": contents,
        "type": item_types,
        "tool_calls": tool_calls | json_values,
        "tool_call_id": ids,
        "call_id": ids,
        "id": ids,
        "output": texts,
    },
)
items = st.lists(st.one_of(messages, messages, messages, json_values), max_size=10)
# Bodies whose chain is found, so that counting sees the junk after it.
small_items = st.one_of(
    st.fixed_dictionaries({"role": roles}),
    st.fixed_dictionaries({"type": item_types}, optional={"role": roles, "call_id": mock_ids}),
    st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant", "tool"]), "content": contents}),
    json_values,
)
found_bodies = st.builds(
    lambda first, rest: {"messages": [first, *rest], "input": [first, *rest]},
    st.fixed_dictionaries({"role": st.just("user"), "content": tagged_scripts}),
    st.lists(small_items, max_size=8),
)
bodies = st.one_of(
    found_bodies,
    st.fixed_dictionaries(
        {},
        optional={
            "messages": items | json_values,
            "input": items | texts | json_values,
            "system": texts | json_values,
            "instructions": texts | json_values,
        },
    ),
    json_values,
)


@FAST
@given(body=bodies, seed=st.integers(0, 2**32), attempt=st.integers(0, 3))
def test_random_junk_never_raises(body: Any, seed: int, attempt: int) -> None:
    for protocol in PROTOCOLS:
        selection = select(body, protocol)
        assert str(selection)
        plan = build_reply_plan(selection, tool_call_prefix=PREFIX[protocol], seed=seed, attempt=attempt)
        assert plan.text or plan.tool_calls or plan.reasoning or plan.error or selection.instruction
        if not isinstance(body, str):  # explain() reads a str as the body's JSON text
            assert explain(body, protocol) == selection
        conversation = read_conversation(body, protocol)
        select_in_conversation(conversation, protocol)
        find_pairing_problem(conversation)
        text = json.dumps(body)
        assert explain(text, protocol).fallback_reason == selection.fallback_reason
        assert explain(text.encode(), protocol).turn_index == selection.turn_index


# -- abstract conversations --------------------------------------------------------------
# ("user", text) | ("assistant", text|None, ((id, name, args), ...), reasoning|None)
# | ("tool", ((id, output), ...))


# The strategies a conversation draws from, built once rather than at each draw (a strategy
# is checked the first time it is drawn from: a new one each draw was checked each draw).
_kinds = st.sampled_from(["user", "assistant", "assistant", "tool"])
_styles = st.sampled_from(["plain", "mock", "foreign"])
_fingerprints = st.sampled_from(FINGERPRINTS)
_tool_names = st.sampled_from(["f", "g"])
_maybe_texts = st.none() | texts
_maybe_reasoning = st.none() | st.text(max_size=10)


@st.composite
def conversations(draw: st.DrawFn) -> list[Turn]:
    """A conversation whose ids hang together: each tool result answers a call of the
    latest assistant turn (if no user message came since), and one turn's mock-made
    ids all name the same turn."""
    conv: list[Turn] = []
    if draw(st.booleans()):
        conv.append(("user", draw(tagged_scripts)))
    last_calls: list[str] = []
    for n in range(draw(st.integers(0, 9))):
        kind = draw(_kinds)
        if kind == "user":
            conv.append(("user", draw(texts)))
            last_calls = []  # calls are answered before the next user message, or never
        elif kind == "assistant":
            k = draw(st.integers(0, 3))
            style = draw(_styles)
            fp = FOREIGN if style == "foreign" else draw(_fingerprints)
            turn = draw(st.integers(0, 6))
            call_ids = [f"call_mk{fp}_t{turn}_{i}" if style != "plain" else f"call_{n}_{i}" for i in range(k)]
            calls = tuple((i, draw(_tool_names), {"n": n}) for i in call_ids)
            text = draw(_maybe_texts)
            reasoning = draw(_maybe_reasoning)
            conv.append(("assistant", text, calls, reasoning))
            last_calls = call_ids
        else:
            answered = last_calls or [f"call_orphan_{n}"]
            m = draw(st.integers(1, len(answered)))
            conv.append(("tool", tuple((i, draw(texts)) for i in answered[:m])))
    return conv


def key(selection: Selection) -> tuple[Any, ...]:
    return (
        selection.chain_found,
        selection.turn_index,
        selection.instruction_id,
        selection.fallback_reason,
        selection.chain_id,
        selection.warnings,
    )


@FAST
@given(conv=conversations())
def test_every_reading_selects_as_the_reference_reading(conv: list[Turn]) -> None:
    reference = reference_reading(conv)
    expected = key(select_in_conversation(reference))
    problem = find_pairing_problem(reference)
    for protocol, body in renderings(conv):
        assert key(select(body, protocol)) == expected, protocol
        reading = read_conversation(body, protocol)
        found = find_pairing_problem(reading)
        assert (found and (found.kind, found.call_id)) == (problem and (problem.kind, problem.call_id)), protocol


unreadable = st.one_of(
    json_values.filter(lambda v: not isinstance(v, dict)),
    st.fixed_dictionaries({"role": st.sampled_from(["robot", None, 3, ["user"]])}),
    st.fixed_dictionaries({"type": st.sampled_from(["item_reference", "mcp_list_tools", 7, ["x"]])}),
)


@FAST
@given(conv=conversations(), junk=st.lists(st.tuples(st.integers(0, 40), unreadable), min_size=1, max_size=4))
def test_unreadable_items_change_nothing_but_positions(conv: list[Turn], junk: list[tuple[int, Any]]) -> None:
    for protocol, body in renderings(conv):
        items_key = ITEMS_KEY.get(protocol, "messages")
        items = list(body[items_key])
        for at, item in junk:
            items.insert(at % (len(items) + 1), item)
        noisy = {**body, items_key: items}
        strip = [m._replace(position=None) for m in read_conversation(body, protocol).messages]
        assert [m._replace(position=None) for m in read_conversation(noisy, protocol).messages] == strip
        assert key(select(noisy, protocol)) == key(select(body, protocol)), protocol


@FAST
@given(conv=conversations(), outputs=st.lists(texts, min_size=1, max_size=3))
def test_appending_tool_results_never_changes_the_index(conv: list[Turn], outputs: list[str]) -> None:
    last = next((t for t in reversed(conv) if t[0] != "tool"), None)
    answered = [c[0] for c in last[2]] if last and last[0] == "assistant" and last[2] else ["call_client_1"]
    extended = conv + [("tool", tuple((i, o) for i, o in zip(answered, outputs, strict=False)))]
    for protocol in PROTOCOLS:
        before = select(RENDER[protocol](conv), protocol)
        after = select(RENDER[protocol](extended), protocol)
        assert (after.turn_index, after.instruction_id, after.fallback_reason) == (
            before.turn_index,
            before.instruction_id,
            before.fallback_reason,
        )


@FAST
@given(conv=conversations(), with_results=st.booleans())
def test_appending_one_assistant_turn_advances_the_index_by_one(conv: list[Turn], with_results: bool) -> None:
    if conv and conv[-1][0] == "assistant":
        conv = conv + [("user", "next")]  # otherwise the new reply would extend that turn
    for protocol in PROTOCOLS:
        before = select(RENDER[protocol](conv), protocol)
        # The reply a client appends is the mock's own (its tool-call ids name this turn).
        plan = build_reply_plan(before, tool_call_prefix=PREFIX[protocol])
        calls = tuple((c.id, c.name, json.loads(c.arguments)) for c in plan.tool_calls)
        extended = conv + [("assistant", plan.text or None, calls, plan.reasoning)]
        if with_results and calls:
            extended.append(("tool", tuple((c[0], "ok") for c in calls)))
        after = select(RENDER[protocol](extended), protocol)
        if before.turn_index is None:
            assert after.turn_index is None and not after.chain_found
        else:
            assert after.turn_index == before.turn_index + 1
            assert after.counted_turns == before.counted_turns + 1
            assert after.chain_id == before.chain_id
