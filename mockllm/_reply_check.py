"""Scripted replies held to what the request lets a real provider say.

Two things a script can say that production never would (``mockllm._reply_breach``):

- a reply longer than the request's output-token limit (Chat ``max_completion_tokens`` /
  ``max_tokens``, Responses ``max_output_tokens``, Anthropic ``max_tokens``, Gemini
  ``maxOutputTokens``, Bedrock ``maxTokens``, Ollama ``num_predict``): counted by the mock's
  own rule, the output tokens the reply reports (``mockllm._usage``), generated words as
  literal text;
- text that breaks the request's strict structured output (OpenAI's strict
  ``json_schema`` and ``json_object``, Anthropic's ``output_config.format``, Gemini's
  ``responseSchema`` / ``responseJsonSchema``, Ollama's ``format``), checked by the one
  JSON Schema check (``mockllm._tool_check.schema_problem``, cached).

Each codec reads what its request asks (``WireCodec.reply_contract``). Exempt: a scripted
error; a step scripted with ``stop_reason: max_tokens``, which is the test of truncation
(a cut reply is long, and its JSON may be cut too); for the format, a refusal or a content
filter's stop, and a reply with no text (tool calls only).
"""

from __future__ import annotations

import json

from mockllm._plan import ReplyPlan, TextPart
from mockllm._reply_breach import ImpossibleReply, ReplyBreach
from mockllm._tool_check import schema_problem
from mockllm._wire.reading import UNBOUNDED, OutputFormat, ReplyContract

__all__ = ["impossible_replies"]

_CUT = "max_tokens"
"""The neutral stop reason of a reply cut at the limit (``mockllm._instructions``)."""
_FORMAT_EXEMPT = (_CUT, "refusal", "content_filter")
"""Stops whose text no structured output guarantees: cut, refused, filtered."""


def impossible_replies(plan: ReplyPlan, contract: ReplyContract) -> list[ImpossibleReply]:
    """How the scripted ``plan`` breaks what ``contract`` (its request's) lets a provider
    say; empty for a reply a provider could give."""
    if contract is UNBOUNDED or plan.error is not None:
        return []
    found = []
    limit, limit_said, form = contract
    tokens = plan.usage.output_tokens
    if limit is not None and tokens > limit and plan.stop_reason != _CUT:
        reason = (
            f"the reply is {tokens} tokens by the mock's rule (ceil(characters / 4) over its reasoning, text "
            f"and tool-call arguments; docs/wire.md, 'Usage'), and the request allows {limit_said}={limit}: "
            f"a real provider would have cut it there and said so"
        )
        found.append(
            ImpossibleReply(breach=ReplyBreach.OVER_OUTPUT_LIMIT, reason=reason, output_tokens=tokens, limit=limit)
        )
    if form is not None and plan.stop_reason not in _FORMAT_EXEMPT and _has_text(plan):
        problem = _format_problem(plan.text, form)
        if problem is not None:
            reason = f"the reply's text breaks the request's {form.said}, which a real provider guarantees: {problem}"
            found.append(ImpossibleReply(breach=ReplyBreach.BREAKS_OUTPUT_FORMAT, reason=reason))
    return found


def _has_text(plan: ReplyPlan) -> bool:
    return any(isinstance(part, TextPart) for part in plan.parts)


def _format_problem(text: str, form: OutputFormat) -> str | None:
    """Why ``text`` is not what ``form`` guarantees; None when it is."""
    if form.schema is not None:
        return schema_problem(text, form.schema, "(the text)", "the text is not JSON")
    try:
        value = json.loads(text)
    except ValueError as exc:
        return f"the text is not JSON ({exc})"
    if form.json_object and not isinstance(value, dict):
        return f"the text is JSON but not an object (it starts {text.strip()[:40]!r})"
    return None
