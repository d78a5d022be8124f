"""Bedrock Runtime's errors and request id, shared by its two protocols.

- An error is ``{"message": ...}`` with the exception's name in the
  ``x-amzn-ErrorType`` header (what botocore reads the error code from); a scripted
  ``type`` that is an AWS exception name (``ThrottlingException``) is used as it is, any
  other the usual exception of the status.
- In a stream, an error is an exception message of the event-stream framing
  (``:message-type: exception``), ``:exception-type`` the stream's member name
  (``throttlingException``); botocore raises ``EventStreamError`` with that code.
"""

from __future__ import annotations

from mockllm._exceptions import RequestRejected
from mockllm._wire.encoding import dumps
from mockllm._wire.eventstream import exception_message

__all__ = [
    "REQUEST_ID_HEADER",
    "bedrock_error_body",
    "bedrock_error_headers",
    "bedrock_exception",
    "bedrock_stream_exception",
    "reject",
]

REQUEST_ID_HEADER = "x-amzn-RequestId"

# Bedrock Runtime's exceptions, each with its HTTP status and message, as the AWS API
# reference lists its errors; a script that names only a status gets its exception.
_EXCEPTIONS = {
    "ValidationException": (400, "The request is not valid."),
    "AccessDeniedException": (403, "You don't have access to the model with the specified model ID."),
    "ResourceNotFoundException": (404, "The specified resource ARN was not found. Check the ARN and try again."),
    "ModelTimeoutException": (
        408,
        "The request took too long to process. Processing time exceeded the model timeout length.",
    ),
    "ModelErrorException": (424, "The request failed due to an error while processing the model."),
    "ThrottlingException": (429, "Too many requests, please wait before trying again."),
    "InternalServerException": (500, "The server encountered an internal error while processing the request."),
    "ServiceUnavailableException": (503, "Bedrock is unable to process your request."),
}
_BY_STATUS = {status: exception for exception, (status, _) in _EXCEPTIONS.items()}
_ERROR_TYPE_SUFFIX = ":http://internal.amazon.com/coral/com.amazon.bedrock/"

# The exceptions a stream can carry (botocore's event-stream members); others become
# the member closest in kind.
_STREAM_MEMBERS = {
    "InternalServerException",
    "ModelStreamErrorException",
    "ValidationException",
    "ThrottlingException",
    "ServiceUnavailableException",
    "ModelTimeoutException",
}


def bedrock_exception(status: int, type: str | None) -> str:
    """The exception name of an error: a scripted AWS name, else the status's usual one."""
    if type and type.endswith("Exception") and type.isidentifier():
        return type
    if status in _BY_STATUS:
        return _BY_STATUS[status]
    return "InternalServerException" if status >= 500 else "ValidationException"


def _message(exception: str, message: str | None, status: int) -> str:
    known = _EXCEPTIONS.get(exception)
    return message or (known[1] if known else f"The request failed (HTTP {status}).")


def bedrock_error_body(status: int, type: str | None, message: str | None) -> bytes:
    """``{"message": ...}``, Bedrock's error body."""
    return dumps({"message": _message(bedrock_exception(status, type), message, status)}).encode()


def bedrock_error_headers(status: int, type: str | None) -> dict[str, str]:
    """``x-amzn-ErrorType``: the exception name and the service's namespace."""
    return {"x-amzn-ErrorType": bedrock_exception(status, type) + _ERROR_TYPE_SUFFIX}


def bedrock_stream_exception(status: int, type: str | None, message: str | None) -> bytes:
    """The exception message that ends a stream."""
    exception = bedrock_exception(status, type)
    text = _message(exception, message, status)
    if exception not in _STREAM_MEMBERS:
        exception = "InternalServerException" if status >= 500 else "ModelStreamErrorException"
    member = exception[0].lower() + exception[1:]
    return exception_message(member, dumps({"message": text}).encode())


def reject(message: str, status: int = 400) -> RequestRejected:
    """A ``ValidationException`` (or the status's exception) about the request."""
    return RequestRejected(message, status=status, type=bedrock_exception(status, None))
