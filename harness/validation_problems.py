"""Pydantic validation errors as the sentences the harness shows: ``steps[0].name: message``.

The formatter of the harness's systems (which know nothing of the mock). The tooling
reports a scenario file's problems with mockllm's own (``mockllm.validation_problems``),
which also names the nearest key for a misspelt one.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

__all__ = ["validation_problems"]


def validation_problems(exc: ValidationError, default: str, *, show_input: bool = False) -> list[str]:
    """One ``where: what`` per error; ``default`` names the place when the error has no
    location. With ``show_input`` each ends with the value it was given: ``(got 'old')``."""
    return [
        f"{_path(error['loc']) or default}: {error['msg'].removeprefix('Value error, ')}"
        + (f" (got {error['input']!r})" if show_input else "")
        for error in exc.errors()
    ]


def _path(loc: tuple[Any, ...]) -> str:
    # A tagged union repeats its tag in the location: written once.
    parts = [part for i, part in enumerate(loc) if i == 0 or part != loc[i - 1]]
    return "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in parts).lstrip(".")
