"""Counts in words, for every message of the review: "1 golden differs", "2 goldens differ"."""

from __future__ import annotations

__all__ = ["count", "goldens_differ"]


def count(number: int, noun: str, plural: str | None = None) -> str:
    """``1 golden``, ``2 goldens``, ``0 rows``."""
    return f"{number} {noun if number == 1 else plural or noun + 's'}"


def goldens_differ(number: int, against: str = "") -> str:
    """``1 golden differs``, ``2 goldens differ`` (``against``: `` from git HEAD``…)."""
    if number == 0:
        return f"No golden differs{against}"
    return f"{count(number, 'golden')} {'differs' if number == 1 else 'differ'}{against}"
