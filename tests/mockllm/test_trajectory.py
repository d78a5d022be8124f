"""mockllm.assert_trajectory: the tool calls an app made, per match mode and argument
mode, from events, plain calls and the mock's journal; and the modes' lattice."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mockllm import InstructionChain, MockLLM, assert_trajectory
from mockllm._trajectory import ToolCall, tool_calls_of

SEARCH = {"name": "search", "args": {"q": "vendors", "limit": 5}}
FETCH = {"name": "fetch", "args": {"id": "V-9"}}
DONE = {"name": "done", "args": {}}


def fails(actual: Any, expected: Any, **options: Any) -> str:
    with pytest.raises(AssertionError) as caught:
        assert_trajectory(actual, expected, **options)
    return str(caught.value)


# -- match modes --------------------------------------------------------------------------


def test_strict_wants_the_same_calls_in_the_same_order() -> None:
    assert_trajectory([SEARCH, FETCH], [SEARCH, FETCH])
    message = fails([FETCH, SEARCH], [SEARCH, FETCH])
    assert message.startswith(
        "trajectory mismatch (mode='strict', args='exact'): call 1 differs: expected "
        'search({"limit": 5, "q": "vendors"}), got fetch({"id": "V-9"})'
    )
    assert '>  1 search({"limit": 5, "q": "vendors"})  fetch({"id": "V-9"})' in message
    assert "call 3 differs: expected no more calls, got done({})" in fails([SEARCH, FETCH, DONE], [SEARCH, FETCH])


def test_unordered_wants_the_same_calls_in_any_order() -> None:
    assert_trajectory([FETCH, SEARCH], [SEARCH, FETCH], mode="unordered")
    assert "expected call 2 was not made: fetch" in fails([SEARCH, SEARCH], [SEARCH, FETCH], mode="unordered")
    assert "call 3 was not expected: done({})" in fails([FETCH, SEARCH, DONE], [SEARCH, FETCH], mode="unordered")


def test_superset_wants_at_least_the_expected_calls() -> None:
    assert_trajectory([DONE, SEARCH, DONE, FETCH], [SEARCH, FETCH], mode="superset")
    message = fails([SEARCH], [SEARCH, FETCH], mode="superset")
    assert 'expected call 2 was not made: fetch({"id": "V-9"})' in message
    assert '>  2 fetch({"id": "V-9"})' in message


def test_subset_wants_no_call_outside_the_expected_ones() -> None:
    assert_trajectory([FETCH], [SEARCH, FETCH], mode="subset")
    assert_trajectory([], [SEARCH], mode="subset")
    message = fails([FETCH, DONE], [SEARCH, FETCH], mode="subset")
    assert "call 2 was not expected: done({})" in message
    assert ">  3 -" in message


def test_unknown_modes_are_errors_naming_the_choices() -> None:
    with pytest.raises(ValueError, match=r"mode must be one of \('strict', 'unordered', 'subset', 'superset'\)"):
        assert_trajectory([], [], mode="loose")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="args must be one of"):
        assert_trajectory([], [], args="fuzzy")


# -- argument modes -----------------------------------------------------------------------


def test_args_exact_compares_every_argument() -> None:
    assert "call 1 differs" in fails([SEARCH], [{"name": "search", "args": {"q": "vendors"}}])


def test_args_subset_compares_the_expected_arguments_only() -> None:
    assert_trajectory([SEARCH], [{"name": "search", "args": {"q": "vendors"}}], args="subset")
    assert "call 1 differs" in fails([SEARCH], [{"name": "search", "args": {"q": "items"}}], args="subset")
    assert "call 1 differs" in fails([SEARCH], [{"name": "search", "args": {"page": 2}}], args="subset")


def test_args_ignore_compares_names_only() -> None:
    assert_trajectory([SEARCH, FETCH], [{"name": "search", "args": {"q": "x"}}, FETCH], args="ignore")
    assert "call 1 differs" in fails([SEARCH], [FETCH], args="ignore")


def test_args_callable_decides() -> None:
    def same_query(expected: Any, actual: Any) -> bool:
        return expected["q"].lower() == actual["q"].lower()

    assert_trajectory([SEARCH], [{"name": "search", "args": {"q": "VENDORS"}}], args=same_query)
    message = fails([SEARCH], [{"name": "search", "args": {"q": "items"}}], args=same_query)
    assert "mode='strict', args='same_query'" in message


def test_an_expected_call_without_args_matches_any_arguments() -> None:
    assert_trajectory([SEARCH, FETCH], ["search", {"name": "fetch"}])
    assert "expected search(…), got fetch" in fails([FETCH], ["search"])


# -- where the calls come from ------------------------------------------------------------


def test_an_agent_runs_events_end_to_end(mockllm_agent: Any) -> None:
    from harness.systems.agent import ToolRegistry

    tools = ToolRegistry()

    @tools.register(description="Search entities.")
    def search(q: str) -> list[str]:
        return ["Vendor"]

    @tools.register(description="Fetch one entity.")
    def fetch(id: str) -> dict[str, str]:
        return {"id": id}

    prompt = InstructionChain(
        instruction_chain=[
            {"messages": [{"tool_call": [{"name": "search", "args": {"q": "vendors"}}]}]},
            {"messages": [{"tool_call": [{"name": "fetch", "args": {"id": "V-9"}}]}]},
            {"messages": [{"text_message": {"text": "Found V-9."}}]},
        ]
    ).tagged("Find the vendor")
    result = mockllm_agent("openai-chat", tools=tools).run_sync(prompt, "s1")
    assert_trajectory(result.events, [{"name": "search", "args": {"q": "vendors"}}, FETCH])
    assert_trajectory(result, ["fetch"], mode="superset")
    message = fails(result.events, [FETCH, {"name": "search", "args": {"q": "vendors"}}])
    assert 'call 1 differs: expected fetch({"id": "V-9"}), got search({"q": "vendors"})' in message


def test_the_users_own_event_shapes() -> None:
    events = [
        {"type": "message", "content": "Looking."},
        {"type": "tool_use", "data": {"toolName": "search", "args": {"q": "vendors"}}},
        {"type": "tool_result", "toolName": "search", "result": "[]"},
        {"type": "function_call", "name": "fetch", "arguments": '{"id": "V-9"}'},
        SimpleNamespace(kind="tool_call", tool_name="done", input={}),
    ]
    assert tool_calls_of(events) == [
        ToolCall("search", {"q": "vendors"}),
        ToolCall("fetch", {"id": "V-9"}),
        ToolCall("done", {}),
    ]
    assert_trajectory(events, [("search", {"q": "vendors"}), FETCH, "done"])


def test_plain_call_objects_of_the_users_own() -> None:
    @dataclass
    class Call:
        name: str
        arguments: dict[str, Any]

    assert_trajectory([Call("fetch", {"id": "V-9"})], [FETCH])


def test_anything_with_a_tool_calls_method_is_read_as_a_journal() -> None:
    assert_trajectory(SimpleNamespace(tool_calls=lambda: [FETCH]), [FETCH])


def test_the_mocks_journal_is_the_trajectory_of_the_calls_it_scripted() -> None:
    mock = MockLLM()
    calls = [{"name": "search", "args": {"q": "a"}}, {"name": "fetch", "args": {"url": "u"}}]
    chain = InstructionChain(instruction_chain=[{"messages": [{"tool_call": calls}]}]).tagged("go")
    tools = [{"type": "function", "function": {"name": c["name"], "parameters": {"type": "object"}}} for c in calls]
    body = {"model": "m", "messages": [{"role": "user", "content": chain}], "tools": tools}
    assert mock.handle("POST", "/v1/chat/completions", {}, json.dumps(body).encode()).status == 200
    for source in (mock, mock.journal, list(mock.journal)):
        assert_trajectory(source, calls)
        assert_trajectory(source, ["fetch"], mode="superset")
    with pytest.raises(AssertionError, match="call 1 differs"):
        assert_trajectory(mock, [{"name": "fetch", "args": {"url": "u"}}, {"name": "search", "args": {"q": "a"}}])


def test_not_a_trajectory() -> None:
    with pytest.raises(TypeError, match="got str"):
        assert_trajectory("search", [])
    with pytest.raises(TypeError, match="item 0 is not a tool call: .* has no tool name"):
        assert_trajectory([{"args": {}}], [])


# -- the lattice ----------------------------------------------------------------------------

# Every call there is: a name of three, and arguments of up to two keys of x and y, each 0
# or 1, in either insertion order (39 calls). Drawn as one choice among them, not built
# from a name, a size, keys and values: the same calls, for a fraction of hypothesis's
# work an example (each draw is bookkept for shrinking).
ARGUMENTS = [{}] + [{k: v} for k in "xy" for v in (0, 1)]
ARGUMENTS += [{k1: v1, k2: v2} for k1, k2 in ("xy", "yx") for v1 in (0, 1) for v2 in (0, 1)]
ALL_CALLS = [{"name": name, "args": args} for name in "abc" for args in ARGUMENTS]
calls = st.lists(st.sampled_from(ALL_CALLS), max_size=5)
arg_modes = st.sampled_from(["exact", "subset", "ignore"])


def passes(actual: Any, expected: Any, mode: str, args: str = "exact") -> bool:
    try:
        assert_trajectory(actual, expected, mode=mode, args=args)  # type: ignore[arg-type]
    except AssertionError:
        return False
    return True


@settings(max_examples=300, deadline=None)
@given(calls, calls, arg_modes)
def test_strict_implies_unordered_which_is_superset_and_subset(actual: Any, expected: Any, args: str) -> None:
    strict, unordered = passes(actual, expected, "strict", args), passes(actual, expected, "unordered", args)
    superset, subset = passes(actual, expected, "superset", args), passes(actual, expected, "subset", args)
    assert not strict or unordered
    assert unordered == (superset and subset)


@settings(max_examples=200, deadline=None)
@given(calls, arg_modes)
def test_a_trajectory_matches_itself_reordered_in_every_mode(actual: Any, args: str) -> None:
    assert passes(actual, actual, "strict", args)
    assert passes(list(reversed(actual)), actual, "unordered", args)


@settings(max_examples=200, deadline=None)
@given(calls, calls, st.sampled_from(["strict", "unordered", "subset", "superset"]))
def test_exact_implies_subset_implies_ignore(actual: Any, expected: Any, mode: str) -> None:
    exact, subset, ignore = (passes(actual, expected, mode, args) for args in ("exact", "subset", "ignore"))
    assert not exact or subset
    assert not subset or ignore


def text(call: dict[str, Any]) -> str:
    return str(ToolCall(call["name"], call["args"]))


@settings(max_examples=300, deadline=None)
@given(calls, calls)
def test_a_strict_failure_names_the_first_differing_call(actual: Any, expected: Any) -> None:
    first = next((i for i, (e, a) in enumerate(zip(expected, actual, strict=False)) if e != a), None)
    if first is None and len(actual) == len(expected):
        return
    first = min(len(actual), len(expected)) if first is None else first
    message = fails(actual, expected)
    want = text(expected[first]) if first < len(expected) else "no more calls"
    got = text(actual[first]) if first < len(actual) else "no more calls"
    assert f"call {first + 1} differs: expected {want}, got {got}" in message


@settings(max_examples=300, deadline=None)
@given(calls, calls, st.sampled_from(["unordered", "superset", "subset"]))
def test_an_unordered_failure_names_the_first_unmatched_call(actual: Any, expected: Any, mode: str) -> None:
    key = [(c["name"], tuple(sorted(c["args"].items()))) for c in expected]
    have = Counter((c["name"], tuple(sorted(c["args"].items()))) for c in actual)
    seen: Counter[Any] = Counter()
    missing = None
    for i, k in enumerate(key):
        seen[k] += 1
        if seen[k] > have[k] and missing is None:
            missing = i
    want = Counter(key)
    spent: Counter[Any] = Counter()
    extra = None
    for i, c in enumerate(actual):
        k = (c["name"], tuple(sorted(c["args"].items())))
        spent[k] += 1
        if spent[k] > want[k] and extra is None:
            extra = i
    if mode != "subset" and missing is not None:
        assert f"expected call {missing + 1} was not made: {text(expected[missing])}" in fails(
            actual, expected, mode=mode
        )
    elif mode != "superset" and extra is not None:
        assert f"call {extra + 1} was not expected: {text(actual[extra])}" in fails(actual, expected, mode=mode)
    else:
        assert passes(actual, expected, mode)
