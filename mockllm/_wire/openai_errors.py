"""OpenAI's HTTP error body, shared by the Chat Completions and Responses codecs.

Both APIs answer errors with ``{"error": {"message", "type", "param", "code"}}``; when a
script gives only a status, the type, code and message OpenAI usually sends are used.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mockllm._exceptions import RequestRejected
from mockllm._wire.encoding import dumps
from mockllm._wire.parameter_types import Kind, json_type, wrong_type

__all__ = ["check_openai_types", "openai_error_body", "openai_error_fields"]

SERVER_ERROR_MESSAGE = "The server had an error while processing your request. Sorry about that!"

# status -> (type, code, message): what OpenAI answers when nothing more is known.
_DEFAULTS: dict[int, tuple[str, str | None, str]] = {
    400: ("invalid_request_error", None, "Invalid request."),
    401: ("invalid_request_error", "invalid_api_key", "Incorrect API key provided."),
    403: ("invalid_request_error", None, "You have insufficient permissions for this operation."),
    404: ("invalid_request_error", "model_not_found", "The model does not exist or you do not have access to it."),
    429: ("requests", "rate_limit_exceeded", "Rate limit reached for requests. Please try again later."),
    500: ("server_error", None, SERVER_ERROR_MESSAGE),
    503: ("server_error", None, "The engine is currently overloaded, please try again later."),
}


def openai_error_fields(status: int, type: str | None, message: str | None) -> tuple[str, str | None, str]:
    """(type, code, message) for an error, filling in OpenAI's defaults for ``status``."""
    default = _DEFAULTS.get(status)
    if default is None:
        default = (
            ("server_error", None, SERVER_ERROR_MESSAGE)
            if status >= 500
            else ("invalid_request_error", None, f"The request was rejected (HTTP {status}).")
        )
    default_type, code, default_message = default
    return (type if type is not None else default_type, code, message if message is not None else default_message)


def openai_error_body(status: int, type: str | None, message: str | None, param: str | None = None) -> bytes:
    """The HTTP error body OpenAI sends."""
    type, code, message = openai_error_fields(status, type, message)
    return dumps({"error": {"message": message, "type": type, "param": param, "code": code}}).encode()


_ARTICLES = {"boolean": "a boolean", "integer": "an integer", "decimal": "a decimal"}


def check_openai_types(body: Mapping[str, Any], expected: Mapping[str, Kind]) -> None:
    """Refuse a parameter of the wrong JSON type as OpenAI does (400, ``param`` named)."""
    wrong = wrong_type(body, expected)
    if wrong is not None:
        name, kind, value = wrong
        raise RequestRejected(
            f"Invalid type for {name!r}: expected {_ARTICLES[kind]}, but got {json_type(value)} instead.", param=name
        )
