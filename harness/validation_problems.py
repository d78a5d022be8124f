"""Pydantic validation errors as the sentences the harness shows: ``field.path: message``."""

from __future__ import annotations

from pydantic import ValidationError

__all__ = ["validation_problems"]


def validation_problems(exc: ValidationError, default: str, *, show_input: bool = False) -> list[str]:
    """One ``where: what`` per error; ``default`` names the place when the error has no
    location. With ``show_input`` each ends with the value it was given: ``(got 'old')``."""
    return [
        f"{'.'.join(str(p) for p in error['loc']) or default}: {error['msg']}"
        + (f" (got {error['input']!r})" if show_input else "")
        for error in exc.errors()
    ]
