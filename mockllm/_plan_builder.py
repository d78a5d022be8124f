"""From a selection to a ``ReplyPlan``: the words, ids and faults of one reply.

Every value is derived from (seed, chain fingerprint, turn index, position) so the
same request gives the same plan in any process. The fallback reply is one sentence
that carries its reason, so a person reading a transcript sees why it happened.
"""

from __future__ import annotations

import json

from mockllm._generation import generate_words, stable_hex, tool_call_id
from mockllm._instructions import ContentSpec, Instruction, TextMessage
from mockllm._plan import ErrorPlan, Pacing, ReplyPart, ReplyPlan, TextPart, ToolCallPart, Usage
from mockllm._selection import Selection
from mockllm._shapes import StreamShape
from mockllm._usage import tokens_in_length

__all__ = ["CREATED_EPOCH", "DEFAULT_CHUNK_WORDS", "build_reply_plan", "fallback_text"]

# 2026-01-01T00:00:00Z: replies are dated from here, one second per turn, never the clock.
CREATED_EPOCH = 1_767_225_600
DEFAULT_CHUNK_WORDS = 1
# Strict compact JSON for tool-call arguments (the script parser already refuses
# non-finite numbers), its encoder built once: ``json.dumps`` builds one per call.
_arguments_json = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode
# What an error-only instruction answers once its ``times`` are used up.
RECOVERED_WORDS = 12


FALLBACK_PREFIX = "mockllm fallback reply:"
"""How every fallback reply's text starts: what a golden file, which holds text only, is
searched for (the journal and the findings say it by type)."""


def fallback_text(reason: str) -> str:
    return f"{FALLBACK_PREFIX} {reason}."


def _content(spec: ContentSpec, *key: object) -> str:
    if spec.text is not None:
        return spec.text
    return generate_words(spec.length or 0, *key)


def _headers(selection: Selection) -> dict[str, str]:
    headers = {
        "x-mockllm-chain": selection.chain_id or "none",
        "x-mockllm-turn": "" if selection.turn_index is None else str(selection.turn_index),
    }
    if selection.instruction is not None:
        headers["x-mockllm-instruction"] = selection.instruction_id or ""
    if selection.fallback_reason is not None:
        headers["x-mockllm-fallback"] = selection.fallback_reason
    return headers


def build_reply_plan(
    selection: Selection,
    *,
    tool_call_prefix: str = "call",
    seed: int = 0,
    attempt: int = 0,
    input_tokens: int = 1,
    default_stream: StreamShape | None = None,
) -> ReplyPlan:
    """The reply for ``selection``.

    ``attempt`` is the client's retry count (``x-stainless-retry-count``): an
    instruction's ``error`` with ``times: N`` fails attempts 0..N-1 only.
    ``input_tokens`` is reported in usage (``mockllm._usage`` says how it is counted).
    ``tool_call_prefix`` starts the ids of tool calls the script leaves unnamed (each
    codec has its provider's: ``call`` for OpenAI, ``toolu`` for Anthropic).
    ``default_stream`` is the shape of a reply whose instruction has no ``stream`` block;
    the caller checks that its cuts fit the texts (``mockllm._cutting.cut_problem``).
    """
    turn = selection.turn_index if selection.turn_index is not None else 0
    chain = selection.chain_id or "nochain"
    key = (seed, chain, turn)
    instruction = selection.instruction
    if instruction is None:
        reason = selection.fallback_reason or "no instruction"
        instruction = Instruction(messages=[TextMessage(text_message=ContentSpec(text=fallback_text(reason)))])

    error: ErrorPlan | None = None
    spec = instruction.error
    if spec is not None and (spec.times is None or attempt < spec.times):
        error = ErrorPlan(spec.status, spec.type, spec.message, spec.retry_after_ms, spec.after_chunks)

    reasoning = _content(instruction.reasoning, *key, "reasoning") if instruction.reasoning else None
    parts: list[ReplyPart] = []
    calls = 0
    messages = instruction.messages
    if messages is None and reasoning is None:
        # Error-only instruction: what the retry that succeeds gets.
        parts.append(TextPart(generate_words(RECOVERED_WORDS, *key, "recovered")))
    for position, message in enumerate(messages or ()):
        if isinstance(message, TextMessage):
            parts.append(TextPart(_content(message.text_message, *key, "text", position)))
            continue
        for call in message.tool_call:
            call_id = call.id or tool_call_id(tool_call_prefix, chain, turn, calls)
            arguments = _arguments_json(call.args)
            parts.append(ToolCallPart(call_id, call.name, arguments))
            calls += 1

    stop_reason = instruction.stop_reason or ("tool_use" if calls else "end_turn")
    # Counted by length: joining the texts would copy the whole reply once more.
    output_chars = len(reasoning or "") + sum(
        len(p.text) if isinstance(p, TextPart) else len(p.arguments) for p in parts
    )
    pacing = None
    if instruction.timing is not None and (instruction.timing.first_chunk_ms or instruction.timing.chunk_ms):
        pacing = Pacing(instruction.timing.first_chunk_ms / 1000, instruction.timing.chunk_ms / 1000)
    return ReplyPlan(
        reasoning=reasoning,
        parts=tuple(parts),
        stop_reason=stop_reason,
        usage=Usage(max(1, input_tokens), tokens_in_length(output_chars)),
        response_id=stable_hex(*key, "response"),
        created=CREATED_EPOCH + turn,
        chunk_words=instruction.chunk_words or DEFAULT_CHUNK_WORDS,
        pacing=pacing,
        error=error,
        reasoning_signature=stable_hex(*key, "signature", length=64) if reasoning is not None else "",
        headers=_headers(selection),
        stream=instruction.stream if instruction.stream is not None else default_stream,
        stream_faults=instruction.stream_faults,
    )
