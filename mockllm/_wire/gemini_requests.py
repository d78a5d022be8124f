"""Reading a Gemini ``generateContent`` request: its fields by either spelling
(``field``), its ``contents`` as the neutral conversation's rows (``read_content``), its
OpenAPI-style schemas as JSON Schema (``json_schema``), and the checks Gemini makes
before it answers (``checked_contents``; unless lenient ``check_turns``), each a 400
``INVALID_ARGUMENT`` in its words. The codec is ``mockllm._wire.gemini``.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from mockllm._conversation import Row, user_turn
from mockllm._exceptions import RequestRejected
from mockllm._wire.encoding import dumps

__all__ = ["check_turns", "checked_contents", "field", "json_schema", "read_content"]

_ROLES = ("user", "model", "function")


def _reject(message: str) -> RequestRejected:
    return RequestRejected(message, status=400, type="INVALID_ARGUMENT")


def json_schema(schema: Any) -> Any:
    """Gemini's OpenAPI-style schema (``Schema``) as JSON Schema: ``"type": "OBJECT"`` ->
    ``"object"``; its fields in either spelling (google-genai sends ``any_of``,
    ``max_items``, ``max_length``), as Gemini reads them; ``"nullable": true`` (what
    google-genai makes of ``Optional[int]``) also allows null, which JSON Schema has no
    keyword for: the schema or ``{"type": "null"}``. Only ``properties``, ``items`` and
    ``anyOf`` hold schemas; a property's name is never read as a keyword."""
    if not isinstance(schema, dict):
        return schema
    found: dict[str, Any] = {}
    for key, value in schema.items():
        key = _SCHEMA_FIELDS.get(key, key)
        if key == "type" and isinstance(value, str):
            value = value.lower()
        elif key == "properties" and isinstance(value, dict):
            value = {name: json_schema(item) for name, item in value.items()}
        elif key == "items":
            value = json_schema(value)
        elif key == "anyOf" and isinstance(value, list):
            value = [json_schema(item) for item in value]
        elif key in _COUNTS and isinstance(value, str) and value.isdigit():
            value = int(value)  # an int64 in protobuf JSON may be a string: "maxItems": "3"
        found[key] = value
    if found.pop("nullable", None) is True:
        return {"anyOf": [found, {"type": "null"}]}
    return found


_SCHEMA_FIELDS = {
    _name: "".join(part.capitalize() if i else part for i, part in enumerate(_name.split("_")))
    for _name in (
        "any_of",
        "max_items",
        "min_items",
        "max_length",
        "min_length",
        "max_properties",
        "min_properties",
        "property_ordering",
    )
}
"""Gemini ``Schema`` fields in snake_case -> camelCase, JSON Schema's spelling."""
_COUNTS = frozenset(("maxItems", "minItems", "maxLength", "minLength", "maxProperties", "minProperties"))


def field(obj: dict[str, Any], name: str) -> Any:
    """``obj``'s field ``name`` (camelCase), or its snake_case spelling: Gemini reads
    both, as protobuf JSON does (``google-genai`` sends some objects in snake_case)."""
    value = obj.get(name)
    if value is None:
        value = obj.get(_snake(name))
    return value


@functools.cache
def _snake(name: str) -> str:
    return re.sub(r"[A-Z]", lambda m: "_" + m.group().lower(), name)


def _parts(content: dict[str, Any]) -> list[dict[str, Any]]:
    parts = content.get("parts")
    return [p for p in parts if isinstance(p, dict)] if isinstance(parts, list) else []


def _call_ids(position: int, parts: list[dict[str, Any]], key: str) -> tuple[str, ...]:
    """The ids of a content's function calls (or responses): the API's ``id`` when
    given, else the position of the part among its kind (Gemini pairs by order)."""
    ids = []
    for n, part in enumerate(field(p, key) for p in parts if isinstance(field(p, key), dict)):
        call_id = part.get("id")
        ids.append(str(call_id) if call_id else f"{position}#{n}")
    return tuple(ids)


def read_content(position: int, content: dict[str, Any], out: list[Row]) -> None:
    """A ``model`` content's ``functionCall`` parts are its calls; a user content's
    ``functionResponse`` parts answer the content before (a tool message), its ``text``
    parts are its words."""
    if content.get("role", "user") not in _ROLES:
        return
    parts = _parts(content)
    if not parts:
        return  # no parts: nothing a reader can place (strictly, a 400)
    if content.get("role") == "model":
        out.append(("assistant", "", _call_ids(position, parts, "functionCall"), (), position))
    else:
        user_turn(out, position, _call_ids(position - 1, parts, "functionResponse"), parts)


def checked_contents(body: Any) -> list[Any]:
    """The request's ``contents``, after the checks Gemini answers with a 400
    ``INVALID_ARGUMENT`` (an object body, a non-empty list of contents, each with a
    known role and some parts)."""
    if not isinstance(body, dict):
        raise _reject("Invalid JSON payload received. Expected an object (GenerateContentRequest).")
    contents = body.get("contents")
    if not contents:
        raise _reject("* GenerateContentRequest.contents: contents is not specified\n")
    if not isinstance(contents, list):
        raise _reject(
            f'Invalid JSON payload received. Unknown name "contents": Proto field is not repeating, '
            f"cannot start list. Got {dumps(contents)[:60]}."
        )
    for index, content in enumerate(contents):
        where = f"GenerateContentRequest.contents[{index}]"
        if not isinstance(content, dict):
            raise _reject(f"Invalid JSON payload received. {where}: expected an object (Content).")
        if content.get("role", "user") not in _ROLES:
            raise _reject("Please use a valid role: user, model.")
        if not _parts(content):
            raise _reject(f"* {where}.parts: contents.parts must not be empty.\n")
    return contents


def check_turns(contents: list[dict[str, Any]]) -> None:
    """Gemini's ordering rules for function calling: a function response turn follows a
    function call turn right away, with as many responses as there were calls."""
    previous_calls = 0
    for content in contents:
        parts = _parts(content)
        calls = sum(1 for p in parts if isinstance(field(p, "functionCall"), dict))
        responses = sum(1 for p in parts if isinstance(field(p, "functionResponse"), dict))
        if responses:
            if not previous_calls:
                raise _reject("Please ensure that function response turn comes immediately after a function call turn.")
            if responses != previous_calls:
                raise _reject(
                    "Please ensure that the number of function response parts is equal to the number of "
                    "function call parts of the function call turn."
                )
        elif previous_calls:
            raise _reject(
                "Please ensure that function call turn comes immediately after a user turn or after a function "
                "response turn."
            )
        previous_calls = calls if content.get("role") == "model" else 0
