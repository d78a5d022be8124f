"""Registered scripts: chains for conversations that carry no instruction tags.

An app that builds its own prompt (a system prompt, ``f"Question: {q}"``) cannot be
scripted by tags without smuggling them through its input. A registered script is the
chain the request would have carried: when no user message holds tags, the first
registered script whose ``match`` fits answers, exactly as if its chain were tagged into
the first user message. The turn index is still the number of assistant turns the
seed's rules count after that message, so a reply depends only on the request and the
registered scripts — no per-request state, the same bytes through every door. Tags in a
message win over every registered script.

``match`` narrows which conversations a script answers (all given parts must fit):
``text`` (a substring of the first user message), ``pattern`` (a regular expression
searched in it), ``model`` (the request's model name, as its codec reads it: the body's,
or the path's for Bedrock and Gemini; ``WireCodec.request_model``) and ``header`` (a
request header ``[name, value]``). A plain ``str`` is ``text``; a compiled
``re.Pattern`` is ``pattern``.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Union

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from mockllm._conversation import Conversation
from mockllm._exceptions import InvalidScript, ScriptLimitReached
from mockllm._instructions import INSTRUCTION_END, INSTRUCTION_START, InstructionChain
from mockllm._limits import Limits
from mockllm._parsing import Script, parse_script
from mockllm._selection import Selection, select_in_conversation
from mockllm._shapes import as_stream_faults, as_stream_shape
from mockllm._state import Codec, MemoryState, State
from mockllm._validation import script_validation_error

__all__ = [
    "RegisteredScript",
    "ScriptMatch",
    "ScriptRegistry",
    "ScriptRequest",
    "as_chain",
    "as_match",
    "with_stream",
]


class ScriptMatch(BaseModel):
    """Which tag-free conversations a script answers; every part given must fit."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    text: str | None = None
    pattern: str | None = None
    model: str | None = None
    header: tuple[str, str] | None = None

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(value)
            except re.error as exc:
                raise ValueError(f"not a valid regular expression: {exc}") from None
        return value

    def fits(self, first_user_text: str, model: str | None, headers: Mapping[str, str]) -> bool:
        if self.text is not None and self.text not in first_user_text:
            return False
        if self.pattern is not None and re.search(self.pattern, first_user_text) is None:
            return False
        if self.model is not None and self.model != model:
            return False
        if self.header is not None and headers.get(self.header[0].lower()) != self.header[1]:
            return False
        return True

    def describe(self) -> str:
        parts = [f"{name}={value!r}" for name, value in self.model_dump(exclude_none=True).items()]
        return ", ".join(parts) if parts else "any conversation"


class ScriptRequest(InstructionChain):
    """The body of ``POST /_mockllm/scripts``: a chain (checked as strictly as one built
    in Python) and an optional match."""

    match: ScriptMatch = Field(default_factory=ScriptMatch)


MatchLike = Union[None, str, "re.Pattern[str]", Mapping[str, Any], ScriptMatch]


def as_match(match: MatchLike) -> ScriptMatch:
    """``match`` as a ``ScriptMatch``: None, a substring, a compiled regex or a mapping."""
    if match is None:
        return ScriptMatch()
    if isinstance(match, ScriptMatch):
        return match
    if isinstance(match, str):
        return ScriptMatch(text=match)
    if isinstance(match, re.Pattern):
        return ScriptMatch(pattern=match.pattern)
    if isinstance(match, Mapping):
        try:
            return ScriptMatch.model_validate(dict(match))
        except ValidationError as exc:
            raise script_validation_error(exc, ScriptMatch) from None
    raise InvalidScript(
        f"match must be None, a substring, a re.Pattern or a mapping such as "
        f"{{'model': 'gpt-4o'}} or {{'header': ('x-test', 'a')}}; got {match!r}."
    )


def as_chain(chain: Any) -> InstructionChain:
    """``chain`` as an ``InstructionChain``: one already, a list of instructions, or a
    mapping with an ``instruction_chain`` key (validated strictly)."""
    if isinstance(chain, InstructionChain):
        return chain
    if isinstance(chain, list):
        return InstructionChain(instruction_chain=chain)
    if isinstance(chain, Mapping):
        return InstructionChain.model_validate(dict(chain))
    raise InvalidScript(f"chain must be an InstructionChain, a list of instructions or a mapping; got {chain!r}.")


