"""What the codecs share for reading a request: its URL query, the tools it declares."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl

__all__ = ["DeclaredTools", "query_params", "tools_declared"]


def query_params(query: str) -> dict[str, str]:
    """The parameters of a URL query string (the last value of a repeated name)."""
    return dict(parse_qsl(query, keep_blank_values=True))


DeclaredTools = dict[str, Any]
"""A request's declared tools: name -> the JSON schema of its arguments (None: no schema)."""


def tools_declared(items: Any, schema_field: str, *, nested: str | None = None) -> DeclaredTools:
    """The named tools of a request's ``tools`` list: each item's ``name`` and
    ``schema_field`` (inside ``item[nested]`` when the item has that object)."""
    declared: DeclaredTools = {}
    if not isinstance(items, list):
        return declared
    for item in items:
        if not isinstance(item, dict):
            continue
        if nested is not None and isinstance(item.get(nested), dict):
            item = item[nested]
        name = item.get("name")
        if isinstance(name, str):
            schema = item.get(schema_field)
            declared[name] = schema if isinstance(schema, dict) else None
    return declared
