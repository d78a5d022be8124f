"""``am7://org/type/id`` object references (seed 001, "URI-based object references").

One small value type builds and parses them, so every place that names an object —
a RAG scope, a plan readable as an MCP resource, a chain event's ``mcpContextUri`` —
spells it the same way::

    >>> Am7Uri.parse("am7://acme/tool.plan/42")
    Am7Uri(organization='acme', type='tool.plan', object_id='42')
    >>> str(Am7Uri("acme", "data.data", "doc-1"))
    'am7://acme/data.data/doc-1'

The object id is the rest of the path, so it may itself contain ``/``
(``am7://chain/<plan>/context/<name>``).
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote, unquote

__all__ = ["AM7_SCHEME", "Am7Uri", "plan_uri"]

AM7_SCHEME = "am7://"
_SAFE = "-._~/:@!$&'()*+,;="


@dataclass(frozen=True)
class Am7Uri:
    """An object reference: organization, object type (``tool.plan``, ``data.data``…)
    and object id."""

    organization: str
    type: str
    object_id: str

    def __post_init__(self) -> None:
        for name in ("organization", "type", "object_id"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value:
                raise ValueError(f"Am7Uri {name} must be a non-empty string, got {value!r}")
        if "/" in self.organization or "/" in self.type:
            raise ValueError(f"Am7Uri organization and type cannot contain '/': "
                             f"{self.organization!r}, {self.type!r}")

    @classmethod
    def parse(cls, uri: str) -> Am7Uri:
        """Parse ``am7://org/type/id``; a ``ValueError`` says what is wrong with ``uri``."""
        if not isinstance(uri, str) or not uri.startswith(AM7_SCHEME):
            raise ValueError(f"not an am7:// URI: {uri!r} (expected am7://<organization>/<type>/<id>)")
        parts = uri[len(AM7_SCHEME):].split("/", 2)
        if len(parts) < 3 or not all(parts):
            raise ValueError(f"an am7:// URI needs an organization, a type and an id: {uri!r} "
                             f"(expected am7://<organization>/<type>/<id>)")
        organization, type_, object_id = (unquote(p) for p in parts)
        return cls(organization, type_, object_id)

    def __str__(self) -> str:
        return (f"{AM7_SCHEME}{quote(self.organization, safe=_SAFE)}/{quote(self.type, safe=_SAFE)}/"
                f"{quote(self.object_id, safe=_SAFE)}")


def plan_uri(organization: str, plan_id: str) -> str:
    """The URI a chain plan is known by (events, MCP resources)."""
    return str(Am7Uri(organization, "tool.plan", plan_id))