def with_stream(chain: Any, stream: Any = None, stream_faults: Any = None) -> InstructionChain:
    """``chain`` (as ``as_chain`` reads it) with ``stream`` and ``stream_faults`` set on
    every instruction that has none of its own."""
    checked = as_chain(chain)
    shape = as_stream_shape(stream)
    faults = as_stream_faults(stream_faults)
    if shape is None and faults is None:
        return checked
    steps = []
    for step in checked.instruction_chain:
        update: dict[str, Any] = {}
        if shape is not None and step.stream is None:
            update["stream"] = shape
        if faults is not None and step.stream_faults is None:
            update["stream_faults"] = faults
        steps.append(step.model_copy(update=update) if update else step)
    return InstructionChain(instruction_chain=steps)


@dataclass(frozen=True)
class RegisteredScript:
    """One registered chain, its match and how it reads as an instruction block."""

    id: str
    chain: InstructionChain
    match: ScriptMatch
    script: Script
    block: str
    """The chain's JSON, as it would sit between the instruction tags."""

    @property
    def step_labels(self) -> tuple[str, ...]:
        return self.script.step_labels

    def describe(self) -> str:
        return (
            f"script {self.id} (match {self.match.describe()}): chain {self.script.fingerprint} "
            f"of {len(self.script.entries)} step(s) {list(self.step_labels)}"
        )

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "match": self.match.model_dump(exclude_none=True),
            "chain_id": self.script.fingerprint,
            "description": self.describe(),
            **self.chain.model_dump(mode="json", exclude_none=True),
        }


def _encoded(entry: RegisteredScript) -> str:
    return json.dumps({"id": entry.id, "block": entry.block, "match": entry.match.model_dump(exclude_none=True)})


def _decoded(text: str) -> RegisteredScript:
    data = json.loads(text)
    block = data["block"]
    script = parse_script(block)
    assert isinstance(script, Script)  # it parsed when it was registered
    chain = InstructionChain.model_validate_json(block)
    return RegisteredScript(data["id"], chain, ScriptMatch.model_validate(data["match"]), script, block)


_SCRIPT_CODEC: Codec[RegisteredScript] = Codec(_encoded, _decoded)


