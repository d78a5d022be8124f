"""The instruction format: the seed's fields, the extensions, and how bad entries fare.

Scripts are written as a test author would (a JSON block in a user message) and
checked through what the author sees: the selection (instruction, fallback reason,
warnings) and the reply plan built from it.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError

from mockllm import INSTRUCTION_END, INSTRUCTION_START, Instruction, InstructionChain
from mockllm._explain import select
from mockllm._instructions import normalise_stop_reason
from mockllm._plan_builder import RECOVERED_WORDS, build_reply_plan
from mockllm._selection import Selection


def request(script: Any, assistant_turns: int = 0) -> dict[str, Any]:
    """A Chat Completions body: the script in a user message, then ``assistant_turns``."""
    block = script if isinstance(script, str) else json.dumps(script)
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": f"Run this\n{INSTRUCTION_START}\n{block}\n{INSTRUCTION_END}"}
    ]
    for n in range(assistant_turns):
        messages += [{"role": "assistant", "content": f"reply {n}"}, {"role": "user", "content": "go"}]
    return {"model": "gpt-4o", "messages": messages}


def chain_select(*entries: Any, turn: int = 0) -> Selection:
    return select(request({"instruction_chain": list(entries)}, turn), "openai-chat")


TEXT = {"messages": [{"text_message": {"length": 6}}]}


# -- error -------------------------------------------------------------------------------


def test_error_fields_reach_the_reply_plan() -> None:
    selection = chain_select(
        {
            "id": "boom",
            "error": {
                "status": 429,
                "type": "rate_limit_error",
                "message": "slow down",
                "retry_after_ms": 1500,
                "after_chunks": 3,
            },
            "messages": [{"text_message": {"text": "partial answer"}}],
        }
    )
    plan = build_reply_plan(selection)
    assert plan.error is not None
    assert (plan.error.status, plan.error.type, plan.error.message) == (429, "rate_limit_error", "slow down")
    assert (plan.error.retry_after_ms, plan.error.after_chunks) == (1500, 3)
    assert plan.text == "partial answer"  # the stream that fails mid-way has content


def test_error_defaults_to_500_and_leaves_type_and_message_to_the_codec() -> None:
    plan = build_reply_plan(chain_select({"error": {}}), tool_call_prefix="toolu")
    assert plan.error is not None
    assert (plan.error.status, plan.error.type, plan.error.message) == (500, None, None)
    assert (plan.error.retry_after_ms, plan.error.after_chunks) == (None, None)


@pytest.mark.parametrize(
    ("error", "field"),
    [
        ({"status": 200}, "error.status"),
        ({"status": 600}, "error.status"),
        ({"times": 0}, "error.times"),
        ({"retry_after_ms": -1}, "error.retry_after_ms"),
        ({"after_chunks": -2}, "error.after_chunks"),
    ],
)
def test_invalid_error_is_skipped_naming_the_field(error: dict[str, Any], field: str) -> None:
    selection = chain_select({"error": error}, TEXT)
    assert selection.instruction is None
    assert (selection.fallback_reason or "").startswith(f"instruction_chain[0] skipped: {field}")
    # The next instruction keeps its index.
    assert chain_select({"error": error}, TEXT, turn=1).instruction_id == "1"


@pytest.mark.parametrize("times", [1, 2, 3])
def test_error_times_fails_only_the_first_attempts(times: int) -> None:
    selection = chain_select({"error": {"status": 503, "times": times}, "messages": [{"text_message": {"length": 9}}]})
    for attempt in range(times + 2):
        plan = build_reply_plan(selection, attempt=attempt)
        if attempt < times:
            assert plan.error is not None and plan.error.status == 503
        else:
            assert plan.error is None
            assert len(plan.text.split()) == 9


def test_error_only_instruction_recovers_with_content_after_its_times() -> None:
    selection = chain_select({"id": "flaky", "error": {"status": 500, "times": 1}})
    assert selection.instruction_id == "flaky"
    failing = build_reply_plan(selection, attempt=0)
    retried = build_reply_plan(selection, attempt=1)
    assert failing.error is not None
    assert retried.error is None
    assert len(retried.text.split()) == RECOVERED_WORDS


def test_error_without_times_fails_every_attempt() -> None:
    selection = chain_select({"error": {"status": 502}})
    assert all(build_reply_plan(selection, attempt=a).error for a in range(5))


# -- timing, chunk_words, stop_reason ----------------------------------------------------


def test_timing_becomes_pacing_in_seconds() -> None:
    selection = chain_select({**TEXT, "timing": {"first_chunk_ms": 250, "chunk_ms": 20}})
    pacing = build_reply_plan(selection).pacing
    assert pacing is not None
    assert (pacing.first_chunk_s, pacing.chunk_s) == (0.25, 0.02)


def test_no_timing_or_zero_timing_never_sleeps() -> None:
    assert build_reply_plan(chain_select(TEXT)).pacing is None
    zero = chain_select({**TEXT, "timing": {"first_chunk_ms": 0, "chunk_ms": 0}})
    assert build_reply_plan(zero).pacing is None
    negative = chain_select({**TEXT, "timing": {"chunk_ms": -5}})
    assert "timing.chunk_ms" in (negative.fallback_reason or "")


def test_chunk_words_sets_words_per_streamed_delta() -> None:
    plan = build_reply_plan(chain_select({**TEXT, "chunk_words": 4}))
    assert plan.chunk_words == 4
    assert build_reply_plan(chain_select(TEXT)).chunk_words == 1
    assert "chunk_words" in (chain_select({**TEXT, "chunk_words": 0}).fallback_reason or "")


@pytest.mark.parametrize(
    ("given", "neutral"),
    [
        ("stop", "end_turn"),
        ("tool_calls", "tool_use"),
        ("length", "max_tokens"),
        ("max_output_tokens", "max_tokens"),
        ("end_turn", "end_turn"),
        ("tool_use", "tool_use"),
        ("max_tokens", "max_tokens"),
        ("stop_sequence", "stop_sequence"),
        ("content_filter", "content_filter"),
        ("refusal", "refusal"),
    ],
)
def test_stop_reason_any_provider_spelling_is_normalised(given: str, neutral: str) -> None:
    selection = chain_select({**TEXT, "stop_reason": given})
    assert selection.instruction is not None and selection.instruction.stop_reason == neutral
    assert build_reply_plan(selection).stop_reason == neutral
    assert normalise_stop_reason(given) == neutral


def test_unknown_stop_reason_makes_the_instruction_invalid() -> None:
    selection = chain_select({**TEXT, "stop_reason": "finished"})
    reason = selection.fallback_reason or ""
    assert selection.instruction is None
    assert "unknown stop_reason 'finished'" in reason and "tool_calls" in reason
    with pytest.raises(ValueError, match="unknown stop_reason"):
        normalise_stop_reason("finished")


def test_stop_reason_default_follows_the_content() -> None:
    text = build_reply_plan(chain_select(TEXT))
    tools = build_reply_plan(chain_select({"messages": [{"tool_call": [{"name": "f"}]}]}))
    assert (text.stop_reason, tools.stop_reason) == ("end_turn", "tool_use")
    forced = chain_select({"messages": [{"tool_call": [{"name": "f"}]}], "stop_reason": "length"})
    assert build_reply_plan(forced).stop_reason == "max_tokens"


# -- unknown keys, ids, required fields --------------------------------------------------


def test_unknown_keys_warn_but_the_instruction_runs() -> None:
    selection = chain_select(
        {
            "id": "s",
            "temperature": 0.2,
            "messages": [{"text_message": {"length": 3, "style": "terse"}, "note": "x"}],
        }
    )
    assert selection.instruction_id == "s"
    assert len(build_reply_plan(selection).text.split()) == 3
    warnings = "\n".join(selection.warnings)
    assert "unknown key 'temperature' ignored" in warnings
    assert "unknown key 'messages[0].text_message.style' ignored" in warnings
    assert "unknown key 'messages[0].note' ignored" in warnings
    assert "warning: instruction_chain[0]: unknown key 'temperature' ignored" in str(selection)


def test_id_is_optional_and_defaults_to_the_position() -> None:
    entries = [TEXT, {"id": "named", **TEXT}, TEXT, {"id": 7, **TEXT}]
    ids = [chain_select(*entries, turn=t).instruction_id for t in range(4)]
    assert ids == ["0", "named", "2", "7"]
    plan = build_reply_plan(chain_select(*entries, turn=2))
    assert plan.headers["x-mockllm-instruction"] == "2"


def test_instruction_with_no_content_fields_is_skipped_naming_them() -> None:
    entries = [{"id": "a", **TEXT}, {"id": "empty", "id_message": "m", "chunk_words": 2}, {"id": "c", **TEXT}]
    selection = chain_select(*entries, turn=1)
    reason = selection.fallback_reason or ""
    assert selection.instruction is None and selection.turn_index == 1
    assert reason.startswith("instruction_chain[1] skipped")
    assert "at least one of 'messages', 'reasoning' or 'error'" in reason
    assert reason in selection.warnings
    assert [chain_select(*entries, turn=t).instruction_id for t in (0, 2)] == ["a", "c"]


@pytest.mark.parametrize(
    ("entry", "reason_part"),
    [
        ({"messages": [{"text_message": {"length": 2, "text": "x"}}]}, "exactly one of 'length'"),
        ({"messages": [{"text_message": {}}]}, "exactly one of 'length'"),
        ({"reasoning": {"length": -1}}, "reasoning.length"),
        ({"messages": [{"tool_call": []}]}, "messages[0].tool_call"),
        ({"messages": [{"tool_call": [{"args": {}}]}]}, "messages[0].tool_call[0].name"),
        ({"messages": [{"tool_call": [{"name": "f", "args": [1]}]}]}, "messages[0].tool_call[0].args"),
        ({"messages": [{"tool_call": [{"name": "f", "id": "has space"}]}]}, "tool_call[0].id"),
        ({"messages": [{"picture": {}}]}, "a message needs a 'text_message' or a 'tool_call' key"),
        ({"messages": "hello"}, "messages"),
        ("not an object", "must be a JSON object, got str"),
    ],
)
def test_invalid_instruction_falls_back_with_a_reason_and_keeps_the_others(entry: Any, reason_part: str) -> None:
    entries = [{"id": "before", **TEXT}, entry, {"id": "after", **TEXT}]
    bad = chain_select(*entries, turn=1)
    assert bad.instruction is None
    assert "instruction_chain[1]" in (bad.fallback_reason or "")
    assert reason_part in (bad.fallback_reason or "")
    assert build_reply_plan(bad).text.startswith("mockllm fallback reply")
    assert chain_select(*entries, turn=0).instruction_id == "before"
    assert chain_select(*entries, turn=2).instruction_id == "after"


def test_fixed_tool_call_id_is_used_verbatim() -> None:
    selection = chain_select({"messages": [{"tool_call": [{"name": "a", "id": "call_fixed_1"}, {"name": "b"}]}]})
    ids = [c.id for c in build_reply_plan(selection).tool_calls]
    assert ids[0] == "call_fixed_1"
    assert ids[1].startswith("call_mk")


# -- legacy and mixed formats ------------------------------------------------------------


def test_legacy_single_instruction_answers_its_message_then_falls_back() -> None:
    legacy = {"id": "old", "messages": [{"text_message": {"text": "legacy reply"}}]}
    first = select(request(legacy), "openai-chat")
    assert (first.legacy, first.instruction_id) == (True, "old")
    assert build_reply_plan(first).text == "legacy reply"
    later = select(request(legacy, assistant_turns=1), "openai-chat")
    assert later.instruction is None
    assert "legacy instruction was already answered (1 assistant turns follow it)" in (later.fallback_reason or "")


def test_invalid_legacy_instruction_says_why() -> None:
    selection = select(request({"id": "old", "reasoning": {"text": 3}}), "openai-chat")
    assert selection.legacy and selection.instruction is None
    assert (selection.fallback_reason or "").startswith("instruction skipped: reasoning.text")


def test_mixing_formats_prefers_the_chain_with_a_warning() -> None:
    mixed = {
        "instruction_chain": [{"id": "chained", **TEXT}],
        "id": "old",
        "messages": [{"text_message": {"text": "legacy reply"}}],
    }
    selection = select(request(mixed), "openai-chat")
    assert (selection.legacy, selection.instruction_id) == (False, "chained")
    assert "keys ['id', 'messages'] next to 'instruction_chain' are ignored: the chain is used" in (selection.warnings)


# -- authoring in Python -----------------------------------------------------------------


def test_instruction_chain_tagged_round_trips_through_selection() -> None:
    authored = InstructionChain(
        instruction_chain=[
            Instruction(id="one", messages=[{"text_message": {"length": 4}}]),
            Instruction(
                reasoning={"text": "hmm"},
                stop_reason="stop",
                messages=[{"tool_call": [{"name": "f", "args": {"k": [1, 2]}}]}],
            ),
        ]
    )
    text = authored.tagged("Please do it")
    assert text.startswith(f"Please do it\n{INSTRUCTION_START}\n")
    assert text.endswith(INSTRUCTION_END)
    body = {"messages": [{"role": "user", "content": text}, {"role": "assistant", "content": "x"}]}
    selection = select(body, "openai-chat")
    assert selection.instruction == authored.instruction_chain[1]
    plan = build_reply_plan(selection)
    assert (plan.reasoning, plan.stop_reason) == ("hmm", "end_turn")
    assert plan.tool_calls[0].arguments == '{"k":[1,2]}'
    assert InstructionChain(instruction_chain=[]).tagged() == (
        f'{INSTRUCTION_START}\n{{"instruction_chain":[]}}\n{INSTRUCTION_END}'
    )


def test_authoring_is_strict() -> None:
    with pytest.raises(ValidationError, match="at least one of 'messages', 'reasoning' or 'error'"):
        InstructionChain(instruction_chain=[{"id": "x"}])
    with pytest.raises(ValidationError, match="unknown stop_reason"):
        Instruction(reasoning={"length": 1}, stop_reason="done")


def test_an_empty_messages_list_is_skipped_with_a_reason() -> None:
    selection = chain_select({"messages": []}, {"messages": [{"text_message": {"text": "ok"}}]})
    assert selection.instruction is None
    assert "messages" in (selection.fallback_reason or "") and "at least 1 item" in (selection.fallback_reason or "")


def test_a_word_count_beyond_the_cap_is_skipped_not_generated() -> None:
    selection = chain_select({"messages": [{"text_message": {"length": 10**9}}]})
    assert selection.instruction is None
    assert "less than or equal to 100000" in (selection.fallback_reason or "")
