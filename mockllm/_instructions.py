"""The instruction format a test writes into a user message.

A script is JSON between ``<|instruction_start|>`` and ``<|instruction_end|>``::

    {"instruction_chain": [
        {"id": "step-1", "messages": [{"text_message": {"length": 30}}]},
        {"id": "step-2", "reasoning": {"length": 20},
         "messages": [{"tool_call": [{"name": "fetch", "args": {}}]}]}
    ]}

Each instruction scripts one assistant turn. The legacy form is a single instruction
object with no ``instruction_chain`` key; it scripts the reply to the message that
carries it, exactly like a chain of one.

Beyond the seed's format, an instruction may carry ``error`` (an HTTP or mid-stream
fault), ``timing`` (streaming pace), ``chunk_words`` (words per streamed delta),
``stop_reason`` (override of the reported stop reason), ``stream`` (a legal stream
shape) and ``stream_faults`` (faults in the stream; both ``mockllm._shapes``).
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Self

from pydantic import BaseModel, BeforeValidator, ConfigDict, Discriminator, Field, Tag, ValidationError, model_validator
from pydantic_core import PydanticCustomError

from mockllm._latency import LatencyProfile
from mockllm._shapes import StreamFaults, StreamShape
from mockllm._validation import did_you_mean, script_validation_error, unknown_keys_error

__all__ = [
    "ContentSpec",
    "ErrorSpec",
    "Instruction",
    "InstructionChain",
    "TextMessage",
    "TimingSpec",
    "ToolCallMessage",
    "ToolCallSpec",
    "INSTRUCTION_BLOCK",
    "INSTRUCTION_END",
    "INSTRUCTION_START",
    "STOP_REASONS",
    "tag_block",
    "normalise_stop_reason",
    "reject_unknown_keys",
    "strip_instructions",
    "unknown_keys",
]

# Provider-neutral stop reasons; codecs map them to each provider's vocabulary, and
# a script may use any provider's spelling (see ``normalise_stop_reason``).
STOP_REASONS = ("end_turn", "tool_use", "max_tokens", "stop_sequence", "content_filter", "refusal")
_STOP_REASON_ALIASES = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "length": "max_tokens",
    "max_output_tokens": "max_tokens",
}


def normalise_stop_reason(value: str) -> str:
    """Map any provider's spelling of a stop reason to the neutral one."""
    value = _STOP_REASON_ALIASES.get(value, value)
    if value not in STOP_REASONS:
        allowed = sorted(set(STOP_REASONS) | set(_STOP_REASON_ALIASES))
        raise ValueError(f"unknown stop_reason {value!r}; use one of {allowed}")
    return value


