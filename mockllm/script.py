"""Parsing the instruction block out of a user message, leniently.

Malformed input is never an exception here: the result is a ``Script`` whose entries
are either a valid ``Instruction`` or an ``InvalidInstruction`` that says what was
wrong, or a ``ScriptFailure`` that says why there is no script at all. Each entry is
validated on its own, so one bad entry keeps every other entry at its index.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Union

from pydantic import BaseModel, ValidationError

from mockllm.instructions import INSTRUCTION_END, INSTRUCTION_START, Instruction

__all__ = [
    "InvalidInstruction",
    "Script",
    "ScriptFailure",
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
            f"found {INSTRUCTION_START} without a closing {INSTRUCTION_END}; "
            "close the instruction block"
        )
    return text[start:end]


def _describe_validation_error(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:3]:
        # Tagged unions repeat the tag in the location ("tool_call.tool_call"): drop it.
        loc = [p for i, p in enumerate(err["loc"]) if i == 0 or p != err["loc"][i - 1]]
        where = ".".join(str(p) for p in loc) or "instruction"
        parts.append(f"{where}: {err['msg']}")
    return "; ".join(parts)


def _unknown_keys(model: BaseModel, path: str) -> list[str]:
    """Paths of keys the models do not know, for warnings."""
    found = [f"{path}.{key}" if path else key for key in (model.model_extra or {})]
    for name in type(model).model_fields:
        value = getattr(model, name)
        values = value if isinstance(value, list) else [value]
        for i, item in enumerate(values):
            if isinstance(item, BaseModel):
                sub = f"{path}.{name}" if path else name
                if isinstance(value, list):
                    sub = f"{sub}[{i}]"
                found.extend(_unknown_keys(item, sub))
    return found


def _parse_entry(raw: Any, position: int, warnings: list[str], label: str) -> Entry:
    if not isinstance(raw, dict):
        return InvalidInstruction(position, f"{label} must be a JSON object, got {type(raw).__name__}")
    try:
        instruction = Instruction.model_validate(raw)
    except ValidationError as exc:
        reason = f"{label} skipped: {_describe_validation_error(exc)}"
        warnings.append(reason)
        return InvalidInstruction(position, reason)
    for key in _unknown_keys(instruction, ""):
        warnings.append(f"{label}: unknown key {key!r} ignored")
    return instruction


def _fingerprint(obj: Any) -> str:
    canonical = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(canonical.encode()).hexdigest()[:8]


MAX_NESTING = 100
"""Deepest nesting of arrays and objects an instruction block may use."""


def _nested_deeper_than(obj: Any, limit: int) -> bool:
    stack = [(obj, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, (dict, list)):
            if depth > limit:
                return True
            stack.extend((v, depth + 1) for v in (value.values() if isinstance(value, dict) else value))
    return False


@lru_cache(maxsize=512)
def parse_script(block: str) -> Script | ScriptFailure:
    """Parse the JSON text of an instruction block (memoised: a pure function of it)."""
    try:
        obj = json.loads(block)
    except json.JSONDecodeError as exc:
        return ScriptFailure(
            f"malformed JSON in the instruction block at line {exc.lineno} column {exc.colno}"
            f" (char {exc.pos}): {exc.msg}"
        )
    except RecursionError:
        return ScriptFailure("malformed JSON in the instruction block: nested too deeply to parse")
    if _nested_deeper_than(obj, MAX_NESTING):
        # Bounded so that re-serialising args later can never hit the recursion limit.
        return ScriptFailure(f"the instruction block is nested more than {MAX_NESTING} levels deep")
    if not isinstance(obj, dict):
        return ScriptFailure(
            f"the instruction block must hold a JSON object, got {type(obj).__name__}"
        )
    warnings: list[str] = []
    if "instruction_chain" in obj:
        chain = obj["instruction_chain"]
        if not isinstance(chain, list):
            return ScriptFailure(
                f"'instruction_chain' must be a list of instructions, got {type(chain).__name__}"
            )
        legacy_keys = sorted(k for k in obj if k != "instruction_chain")
        if legacy_keys:
            warnings.append(
                f"keys {legacy_keys} next to 'instruction_chain' are ignored: the chain is used"
            )
        entries = tuple(
            _parse_entry(raw, i, warnings, f"instruction_chain[{i}]") for i, raw in enumerate(chain)
        )
        return Script(entries, legacy=False, fingerprint=_fingerprint(chain), warnings=tuple(warnings))
    entry = _parse_entry(obj, 0, warnings, "instruction")
    return Script((entry,), legacy=True, fingerprint=_fingerprint(obj), warnings=tuple(warnings))
