"""Stream shapes: how a streamed reply is cut and delivered, apart from what it says.

Every shape here is *legal*: a provider may stream the same message in any of them, and
the official SDKs reassemble the same message from each. A shape is scripted per
instruction (its ``stream`` block), per registered script (``script(chain, stream=...)``)
or as a mock's default (``MockLLM(stream=...)``, ``serve --stream-shape``)::

    {"stream": {"text": {"size": 3}, "arguments": {"at": [1, 5]},
                "id_with_arguments": true, "writes": {"seed": 4}, "split_utf8": true}}

Content knobs are applied where the codecs cut deltas (``mockllm._cutting``); byte knobs
where the server and the transports deliver (``mockllm._delivery``). A knob a protocol
cannot express is left out for that protocol (docs/stream-shapes.md has the table).

Faults are a separate block, ``stream_faults``, never mixed with legal shapes: a stream
that breaks the protocol (no terminal event, a truncated last event, a reset connection,
a stall before the first byte), for testing a client's error handling.

Both models print as the Python that makes them (``StreamShape(text={'size': 1})``), and
``snippet()`` gives the instruction's JSON block: what a failing property shrinks to.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = ["Cuts", "StreamFaults", "StreamShape", "as_stream_faults", "as_stream_shape"]

MAX_CUT = 1 << 20
"""The largest piece size a cut may ask for (a bigger one is surely a mistake)."""


class _ShapeModel(BaseModel):
    # Unknown keys are kept, not rejected, so that the lenient parser can warn about
    # them (as every instruction model does); ``InstructionChain`` refuses them. Built on
    # first use, not at import, as the instruction models are.
    model_config = ConfigDict(extra="allow", frozen=True, defer_build=True)

    def _set_fields(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_defaults=True)

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={value!r}" for name, value in self._set_fields().items())
        return f"{type(self).__name__}({fields})"

    def __str__(self) -> str:
        return repr(self)


class Cuts(_ShapeModel):
    """Where a sequence is cut into pieces: give exactly one of

    - ``size``: every N characters (bytes, for ``writes``);
    - ``at``: these cut points, strictly increasing, each inside the sequence;
    - ``seed``: pieces of 1 to ``max_size`` from a random generator of that seed (the
      same seed, the same cuts).
    """

    size: int | None = Field(default=None, ge=1, le=MAX_CUT)
    at: list[int] | None = None
    seed: int | None = Field(default=None, ge=0)
    max_size: int = Field(default=8, ge=1, le=MAX_CUT)

    @model_validator(mode="after")
    def _exactly_one(self) -> Cuts:
        given = [name for name in ("size", "at", "seed") if getattr(self, name) is not None]
        if len(given) != 1:
            raise ValueError(f"give exactly one of 'size', 'at' or 'seed', got {given or 'none'}")
        if self.at is not None:
            if not self.at or self.at[0] < 1 or any(b <= a for a, b in zip(self.at, self.at[1:], strict=False)):
                raise ValueError(f"'at' must be cut points 1 or more, strictly increasing; got {self.at}")
        return self


class StreamShape(_ShapeModel):
    """A legal way to stream a reply (see the module docstring and docs/stream-shapes.md).

    - ``text``: how text and reasoning are cut, in characters (default: by words,
      ``chunk_words``);
    - ``arguments``: how tool-call arguments are cut, in characters (default: the
      protocol's slice, 7 or 8 characters);
    - ``id_with_arguments``: a tool call's first delta carries its id, name *and* the
      first piece of its arguments (OpenAI Chat; elsewhere the protocol keeps them apart);
    - ``empty_first_delta``: every text, reasoning and arguments stream opens with an
      empty delta;
    - ``finish_with_last_delta``: the finish (Chat's ``finish_reason``, Gemini's
      ``finishReason`` and usage, Ollama's ``done``) rides in the chunk of the last delta
      instead of a chunk of its own (OpenAI Chat, Gemini, Ollama; elsewhere the protocol's
      events keep them apart);
    - ``usage_chunk``: the usage report as if asked for (OpenAI Chat: a last chunk with
      ``choices: []``, as ``stream_options.include_usage`` gives; Anthropic: full usage on
      ``message_delta``);
    - ``ping_every``: an Anthropic ``ping`` event after every N events;
    - ``keep_alive_every``: an SSE comment (``: keep-alive``) before the first event and
      after every N events;
    - ``writes``: how the bytes are cut into HTTP chunks (cutting SSE lines anywhere);
    - ``split_utf8``: also cut inside every multi-byte UTF-8 character;
    - ``gzip``: ``content-encoding: gzip`` (the server only: in process it is an error).
    """

    text: Cuts | None = None
    arguments: Cuts | None = None
    id_with_arguments: bool = False
    empty_first_delta: bool = False
    finish_with_last_delta: bool = False
    usage_chunk: bool = False
    ping_every: int | None = Field(default=None, ge=1)
    keep_alive_every: int | None = Field(default=None, ge=1)
    writes: Cuts | None = None
    split_utf8: bool = False
    gzip: bool = False

    @property
    def cuts_content(self) -> bool:
        """Whether a codec renders this shape differently from the default."""
        return bool(
            self.text
            or self.arguments
            or self.id_with_arguments
            or self.empty_first_delta
            or self.finish_with_last_delta
            or self.usage_chunk
            or self.ping_every
        )

    @property
    def shapes_bytes(self) -> bool:
        """Whether delivery differs from the default (``mockllm._delivery``)."""
        return bool(self.keep_alive_every or self.writes or self.split_utf8 or self.gzip)

    def snippet(self) -> str:
        """The instruction's JSON block that scripts this shape."""
        return '"stream": ' + json.dumps(self._set_fields(), sort_keys=True)


class StreamFaults(_ShapeModel):
    """Faults in the stream: each one breaks the protocol, on purpose.

    - ``drop_terminal``: the terminal event never comes (``[DONE]``, ``message_stop``,
      ``response.completed``); the connection ends cleanly;
    - ``truncate_last``: the last event is cut in its middle, then a clean end;
    - ``reset_at_event``: the connection is reset in the middle of event N (0-based; past
      the end, the last event);
    - ``stall_ms``: nothing, not even the status line, for this long (capped like every
      scripted delay, ``serve --max-delay-ms``).
    """

    drop_terminal: bool = False
    truncate_last: bool = False
    reset_at_event: int | None = Field(default=None, ge=0)
    stall_ms: float | None = Field(default=None, ge=0, allow_inf_nan=False)

    @property
    def any(self) -> bool:
        return bool(self.drop_terminal or self.truncate_last or self.reset_at_event is not None or self.stall_ms)

    def snippet(self) -> str:
        """The instruction's JSON block that scripts these faults."""
        return '"stream_faults": ' + json.dumps(self._set_fields(), sort_keys=True)


def as_stream_shape(
    value: StreamShape | Mapping[str, Any] | str | None, *, where: str = "stream"
) -> StreamShape | None:
    """``value`` as a ``StreamShape``: one already, a mapping, or its JSON text. Unknown
    keys are an error here (this is code or a command line, not a lenient script)."""
    shape: StreamShape | None = _as_model(StreamShape, value, where)
    return shape


def as_stream_faults(
    value: StreamFaults | Mapping[str, Any] | str | None, *, where: str = "stream_faults"
) -> StreamFaults | None:
    """``value`` as ``StreamFaults`` (as ``as_stream_shape`` does)."""
    faults: StreamFaults | None = _as_model(StreamFaults, value, where)
    return faults


def _as_model(model: type[Any], value: Any, where: str) -> Any:
    if value is None or isinstance(value, model):
        return value
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError as exc:
            raise ValueError(
                f'{where}: not valid JSON ({exc}); give an object such as {{"text": {{"size": 1}}}}'
            ) from None
    if not isinstance(value, Mapping):
        raise ValueError(f"{where} must be a {model.__name__}, a mapping or its JSON text; got {value!r}")
    checked = model.model_validate(dict(value))
    unknown = _unknown(checked, where)
    if unknown:
        raise ValueError("; ".join(unknown))
    return checked


def _unknown(model: BaseModel, where: str) -> list[str]:
    found = [
        f"{where}: unknown key {key!r}; known keys are {sorted(type(model).model_fields)}"
        for key in model.model_extra or {}
    ]
    for name in type(model).model_fields:
        value = getattr(model, name)
        if isinstance(value, BaseModel):
            found += _unknown(value, f"{where}.{name}")
    return found