class ScriptRegistry:
    """The registered scripts of one mock, in registration order (the first fit wins),
    at most ``limits.max_scripts`` of them and ``limits.scripts_bytes`` of their JSON.
    Kept in ``state`` (``mockllm._state``), so that with ``serve --workers`` a script
    registered through one worker is served by every one; each process keeps the scripts
    parsed until another changes them: each change writes a new random version beside
    them, which a counter would not be (a Redis that lost its data counts from 1 again,
    and a process holding version 1 would keep serving the scripts that went with it)."""

    def __init__(self, limits: Limits | None = None, *, state: State | None = None) -> None:
        where = state if state is not None else MemoryState()
        self._lock = threading.Lock()
        self._stored = where.map("scripts", codec=_SCRIPT_CODEC)
        self._counts = where.counters("scripts")
        self._version = where.map("scripts-version")
        self._cached: tuple[object, tuple[RegisteredScript, ...]] = (object(), ())  # nothing read yet
        self._limits = limits if limits is not None else Limits()

    @property
    def _scripts(self) -> tuple[RegisteredScript, ...]:
        version = self._version.get("version")
        cached_version, scripts = self._cached
        if version != cached_version:
            scripts = tuple(entry for _, entry in self._stored.items())
            self._cached = (version, scripts)
        return scripts

    def _changed(self) -> None:
        self._version.put("version", os.urandom(8).hex())

    def __bool__(self) -> bool:
        return bool(self._scripts)

    def __iter__(self) -> Any:
        return iter(self._scripts)

    def add(
        self, chain: Any, match: MatchLike = None, *, stream: Any = None, stream_faults: Any = None
    ) -> RegisteredScript:
        """Register ``chain`` (``stream``/``stream_faults``: see ``with_stream``);
        ``ScriptLimitReached`` when the registry is full. The same chain (its stream
        blocks aside) with the same match replaces the one registered before."""
        checked = with_stream(chain, stream, stream_faults)
        try:
            block = checked.model_dump_json(exclude_none=True)
        except ValueError as exc:  # lone surrogates, nesting past pydantic's limit
            raise InvalidScript(
                f"The chain cannot be written as JSON, so it cannot be registered: {exc}; "
                "use well-formed text and nest tool arguments less deeply."
            ) from exc
        script = parse_script(block)
        if not isinstance(script, Script):  # a validated chain only fails past MAX_VALUES
            raise ScriptLimitReached(f"This script is too large to register: {script.reason}.")
        matching = as_match(match)
        with self._lock:
            scripts = self._scripts
            same = next(
                (s for s in scripts if (s.script.fingerprint, s.match) == (script.fingerprint, matching)),
                None,
            )
            if same is not None:
                entry = RegisteredScript(same.id, checked, matching, script, block)
            else:
                self._make_room_for(scripts, len(block))
                entry = RegisteredScript(f"script-{self._counts.incr('ids')}", checked, matching, script, block)
            self._stored.put(entry.id, entry)
            self._changed()
        return entry

    def _make_room_for(self, scripts: tuple[RegisteredScript, ...], size: int) -> None:
        count, budget = self._limits.max_scripts, self._limits.scripts_bytes
        held_bytes = sum(len(s.block) for s in scripts)
        if len(scripts) < count and held_bytes + size <= budget:
            return
        held = (
            f"{len(scripts)} scripts, the most it keeps"
            if len(scripts) >= count
            else f"{held_bytes} bytes of scripts and this one is {size} more, past its {budget}"
        )
        raise ScriptLimitReached(
            f"The mock holds {held} (Limits(max_scripts={count}, scripts_bytes={budget}); "
            "serve --max-scripts and --max-scripts-bytes). Remove scripts a test no longer needs "
            "(DELETE /_mockllm/scripts/{id}) or reset the mock (MockLLM.reset, POST /_mockllm/reset)."
        )

    def get(self, script_id: str) -> RegisteredScript | None:
        return next((s for s in self._scripts if s.id == script_id), None)

    def remove(self, script_id: str) -> RegisteredScript | None:
        with self._lock:
            found = self._stored.remove(script_id)
            if found is not None:
                self._changed()
        return found

    def clear(self) -> None:
        with self._lock:
            self._stored.clear()
            self._changed()  # a new version: another process may hold the old scripts

    def select(
        self, conversation: Conversation, protocol: str, *, model: str | None, headers: Mapping[str, str]
    ) -> tuple[Selection, RegisteredScript | None]:
        """The selection the first fitting script makes, read as if its chain were
        tagged into the first user message; when none fits, the fallback saying what
        the scripts' matches were compared with."""
        first = next((i for i, m in enumerate(conversation.messages) if m.role == "user"), None)
        if first is None:
            return _no_fit(protocol, "the request has no user message to compare their match with"), None
        message = conversation.messages[first]
        for entry in self._scripts:
            if entry.match.fits(message.text, model, headers):
                tagged = message._replace(text=f"{message.text}\n{INSTRUCTION_START}{entry.block}{INSTRUCTION_END}")
                messages = (*conversation.messages[:first], tagged, *conversation.messages[first + 1 :])
                return select_in_conversation(Conversation(messages), protocol), entry
        shown = message.text if len(message.text) <= _SHOWN_CHARS else message.text[:_SHOWN_CHARS] + "…"
        return _no_fit(protocol, f"none fits the first user message {shown!r} (model {model!r})"), None


_SHOWN_CHARS = 200
"""How much of the first user message a fallback reason quotes."""


def _no_fit(protocol: str, why: str) -> Selection:
    return Selection(
        protocol,
        chain_found=False,
        instruction=None,
        fallback_reason=f"no user message holds an instruction block, and of the registered scripts {why}",
    )
