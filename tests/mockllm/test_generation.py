"""Deterministic generation: same chain + turn + seed, same words and ids, in any process.

Also: tool-call ids encode their chain and turn, so a client that trims assistant
messages from its history is still answered with the right instruction; and streamed
deltas re-join to exactly the text they were cut from.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mockllm import INSTRUCTION_END, INSTRUCTION_START
from mockllm._explain import select
from mockllm._generation import (
    _VOCABULARY,
    GeneratedWords,
    generate_words,
    stable_hex,
    tool_call_id,
    turn_of_tool_call_id,
)
from mockllm._plan import ReplyPlan, count_words, slice_batches, split_words, word_batches
from mockllm._plan_builder import build_reply_plan
from tests.mockllm.conversation_support import PREFIX

REPO = Path(__file__).resolve().parents[2]

CHAIN = {
    "instruction_chain": [
        {"id": "think", "reasoning": {"length": 25}, "messages": [{"text_message": {"length": 40}}]},
        {
            "id": "act",
            "messages": [
                {"text_message": {"length": 5}},
                {"tool_call": [{"name": "search", "args": {"q": "x"}}, {"name": "fetch", "args": {"n": 2}}]},
            ],
        },
        {"id": "again", "messages": [{"tool_call": [{"name": "search", "args": {}}]}]},
        {"id": "end", "messages": [{"text_message": {"length": 40}}]},
    ]
}


def tagged_text(script: Any = CHAIN) -> str:
    return f"Go\n{INSTRUCTION_START}\n{json.dumps(script)}\n{INSTRUCTION_END}"


def chat_body(turns: int) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": tagged_text()}]
    messages += [{"role": "assistant", "content": "x"}, {"role": "user", "content": "y"}] * turns
    return {"messages": messages}


def fingerprint_of(plan: ReplyPlan) -> dict[str, Any]:
    return {
        "text": plan.text,
        "reasoning": plan.reasoning,
        "tool_ids": [c.id for c in plan.tool_calls],
        "response_id": plan.response_id,
        "created": plan.created,
        "signature": plan.reasoning_signature,
    }


def plans_here(seed: int) -> list[dict[str, Any]]:
    return [
        fingerprint_of(build_reply_plan(select(chat_body(t), "openai-chat"), tool_call_prefix=p, seed=seed))
        for t in range(4)
        for p in ("call", "toolu")
    ]


_CHILD = """
import json, sys
sys.path.insert(0, {repo!r})
from mockllm._explain import select
from mockllm._plan_builder import build_reply_plan
body = json.loads(sys.stdin.read())
out = []
for t in range(4):
    b = dict(body, messages=body["messages"][: 1 + 2 * t])
    for p in ("call", "toolu"):
        plan = build_reply_plan(select(b, "openai-chat"), tool_call_prefix=p, seed={seed})
        out.append(dict(text=plan.text, reasoning=plan.reasoning,
                        tool_ids=[c.id for c in plan.tool_calls], response_id=plan.response_id,
                        created=plan.created, signature=plan.reasoning_signature))
