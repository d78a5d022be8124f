"""Character records (seed 001 Group K, §6.2): who a chat config's system and user are.

A ``Character`` is data like any other object of an organization, known as
``am7://<organization>/olio.charPerson/<name>`` (the seeds' character model). A chain
reads characters two ways:

- a chat config casts a ``systemCharacter`` and a ``userCharacter``; the service puts
  their full records (``character_record``: the URI and every field, not just an id) in
  a plan's chain context, so a step reads ``{{systemCharacter}}`` or
  ``{{systemCharacter.name}}``, and the chain's result carries them to a Magic8-style
  consumer (``harness.systems.chain.chain_chat_history``);
- the character tools (``character_tools``): ``getCharacter(uri)`` and
  ``findCharacters(query)`` for TOOL steps.

Both see only the organization's characters (and the shared ones), and only those the
caller may read (``Permissions.may_read``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from harness.exceptions import HarnessError
from harness.systems.chain.access import EVERYTHING, Permissions, forbidden
from harness.systems.chain.uris import CHARACTER, Am7Uri, UnknownReference, resolve_name

__all__ = [
    "CHARACTER_TOOL_NAMES",
    "Character",
    "CharacterError",
    "character_record",
    "character_tools",
    "read_character",
]

CHARACTER_TOOL_NAMES = ("getCharacter", "findCharacters")


class Character(BaseModel):
    """A character: a name, a description, and any attributes (age, voice, looks…)."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    description: str = ""
    attributes: dict[str, Any] = Field(default_factory=dict)


class CharacterError(HarnessError, LookupError):
    """A character that cannot be read: ``status`` 404 (not found) or 403 (forbidden)."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


def character_record(organization: str, object_id: str, character: Character) -> dict[str, Any]:
    """``character`` hydrated: its ``am7://`` URI, its id and every field."""
    return {
        "uri": str(Am7Uri(organization, CHARACTER, object_id)),
        "objectId": object_id,
        **character.model_dump(mode="json"),
    }


def read_character(
    reference: str, organization: str, characters: Mapping[str, Character], permissions: Permissions = EVERYTHING
) -> dict[str, Any]:
    """The record of the character ``reference`` names (its name, or its ``am7://`` URI),
    as ``organization`` sees it. A ``CharacterError`` says "not found (status 404)" for
    an unknown or another organization's character, "forbidden (status 403)" for one
    the caller may not read; a malformed URI is a ``ValueError``."""
    try:
        name = resolve_name(reference, CHARACTER, organization, characters)
    except UnknownReference as exc:
        raise CharacterError(f"{exc} (status 404)", 404) from exc
    record = character_record(organization, name, characters[name])
    if not permissions.may_read(record["uri"]):
        raise CharacterError(forbidden(f"character {record['uri']}", "data"), 403)
    return record


def character_tools(
    characters: Mapping[str, Character], organization: str, permissions: Permissions = EVERYTHING
) -> dict[str, Callable[..., Any]]:
    """``getCharacter`` and ``findCharacters`` over ``characters``, as ``organization``
    sees them."""

    def getCharacter(uri: str) -> dict[str, Any]:
        """The character record ``uri`` names (a name or an ``am7://`` URI)."""
        return read_character(uri, organization, characters, permissions)

    def findCharacters(query: str = "") -> list[dict[str, Any]]:
        """The readable characters whose name or description holds ``query`` (all for "")."""
        needle = query.casefold()
        records = [
            character_record(organization, name, c)
            for name, c in sorted(characters.items())
            if needle in c.name.casefold() or needle in c.description.casefold()
        ]
        return [r for r in records if permissions.may_read(r["uri"])]

    return {"getCharacter": getCharacter, "findCharacters": findCharacters}
