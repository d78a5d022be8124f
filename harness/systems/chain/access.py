"""What a caller may use in its chains (seed 001 §3.6): tools, vectors and data.

A ``Permissions`` holds, for each kind, the patterns (``fnmatch``: ``*``, ``?``,
``[…]``) of what is allowed, or ``None`` for "everything of the organization" — the
default, so a caller with no permissions configured does what it did before:

=========  =====================================  ==========================================
kind       patterns of                            decides
=========  =====================================  ==========================================
tools      tool names (``lookup``, ``find*``)     which tools TOOL steps may run
vectors    document URIs (``am7://acme/…/*``)     which documents RAG_QUERY steps search: an
                                                  unscoped search covers only these; one
                                                  scoped (``vectorReferenceUri``) to another
                                                  is refused
data       object URIs (``am7://acme/*``)         which objects may be read by reference: a
                                                  request's ``dataReferences``, character
                                                  records (a chat config's, the character tools)
=========  =====================================  ==========================================

Organization comes first: another organization's object is "not found" (404) whatever
the patterns say; a refusal by permission is "forbidden" (403).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any

__all__ = ["EVERYTHING", "Permissions", "forbidden"]


def _allows(patterns: tuple[str, ...] | None, value: str) -> bool:
    return patterns is None or any(fnmatchcase(value, p) for p in patterns)


def _patterns(value: Any, where: str) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str) or not isinstance(value, Iterable) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{where}: expected a list of name or URI patterns (strings), got {value!r}")
    return tuple(value)


@dataclass(frozen=True)
class Permissions:
    """Patterns of the tools, vectors and data a caller may use; ``None``: all of them."""

    tools: tuple[str, ...] | None = None
    vectors: tuple[str, ...] | None = None
    data: tuple[str, ...] | None = None

    @classmethod
    def from_json(cls, data: Any, where: str = "permissions") -> Permissions:
        """From ``{"tools": [...], "vectors": [...], "data": [...]}`` (each key optional);
        a ``ValueError`` names the bad key."""
        if data is None:
            return EVERYTHING
        if not isinstance(data, Mapping):
            raise ValueError(f"{where}: expected an object with 'tools', 'vectors' and/or 'data', got {data!r}")
        unknown = sorted(set(data) - {"tools", "vectors", "data"})
        if unknown:
            raise ValueError(
                f"{where}: unknown key(s) {', '.join(map(repr, unknown))}; "
                f"permissions are 'tools', 'vectors' and 'data'"
            )
        return cls(*(_patterns(data.get(k), f"{where}.{k}") for k in ("tools", "vectors", "data")))

    def may_run(self, tool: str) -> bool:
        """May the caller run tool ``tool``?"""
        return _allows(self.tools, tool)

    def may_search(self, uri: str) -> bool:
        """May the caller's RAG steps search document ``uri``?"""
        return _allows(self.vectors, uri)

    def may_read(self, uri: str) -> bool:
        """May the caller read object ``uri`` by reference?"""
        return _allows(self.data, uri)


EVERYTHING = Permissions()
"""No restriction beyond the organization: the default."""


def forbidden(what: str, kind: str) -> str:
    """The sentence a refusal by permission reads as (``kind``: tools, vectors or data)."""
    return f"forbidden: {what} is not in this caller's {kind} permissions (status 403)"
