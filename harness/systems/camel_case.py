"""The seeds' JSON spelling of a plain record: its fields under camelCase names
(``plan_id`` -> ``planId``), in their order. The pydantic records spell theirs with
aliases (``harness.systems.chain.models``)."""

from __future__ import annotations

from dataclasses import fields
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

__all__ = ["camel_case", "camel_case_json"]


def camel_case(name: str) -> str:
    """``name`` (snake_case) in camelCase."""
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)


def camel_case_json(record: DataclassInstance) -> dict[str, Any]:
    """The dataclass ``record``'s fields, each under its camelCase name, values as they are."""
    return {camel_case(field.name): getattr(record, field.name) for field in fields(record)}