class _Model(BaseModel):
    # Unknown keys are kept (not rejected) so that the parser can warn about them.
    # Built on first use, not at import: a bare server validates no script at start.
    model_config = ConfigDict(extra="allow", frozen=True, defer_build=True)

    def __init__(self, /, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            # Built in Python: the problems one a line, as a scenario file reports them.
            raise script_validation_error(exc, type(self)) from None

    @classmethod
    def model_validate(cls, obj: Any, **kwargs: Any) -> Self:
        try:
            return super().model_validate(obj, **kwargs)
        except ValidationError as exc:
            raise script_validation_error(exc, cls) from None

    def _unknown_key_hint(self) -> str:
        # A typo often shows first as a missing field ("lenght" leaves no "length"):
        # name it in that error too.
        found = [f"unknown key {key!r}{hint}" for _, key, hint in unknown_keys(self)]
        return f" ({'; '.join(found)})" if found else ""


def unknown_keys(model: BaseModel, loc: tuple[str | int, ...] = ()) -> list[tuple[tuple[str | int, ...], str, str]]:
    """``(location of the key, key, "; did you mean 'nearest'?")`` for every key the
    models inside ``model`` do not know (tool-call ``args`` are free-form and never checked)."""
    found = []
    for key in model.model_extra or {}:
        found.append(((*loc, key), key, did_you_mean(key, type(model).model_fields)))
    for name in type(model).model_fields:
        value = getattr(model, name)
        values = value if isinstance(value, list) else [value]
        for i, item in enumerate(values):
            if isinstance(item, BaseModel):
                found.extend(unknown_keys(item, (*loc, name, i) if isinstance(value, list) else (*loc, name)))
    return found


def reject_unknown_keys(value: BaseModel | list[Any]) -> Any:
    """``value`` (a scripting model, or a list of them), or the error that reports, one a
    line, each key its models do not know: what a script written as code or as a
    scenario file gets for a typo (the wire parser only warns)."""
    items = enumerate(value) if isinstance(value, list) else [(None, value)]
    found = [
        (where, f"unknown key {key!r}{hint}")
        for i, item in items
        if isinstance(item, BaseModel)
        for where, key, hint in unknown_keys(item, () if i is None else (i,))
    ]
    if found:
        raise unknown_keys_error(found)
    return value


MAX_WORDS = 100_000
"""The most words one ``length`` may ask for: a larger script is surely a mistake."""


class ContentSpec(_Model):
    """Generated text: ``length`` words (exact, whitespace-separated) or verbatim ``text``."""

    length: int | None = Field(default=None, ge=0, le=MAX_WORDS)
    text: str | None = None

    @model_validator(mode="after")
    def _one_of(self) -> ContentSpec:
        if (self.length is None) == (self.text is None):
            raise ValueError("give exactly one of 'length' (a number of words) or 'text'" + self._unknown_key_hint())
        return self


class ToolCallSpec(_Model):
    """One tool call: ``name``, ``args`` (a JSON object) and an optional fixed ``id``."""

    name: str = Field(min_length=1)
    args: dict[str, Any] = Field(default_factory=dict)
    id: str | None = Field(default=None, min_length=1, pattern=r"^[A-Za-z0-9_-]+$")


class TextMessage(_Model):
    text_message: ContentSpec


class ToolCallMessage(_Model):
    """Several entries are parallel calls made in ONE assistant turn."""

    tool_call: list[ToolCallSpec] = Field(min_length=1)


_MESSAGE_KINDS = ("text_message", "tool_call")


def _message_kind(value: Any) -> str | None:
    keys = value if isinstance(value, dict) else vars(value) if isinstance(value, BaseModel) else {}
    return next((kind for kind in _MESSAGE_KINDS if kind in keys), None)


def _has_a_message_kind(value: Any) -> Any:
    if isinstance(value, dict) and _message_kind(value) is None:
        hints = [f"unknown key {key!r}{did_you_mean(key, _MESSAGE_KINDS)}" for key in value if isinstance(key, str)]
        close = [hint for hint in hints if "did you mean" in hint]
        raise PydanticCustomError(
            "message_kind",
            "a message needs a 'text_message' or a 'tool_call' key" + (f" ({'; '.join(close)})" if close else ""),
        )
    return value


MessageSpec = Annotated[
    Annotated[TextMessage, Tag("text_message")] | Annotated[ToolCallMessage, Tag("tool_call")],
    Discriminator(
        _message_kind,
        custom_error_type="message_kind",
        custom_error_message="a message needs a 'text_message' or a 'tool_call' key",
    ),
    BeforeValidator(_has_a_message_kind),
]


class ErrorSpec(_Model):
    """A scripted fault.

    ``times``: fail only the first N attempts of the same request (attempts are told
    apart by the SDKs' ``x-stainless-retry-count`` header, or without it by counting
    identical requests: see ``mockllm._attempts``); absent means every attempt fails. ``after_chunks``: start a normal stream and fail
    it after K server-sent events, in the protocol's own error form.
    """

    status: int = Field(default=500, ge=400, le=599)
    type: str | None = None
    message: str | None = None
    retry_after_ms: int | None = Field(default=None, ge=0)
    times: int | None = Field(default=None, ge=1)
    after_chunks: int | None = Field(default=None, ge=0)


class TimingSpec(_Model):
    """Streaming pace in milliseconds. Without it the mock never sleeps. The server
    shortens any delay past its cap (``serve --max-delay-ms``, default 30 s)."""

    first_chunk_ms: float = Field(default=0, ge=0, allow_inf_nan=False)
    chunk_ms: float = Field(default=0, ge=0, allow_inf_nan=False)
    profile: LatencyProfile | None = None
    """Delays drawn from a latency profile instead (``mockllm._latency``)."""

    @model_validator(mode="after")
    def _one_pace(self) -> TimingSpec:
        if self.profile is not None and (self.first_chunk_ms or self.chunk_ms):
            raise ValueError("timing: give either 'profile' or 'first_chunk_ms'/'chunk_ms', not both")
        return self


class Instruction(_Model):
    """One scripted assistant turn."""

    id: str | None = None
    id_message: str | None = None
    reasoning: ContentSpec | None = None
    messages: list[MessageSpec] | None = Field(default=None, min_length=1)
    error: ErrorSpec | None = None
    timing: TimingSpec | None = None
    chunk_words: int | None = Field(default=None, ge=1)
    stop_reason: str | None = None
    stream: StreamShape | None = None
    stream_faults: StreamFaults | None = None

    @model_validator(mode="before")
    @classmethod
    def _coerce_id(cls, data: Any) -> Any:
        # Ids are labels; a test that writes {"id": 1} means "1".
        if isinstance(data, dict) and isinstance(data.get("id"), (int, float)):
            data = {**data, "id": str(data["id"])}
        return data

    @model_validator(mode="after")
    def _has_content(self) -> Instruction:
        if self.messages is None and self.reasoning is None and self.error is None:
            raise ValueError(
                "an instruction needs at least one of 'messages', 'reasoning' or 'error'" + self._unknown_key_hint()
            )
        if self.stop_reason is not None:
            object.__setattr__(self, "stop_reason", normalise_stop_reason(self.stop_reason))
        return self


INSTRUCTION_START = "<|instruction_start|>"
INSTRUCTION_END = "<|instruction_end|>"
INSTRUCTION_BLOCK = re.compile(re.escape(INSTRUCTION_START) + r".*?" + re.escape(INSTRUCTION_END), re.S)
"""Matches one instruction block, tags included."""


def tag_block(block: str, prompt: str = "") -> str:
    """The user-message text: ``prompt`` followed by the chain's JSON ``block`` between the tags."""
    head = f"{prompt}\n" if prompt else ""
    return f"{head}{INSTRUCTION_START}\n{block}\n{INSTRUCTION_END}"


def strip_instructions(text: str) -> str:
    """``text`` without its instruction blocks.

    Code that quotes a scripted prompt back to the model (a planner re-sending the
    query, a routing prompt citing it) sends this: a quoted copy that kept its block
    would be the newest tagged message and restart the script.
    """
    return INSTRUCTION_BLOCK.sub("", text).strip()


class InstructionChain(_Model):
    """A chain to write into a user message, built in Python (strictly validated).

    The server side parses leniently, entry by entry (see ``mockllm._parsing``); this
    model is for authoring: ``InstructionChain(instruction_chain=[...]).tagged()``.
    """

    instruction_chain: list[Instruction]

    @model_validator(mode="after")
    def _no_unknown_keys(self) -> InstructionChain:
        # The wire parser only warns about unknown keys; a chain written in Python is
        # checked as strictly as code is: a typo is an error at construction.
        reject_unknown_keys(self)
        return self

    def tagged(self, prompt: str = "") -> str:
        """The user-message text: ``prompt`` followed by this chain between the tags."""
        return tag_block(self.model_dump_json(exclude_none=True), prompt)
