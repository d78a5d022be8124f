"""Pydantic validation errors as the sentences a user reads: ``where: what``, one a line.

The one formatter of mockllm and of the harness's tooling (a scenario file's errors use
it through ``mockllm.validation_problems``): a script built in Python, a script posted to
the server, an entry of a tagged chain and a scenario file report a problem alike::

    instruction_chain[0].messages[0]: a message needs a 'text_message' or a 'tool_call' key
    instruction_chain[1].stop_reasn: unknown key 'stop_reasn'; did you mean 'stop_reason'?

The path is written once (a tagged union repeats its tag, a smart union names its
branch: both dropped), a misspelt key names the nearest known one, and pydantic's
decorations (``Value error, ``, the ``[type=…]`` tail, the documentation URL) are left out.
"""

from __future__ import annotations

import difflib
import types
from typing import Annotated, Any, NamedTuple, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError
from pydantic_core import PydanticCustomError

from mockllm._exceptions import ScriptValidationError

__all__ = [
    "UNKNOWN_KEYS",
    "Problem",
    "did_you_mean",
    "field_path",
    "script_validation_error",
    "unknown_keys_error",
    "validation_problems",
]

UNKNOWN_KEYS = "unknown_keys"
"""The error type of ``unknown_keys_error``: one error standing for several keys, which
``validation_problems`` reports one a line."""

_PREFIXES = ("Value error, ", "Assertion failed, ")


class Problem(NamedTuple):
    """One problem: where (pydantic's location, union branches dropped) and what."""

    loc: tuple[str | int, ...]
    message: str

    @property
    def path(self) -> str:
        return field_path(self.loc)

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


def did_you_mean(key: str, known: Any) -> str:
    """``"; did you mean 'nearest'?"`` for a misspelt ``key``, or the known keys."""
    close = difflib.get_close_matches(key, list(known), n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else f"; known keys are {sorted(known)}"


def unknown_keys_error(found: list[tuple[tuple[str | int, ...], str]]) -> PydanticCustomError:
    """The error a validator raises for keys its models do not know: ``found`` holds
    ``(location below the validated value, "unknown key 'x'; did you mean 'y'?")``."""
    return PydanticCustomError(UNKNOWN_KEYS, "{count} unknown key(s)", {"count": len(found), "found": found})


def field_path(loc: tuple[str | int, ...]) -> str:
    """``script[1].messages[0]`` for ``("script", 1, "messages", 0)``."""
    out = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc).lstrip(".")
    return out or "(top level)"


def _is_branch_name(part: Any) -> bool:
    """Union branch labels pydantic puts in locations (``TextMessage``, ``literal['all']``)."""
    return isinstance(part, str) and ("[" in part or part[:1].isupper())


def _clean(loc: tuple[Any, ...]) -> tuple[str | int, ...]:
    out: list[str | int] = []
    for part in loc:
        if _is_branch_name(part) or (out and part == out[-1]):
            continue  # a smart union's branch, or a tagged union repeating its tag
        out.append(part)
    return tuple(out)


def _inner(annotation: Any, part: str | int) -> list[Any]:
    """The annotations that ``part`` of a value of type ``annotation`` may have."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return _inner(get_args(annotation)[0], part)
    if origin in (Union, types.UnionType):
        return [inner for arg in get_args(annotation) for inner in _inner(arg, part)]
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        fields = {f.alias or name: f for name, f in annotation.model_fields.items()} | annotation.model_fields
        return [fields[part].annotation] if isinstance(part, str) and part in fields else []
    args = get_args(annotation)
    if origin in (list, tuple, set, frozenset) and isinstance(part, int) and args:
        return [args[0]]
    if origin is dict and len(args) == 2:
        return [args[1]]
    return []


def _known_keys(model: type[BaseModel], loc: tuple[Any, ...]) -> set[str]:
    """The keys the models at ``loc`` below ``model`` know (empty when it cannot tell)."""
    annotations: list[Any] = [model]
    for part in loc:
        below = [inner for annotation in annotations for inner in _inner(annotation, part)]
        annotations = below or annotations  # a union's branch name: not a field
    known: set[str] = set()
    for annotation in annotations:
        for candidate in _inner(annotation, 0) + [annotation]:
            if isinstance(candidate, type) and issubclass(candidate, BaseModel):
                known |= {f.alias or name for name, f in candidate.model_fields.items()}
    return known


def _message(error: Any, model: type[BaseModel] | None) -> str:
    if error["type"] == "extra_forbidden":
        key = str(error["loc"][-1])
        known = _known_keys(model, tuple(error["loc"][:-1])) if model is not None else set()
        return f"unknown key {key!r}" + (did_you_mean(key, known) if known else "")
    message = str(error["msg"])
    for prefix in _PREFIXES:
        message = message.removeprefix(prefix)
    return message


def validation_problems(exc: ValidationError, model: type[BaseModel] | None = None) -> list[Problem]:
    """One ``Problem`` per thing wrong in ``exc``, in pydantic's order.

    ``model`` (the model validated) lets an unknown key name the nearest known one. A
    union reports one error per branch: an error whose path another extends is dropped,
    so the one that names what is wrong (the deepest) is kept."""
    raw: list[tuple[tuple[Any, ...], str]] = []
    for error in exc.errors():
        if error["type"] == UNKNOWN_KEYS:
            raw.extend((tuple(error["loc"]) + tuple(loc), message) for loc, message in error["ctx"]["found"])
        else:
            raw.append((tuple(error["loc"]), _message(error, model)))
    cleaned = [(_clean(loc), message) for loc, message in raw]
    kept = [
        (loc, message)
        for loc, message in cleaned
        if not any(len(other) > len(loc) and other[: len(loc)] == loc for other, _ in cleaned)
    ]
    unique: dict[tuple[str | int, ...], Problem] = {}
    for loc, message in kept:
        unique.setdefault(loc, Problem(loc, message))
    return list(unique.values())


def script_validation_error(exc: ValidationError, model: type[BaseModel]) -> ScriptValidationError:
    """``exc`` (raised validating ``model``) as a ``ScriptValidationError``: the same
    ``errors()``, and a message of one problem a line."""
    details: list[Any] = [
        {
            "type": PydanticCustomError(str(error["type"]), str(error["msg"]), error.get("ctx")),
            "loc": error["loc"],
            "input": error["input"],
        }
        for error in exc.errors()
    ]
    clean = ScriptValidationError.from_exception_data(exc.title, details)
    clean.problems = [str(problem) for problem in validation_problems(exc, model)]
    return clean
