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

Named resources (prompt and chat configs, policies, character records) are reached by
name or by URI through one resolver, ``resolve_name``, which the service request and
the executor's steps share: a URI must name the caller's own organization and the
right type, else the object is "not found" (404) — never "forbidden", so another
organization's objects are not even confirmed to exist.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from urllib.parse import quote, unquote

from harness.exceptions import HarnessError

__all__ = [
    "AM7_SCHEME",
    "CHARACTER",
    "CHAT_CONFIG",
    "POLICY",
    "PROMPT_CONFIG",
    "Am7Uri",
    "UnknownReference",
    "plan_uri",
    "resolve_name",
]

AM7_SCHEME = "am7://"
_SAFE = "-._~/:@!$&'()*+,;="

PROMPT_CONFIG = "prompt.config"
CHAT_CONFIG = "chat.config"
POLICY = "policy.policy"
CHARACTER = "olio.charPerson"
"""The ``am7://`` types of the named resources a chain uses (the seeds' model names)."""

_LABELS = {PROMPT_CONFIG: "prompt config", CHAT_CONFIG: "chat config", POLICY: "policy", CHARACTER: "character"}


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
            raise ValueError(f"Am7Uri organization and type cannot contain '/': {self.organization!r}, {self.type!r}")

    @classmethod
    def parse(cls, uri: str) -> Am7Uri:
        """Parse ``am7://org/type/id``; a ``ValueError`` says what is wrong with ``uri``."""
        if not isinstance(uri, str) or not uri.startswith(AM7_SCHEME):
            raise ValueError(f"not an am7:// URI: {uri!r} (expected am7://<organization>/<type>/<id>)")
        parts = uri[len(AM7_SCHEME) :].split("/", 2)
        if len(parts) < 3 or not all(parts):
            raise ValueError(
                f"an am7:// URI needs an organization, a type and an id: {uri!r} "
                f"(expected am7://<organization>/<type>/<id>)"
            )
        organization, type_, object_id = (unquote(p) for p in parts)
        return cls(organization, type_, object_id)

    def __str__(self) -> str:
        return (
            f"{AM7_SCHEME}{quote(self.organization, safe=_SAFE)}/{quote(self.type, safe=_SAFE)}/"
            f"{quote(self.object_id, safe=_SAFE)}"
        )


def plan_uri(organization: str, plan_id: str) -> str:
    """The URI a chain plan is known by (events, MCP resources)."""
    return str(Am7Uri(organization, "tool.plan", plan_id))


class UnknownReference(HarnessError, LookupError):
    """A name or ``am7://`` URI naming nothing the organization can see (a 404)."""


def resolve_name(reference: str, type_: str, organization: str, known: Collection[str]) -> str:
    """The name ``reference`` gives a resource of type ``type_`` among ``known`` (what
    ``organization`` sees): ``reference`` itself when it is a plain name, the object id
    of ``am7://<organization>/<type_>/<name>`` when it is a URI.

    A malformed URI is a ``ValueError``; a URI of another organization or another type,
    or a name not in ``known``, is ``UnknownReference`` — the same for all three, so a
    caller learns nothing of another organization's resources.
    """
    if reference.startswith(AM7_SCHEME):
        ref = Am7Uri.parse(reference)
        if ref.organization != organization or ref.type != type_ or ref.object_id not in known:
            raise UnknownReference(f"not found: {reference}")
        return ref.object_id
    if reference not in known:
        raise UnknownReference(f"no {_LABELS.get(type_, type_)} named {reference!r}; known: {sorted(known)}")
    return reference