print(json.dumps(out))
"""


def plans_in_subprocesses(seed: int, hash_seeds: list[str]) -> dict[str, list[dict[str, Any]]]:
    """The plans made in a fresh process for each ``PYTHONHASHSEED`` (the processes run at once)."""
    started = {
        hash_seed: subprocess.Popen(
            [sys.executable, "-c", _CHILD.format(repo=str(REPO), seed=seed)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONHASHSEED": hash_seed},
        )
        for hash_seed in hash_seeds
    }
    plans = {}
    try:
        for hash_seed, child in started.items():
            out, err = child.communicate(json.dumps(chat_body(3)), timeout=60)
            assert child.returncode == 0, err
            plans[hash_seed] = json.loads(out)
    finally:
        for child in started.values():
            if child.poll() is None:
                child.kill()
                child.communicate()
    return plans


def test_same_chain_turn_and_seed_give_the_same_plan_in_fresh_processes() -> None:
    expected = plans_here(seed=7)
    for hash_seed, plans in plans_in_subprocesses(7, ["0", "1", "4242", "random"]).items():
        assert plans == expected, hash_seed


def test_a_different_seed_gives_different_words() -> None:
    one, other = plans_here(seed=1), plans_here(seed=2)
    assert one[0]["text"] != other[0]["text"]
    assert one[0]["reasoning"] != other[0]["reasoning"]
    assert one[0]["response_id"] != other[0]["response_id"]
    # Word counts are the script's, whatever the seed.
    assert [len(p["text"].split()) for p in one] == [len(p["text"].split()) for p in other]


def test_turns_get_different_words_and_ids() -> None:
    plans = plans_here(seed=0)
    first, last = plans[0], plans[6]  # turn 0 and turn 3 of openai-chat, both 40 words
    assert len(first["text"].split()) == len(last["text"].split()) == 40
    assert first["text"] != last["text"]
    assert first["response_id"] != last["response_id"]
    assert last["created"] == first["created"] + 3


@pytest.mark.parametrize("count", [0, 1, 2, 13, 100, 2500])
def test_generate_words_gives_exactly_the_count(count: int) -> None:
    text = generate_words(count, "key", count)
    assert len(text.split()) == count
    assert text == generate_words(count, "key", count)
    if count:
        assert text[0].isupper() and text.endswith(".")


def _words_one_by_one(count: int, *key: object) -> str:
    """``generate_words`` as it was first written, a word at a time: what the words
    (and so every golden) are held to."""
    if count <= 0:
        return ""
    stream = hashlib.shake_128(repr(key).encode()).digest(2 * count)
    words = [_VOCABULARY[b & 127] for b in stream[:count]]
    start, n = 0, 0
    while start < count:
        end = min(count, start + 6 + stream[count + n] % 9)
        words[start] = words[start].capitalize()
        words[end - 1] += "."
        start, n = end, n + 1
    return " ".join(words)


@given(st.integers(min_value=-1, max_value=600), st.integers(), st.text(max_size=8))
@settings(max_examples=200, deadline=None)
def test_generate_words_are_the_words_made_one_by_one(count: int, seed: int, chain: str) -> None:
    text = generate_words(count, seed, chain, "text")
    assert text == _words_one_by_one(count, seed, chain, "text")
    # Marked as generated (what lets a codec render it whole unchecked) when not empty.
    assert isinstance(text, GeneratedWords) == (count > 0)


def test_stable_hex_is_a_pure_function_of_its_key() -> None:
    assert stable_hex(1, "a") == stable_hex(1, "a")
    assert stable_hex(1, "a") != stable_hex(1, "b")
    assert len(stable_hex(1, length=64)) == 64


# -- tool-call ids encode the turn -------------------------------------------------------


@pytest.mark.parametrize(
    ("protocol", "prefix"), [("openai-chat", "call_"), ("anthropic-messages", "toolu_"), ("openai-responses", "call_")]
)
def test_tool_call_ids_encode_chain_and_turn(protocol: str, prefix: str) -> None:
    selection = select(chat_body(1), "openai-chat")
    plan = build_reply_plan(selection, tool_call_prefix=PREFIX[protocol])
    assert selection.chain_id is not None
    ids = [c.id for c in plan.tool_calls]
    assert len(ids) == 2 and len(set(ids)) == 2
    for call_id in ids:
        assert call_id.startswith(prefix)
        assert turn_of_tool_call_id(call_id, selection.chain_id) == 1
        assert turn_of_tool_call_id(call_id, "0badc0de") is None
    assert turn_of_tool_call_id(tool_call_id("call", "0badc0de", 17, 3), "0badc0de") == 17
    assert turn_of_tool_call_id("call_abc123", "0badc0de") is None


def _played_ids(protocol: str) -> list[list[str]]:
    """The tool-call ids the mock makes for turns 1 and 2 of CHAIN."""
    ids = []
    for turn in (1, 2):
        plan = build_reply_plan(select(chat_body(turn), "openai-chat"), tool_call_prefix=PREFIX[protocol])
        ids.append([c.id for c in plan.tool_calls])
    return ids


def _trimmed(protocol: str, result_ids: list[str]) -> dict[str, Any]:
    """The tagged message, then only tool results: the client dropped assistant messages."""
    text = tagged_text()
    if protocol == "openai-chat":
        return {
            "messages": [{"role": "user", "content": text}]
            + [{"role": "tool", "tool_call_id": i, "content": "ok"} for i in result_ids]
        }
    if protocol == "anthropic-messages":
        return {
            "messages": [{"role": "user", "content": text}]
            + [
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": i, "content": "ok"}]}
                for i in result_ids
            ]
        }
    return {
        "input": [{"role": "user", "content": text}]
        + [{"type": "function_call_output", "call_id": i, "output": "ok"} for i in result_ids]
    }


@pytest.mark.parametrize("protocol", ["openai-chat", "anthropic-messages", "openai-responses"])
def test_a_trimmed_history_is_placed_at_the_right_turn(protocol: str) -> None:
    turn1, turn2 = _played_ids(protocol)
    # Full history would be at turn 3 ("end"); with assistant messages removed, nothing
    # is counted, but the results' ids say the newest answered call was made at turn 2.
    selection = select(_trimmed(protocol, turn1 + turn2), protocol)
    assert selection.counted_turns == 0
    assert (selection.turn_index, selection.instruction_id) == (3, "end")
    assert selection.placed_by_tool_call_id
    assert "placed by a tool-call id" in str(selection)
    selection = select(_trimmed(protocol, turn1), protocol)
    assert (selection.turn_index, selection.instruction_id) == (2, "again")


def test_replies_after_the_newest_id_still_count_in_a_trimmed_history() -> None:
    # Turn 0 (text) was trimmed; turn 1's tool results were kept; turn 2's reply has no ids.
    turn1, _ = _played_ids("openai-chat")
    body = _trimmed("openai-chat", turn1)
    body["messages"] += [
        {"role": "assistant", "content": "a reply without tool calls"},
        {"role": "user", "content": "and?"},
    ]
    selection = select(body, "openai-chat")
    assert (selection.counted_turns, selection.turn_index, selection.instruction_id) == (1, 3, "end")


def test_anthropic_results_next_to_user_text_still_place_a_trimmed_history() -> None:
    turn1, _ = _played_ids("anthropic-messages")
    body = _trimmed("anthropic-messages", [])
    body["messages"].append(
        {
            "role": "user",
            "content": [
                *({"type": "tool_result", "tool_use_id": i, "content": "ok"} for i in turn1),
                {"type": "text", "text": "here you go"},
            ],
        }
    )
    selection = select(body, "anthropic-messages")
    assert (selection.turn_index, selection.instruction_id) == (2, "again")


@pytest.mark.parametrize("protocol", ["openai-chat", "anthropic-messages", "openai-responses"])
def test_ids_not_made_for_this_chain_do_not_move_the_turn(protocol: str) -> None:
    foreign = [tool_call_id("call", "0badc0de", 3, 0), "call_client_made_7", "toolu_01AbC"]
    selection = select(_trimmed(protocol, foreign), protocol)
    assert (selection.turn_index, selection.instruction_id) == (0, "think")
    assert not selection.placed_by_tool_call_id


def test_counting_wins_when_it_is_ahead_of_the_ids() -> None:
    # Tool ids from turn 1, but three assistant turns counted: the count stands.
    (turn1, _) = _played_ids("openai-chat")
    body = chat_body(3)
    body["messages"] += [{"role": "tool", "tool_call_id": i, "content": "late"} for i in turn1]
    selection = select(body, "openai-chat")
    assert (selection.turn_index, selection.placed_by_tool_call_id) == (3, False)


# -- streamed deltas ---------------------------------------------------------------------

_WORDY = st.text(alphabet=st.sampled_from(list("ab é\n\t  ,.")), max_size=60)


@settings(max_examples=300, deadline=None)
@given(text=_WORDY, per_chunk=st.integers(min_value=1, max_value=6))
def test_split_words_rejoins_exactly_with_at_most_n_words_per_delta(text: str, per_chunk: int) -> None:
    pieces = split_words(text, per_chunk)
    assert "".join(pieces) == text
    assert all(pieces)
    words = len(text.split())
    if words:
        # Every delta but the last holds exactly ``per_chunk`` words; none is blank.
        assert [len(p.split()) for p in pieces[:-1]] == [per_chunk] * (len(pieces) - 1)
        assert 1 <= len(pieces[-1].split()) <= per_chunk
        assert len(pieces) == -(-words // per_chunk)


@settings(max_examples=500, deadline=None)
@given(text=st.text(alphabet=st.sampled_from(list("ab é \n\t\u00a0\u2028\x1c.")), max_size=40))
def test_split_words_cuts_every_text_as_its_word_pattern_does(text: str) -> None:
    # A text spaced by single spaces is cut by str.split; any other by the pattern.
    assert split_words(text, 1) == re.findall(r"\s*\S+\s*", text) or [text] * bool(text)


def test_split_words_examples() -> None:
    assert split_words("one two  three\nfour", 2) == ["one two  ", "three\nfour"]
    assert split_words("  lead and trail  ", 1) == ["  lead ", "and ", "trail  "]
    assert split_words("", 3) == []
    assert split_words("   ", 1) == ["   "]


@settings(max_examples=300, deadline=None)
@given(
    text=st.text(alphabet=st.sampled_from(list("ab é\n\t  ,.")), max_size=300),
    per_chunk=st.integers(min_value=1, max_value=6),
    batch_chars=st.integers(min_value=1, max_value=40),
)
def test_word_batches_make_split_words_deltas_a_batch_at_a_time(text: str, per_chunk: int, batch_chars: int) -> None:
    batches = list(word_batches(text, per_chunk, batch_chars))
    assert [piece for batch in batches for piece in batch] == split_words(text, per_chunk)
    assert all(batches)
    assert count_words(text) == len(split_words(text, 1))


def test_word_batches_keep_a_long_text_in_batches_of_about_the_size_asked() -> None:
    text = generate_words(50_000, "batches")
    batches = list(word_batches(text, 1, 2048))
    assert len(batches) > 100
    assert max(len("".join(batch)) for batch in batches) < 2048 + 40


def test_slice_batches_cut_every_n_characters_in_batches() -> None:
    text = "abcdefghij" * 1000
    batches = list(slice_batches(text, 8, 100))
    assert [piece for batch in batches for piece in batch] == [text[i : i + 8] for i in range(0, len(text), 8)]
    assert max(len(batch) for batch in batches) == 12
