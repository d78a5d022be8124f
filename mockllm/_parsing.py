"""Parsing the instruction block out of a user message, leniently.

Malformed input is never an exception here: the result is a ``Script`` whose entries
are either a valid ``Instruction`` or an ``InvalidInstruction`` that says what was
wrong, or a ``ScriptFailure`` that says why there is no script at all. Each entry is
validated on its own, so one bad entry keeps every other entry at its index.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Union

from pydantic import ValidationError

from mockllm._instructions import INSTRUCTION_END, INSTRUCTION_START, Instruction, unknown_keys
from mockllm._limits import nested_deeper_than, non_finite_path
from mockllm._validation import field_path, validation_problems

__all__ = [
    "InvalidInstruction",
    "Script",
    "ScriptFailure",
    "clear_script_cache",
    "extract_block",
    "parse_script",
]


@dataclass(frozen=True)
class InvalidInstruction:
    """An entry that failed validation; its turn gets the fallback reply."""

    position: int
    reason: str


Entry = Union[Instruction, InvalidInstruction]


@dataclass(frozen=True)
class Script:
    """A parsed script: a chain, or the legacy single instruction (a chain of one)."""

    entries: tuple[Entry, ...]
    legacy: bool
    fingerprint: str
    """8 hex digits of the canonical JSON: names the chain in ids and headers."""
    warnings: tuple[str, ...] = ()

    @cached_property
    def step_labels(self) -> tuple[str, ...]:
        """Each entry's ``id`` (or its position) in chain order: made once a script (a
        parsed script is kept, ``parse_script``), not once a request."""
        return tuple(
            e.id if isinstance(e, Instruction) and e.id is not None else str(i) for i, e in enumerate(self.entries)
        )


@dataclass(frozen=True)
class ScriptFailure:
    """The tagged message holds no usable script; ``reason`` says why."""

    reason: str


def extract_block(text: str) -> str | ScriptFailure:
    """The text between the last pair of instruction tags in ``text``."""
    start = text.rfind(INSTRUCTION_START)
    if start < 0:
        return ScriptFailure("no instruction tags in the message")
    start += len(INSTRUCTION_START)
    end = text.find(INSTRUCTION_END, start)
    if end < 0:
        return ScriptFailure(
            f"found {INSTRUCTION_START} without a closing {INSTRUCTION_END}; close the instruction block"
        )
    return text[start:end]


def _parse_entry(raw: Any, position: int, warnings: list[str], label: str) -> Entry:
    if not isinstance(raw, dict):
        return InvalidInstruction(position, f"{label} must be a JSON object, got {type(raw).__name__}")
    where = non_finite_path(raw)
    if where is not None:
        # Strict JSON has no Infinity or NaN: tool arguments carrying one would go out
        # unparseable, and a delay of Infinity never ends.
        reason = f"{label} skipped: {where} is not a finite number (JSON has no Infinity or NaN)"
        warnings.append(reason)
        return InvalidInstruction(position, reason)
    try:
        instruction = Instruction.model_validate(raw)
    except ValidationError as exc:
        reason = f"{label} skipped: {'; '.join(map(str, validation_problems(exc, Instruction)[:3]))}"
        warnings.append(reason)
        return InvalidInstruction(position, reason)
    for key_path, _, hint in unknown_keys(instruction):
        warnings.append(f"{label}: unknown key {field_path(key_path)!r} ignored{hint}")
    return instruction


SHAPE_KEYS = ("stream", "stream_faults")
"""Keys that say how a reply is delivered, not what it says: left out of the
fingerprint, so that a shaped stream carries the same ids as the default one."""


def _without_shape(entry: Any) -> Any:
    if isinstance(entry, dict) and any(key in entry for key in SHAPE_KEYS):
        return {key: value for key, value in entry.items() if key not in SHAPE_KEYS}
    return entry


def _fingerprint(obj: Any) -> str:
    if isinstance(obj, list):
        obj = [_without_shape(entry) for entry in obj]
    else:
        obj = _without_shape(obj)
    canonical = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(canonical.encode()).hexdigest()[:8]


MAX_NESTING = 100
"""Deepest nesting of arrays and objects an instruction block may use."""

MAX_VALUES = 50_000
"""Most JSON values an instruction block may hold, counted from its text as its ``{``,
``[`` and ``,`` (so before any parsing): parsed and validated, each value costs a few
hundred bytes, so this bounds what one block makes the mock hold (~30 MB)."""
_VALUE_BYTES = 600  # what one value costs parsed and validated, at most (measured)


def _values_in(block: str) -> int:
    return block.count("{") + block.count("[") + block.count(",")


CACHE_BYTES = 32 * 1024 * 1024
"""The parse cache keeps at most this weight of parsed blocks (their characters plus
``_VALUE_BYTES`` a value; oldest go first)."""
_CACHE_ENTRIES = 512
_cache: OrderedDict[str, tuple[Script | ScriptFailure, int]] = OrderedDict()  # block -> (parsed, weight)
_cache_lock = threading.Lock()
_cache_size = 0


def clear_script_cache() -> None:
    """Forget every parsed block (``MockLLM.reset`` calls it)."""
    global _cache_size
    with _cache_lock:
        _cache.clear()
        _cache_size = 0


def parse_script(block: str) -> Script | ScriptFailure:
    """Parse the JSON text of an instruction block (memoised: a pure function of it; the
    memo is bounded in entries and in bytes, ``CACHE_BYTES``)."""
    global _cache_size
    with _cache_lock:
        found = _cache.get(block)
        if found is not None:
            _cache.move_to_end(block)
            return found[0]
    values = _values_in(block)
    if values > MAX_VALUES:
        return ScriptFailure(
            f"the instruction block holds about {values} JSON values (counting its "
            f"braces, brackets and commas), more than the {MAX_VALUES} one block may; "
            "script fewer steps, messages or arguments"
        )
    parsed = _parse_script(block)
    weight = len(block) + _VALUE_BYTES * values  # what keeping it costs
    if weight <= CACHE_BYTES // 4:
        with _cache_lock:
            if block not in _cache:
                _cache[block] = (parsed, weight)
                _cache_size += weight
            while len(_cache) > _CACHE_ENTRIES or _cache_size > CACHE_BYTES:
                _cache_size -= _cache.popitem(last=False)[1][1]
    return parsed


def _parse_script(block: str) -> Script | ScriptFailure:
    try:
        obj = json.loads(block)
    except json.JSONDecodeError as exc:
        return ScriptFailure(
            f"malformed JSON in the instruction block at line {exc.lineno} column {exc.colno}"
            f" (char {exc.pos}): {exc.msg}"
        )
    except RecursionError:
        return ScriptFailure("malformed JSON in the instruction block: nested too deeply to parse")
    except ValueError as exc:  # e.g. an integer past Python's 4300-digit conversion limit
        return ScriptFailure(f"unusable number in the instruction block: {exc}")
    if nested_deeper_than(obj, MAX_NESTING):
        # Bounded so that re-serialising args later can never hit the recursion limit.
        return ScriptFailure(f"the instruction block is nested more than {MAX_NESTING} levels deep")
    if not isinstance(obj, dict):
        return ScriptFailure(f"the instruction block must hold a JSON object, got {type(obj).__name__}")
    warnings: list[str] = []
    if "instruction_chain" in obj:
        chain = obj["instruction_chain"]
        if not isinstance(chain, list):
            return ScriptFailure(f"'instruction_chain' must be a list of instructions, got {type(chain).__name__}")
        legacy_keys = sorted(k for k in obj if k != "instruction_chain")
        if legacy_keys:
            warnings.append(f"keys {legacy_keys} next to 'instruction_chain' are ignored: the chain is used")
        entries = tuple(_parse_entry(raw, i, warnings, f"instruction_chain[{i}]") for i, raw in enumerate(chain))
        return Script(entries, legacy=False, fingerprint=_fingerprint(chain), warnings=tuple(warnings))
    entry = _parse_entry(obj, 0, warnings, "instruction")
    return Script((entry,), legacy=True, fingerprint=_fingerprint(obj), warnings=tuple(warnings))
