"""SCIM bulk operations (RFC 7644 §3.7) through the adapter.

Operations run in order; each is the single request it stands for (``POST /Users``,
``PATCH /Groups/<id>``…), so it is validated and scoped exactly as that request.
``bulkId:<name>`` in a path or as a value (a member's ``value``, say) is replaced by
the id the operation with that ``bulkId`` created; a reference to a ``bulkId`` not
created yet fails that operation. With ``failOnErrors`` the job stops once that many
operations have failed. Each operation's outcome is in the answer: a failure carries
its SCIM ``Error`` as ``response``, and does not undo the operations before it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scim2_models import (
    BulkRequest,
    Context,
    InvalidSyntaxException,
    InvalidValueException,
    PayloadTooLargeException,
    SCIMException,
)

from harness.systems.identity.adapter import ScimAdapter, kind_of_endpoint

__all__ = ["MAX_OPERATIONS", "MAX_PAYLOAD_SIZE", "run_bulk"]

MAX_OPERATIONS = 1000
MAX_PAYLOAD_SIZE = 1_048_576

_BULK_RESPONSE = str(BulkRequest.__schema__).replace("BulkRequest", "BulkResponse")
_PREFIX = "bulkId:"


def _substitute(value: Any, created: Mapping[str, str]) -> Any:
    if isinstance(value, str) and value.startswith(_PREFIX):
        name = value[len(_PREFIX) :]
        if name not in created:
            raise InvalidValueException(detail=f"bulkId {name!r} names no resource created before this operation")
        return created[name]
    if isinstance(value, list):
        return [_substitute(v, created) for v in value]
    if isinstance(value, dict):
        return {k: _substitute(v, created) for k, v in value.items()}
    return value


def _path_target(path: Any, created: Mapping[str, str]) -> tuple[str, str | None]:
    if not isinstance(path, str) or not path.startswith("/"):
        raise InvalidValueException(detail=f"path must be like '/Users' or '/Groups/<id>', got {path!r}")
    endpoint, _, resource_id = path[1:].partition("/")
    return endpoint, _substitute(resource_id, created) if resource_id else None


def _one(adapter: ScimAdapter, operation: Mapping[str, Any], created: dict[str, str]) -> dict[str, Any]:
    method = str(operation.get("method", "")).upper()
    bulk_id = operation.get("bulkId")
    endpoint, resource_id = _path_target(operation.get("path"), created)
    kind = kind_of_endpoint(endpoint)
    if kind is None:
        raise InvalidValueException(detail=f"path {operation.get('path')!r}: this service serves /Users and /Groups")
    data = _substitute(operation.get("data"), created)
    if method == "POST":
        if resource_id is not None or not bulk_id:
            raise InvalidValueException(detail="a POST operation needs a 'bulkId' and a path without an id")
        resource = adapter.create(kind, data)
        assert resource.id is not None
        created[str(bulk_id)] = resource.id
        status = 201
    elif method in ("PUT", "PATCH", "DELETE"):
        if resource_id is None:
            raise InvalidValueException(detail=f"a {method} operation's path needs a resource id")
        if method == "DELETE":
            adapter.delete(kind, resource_id)
            return {"method": method, "path": operation["path"], "status": "204"}
        resource = (adapter.replace if method == "PUT" else adapter.patch)(kind, resource_id, data)
        status = 200
    else:
        raise InvalidValueException(detail=f"method must be POST, PUT, PATCH or DELETE, got {method or None!r}")
    assert resource.meta is not None and resource.id is not None
    answer = {
        "method": method,
        "location": resource.meta.location,
        "version": resource.meta.version,
        "status": str(status),
    }
    return {"bulkId": bulk_id, **answer} if bulk_id else answer


def run_bulk(adapter: ScimAdapter, payload: Any) -> dict[str, Any]:
    """Run a ``BulkRequest`` payload; the ``BulkResponse`` JSON."""
    if not isinstance(payload, Mapping):
        raise InvalidSyntaxException(detail=f"a BulkRequest must be a JSON object, got {type(payload).__name__}")
    operations = payload.get("Operations")
    if not isinstance(operations, list):
        raise InvalidSyntaxException(detail="a BulkRequest needs 'Operations': a list of operations")
    if len(operations) > MAX_OPERATIONS:
        raise PayloadTooLargeException(detail=f"{len(operations)} operations; at most {MAX_OPERATIONS} per request")
    fail_on_errors = payload.get("failOnErrors")
    if fail_on_errors is not None and (not isinstance(fail_on_errors, int) or fail_on_errors < 1):
        raise InvalidValueException(detail=f"failOnErrors must be a positive integer, got {fail_on_errors!r}")
    created: dict[str, str] = {}
    answers: list[dict[str, Any]] = []
    errors = 0
    for index, operation in enumerate(operations):
        if not isinstance(operation, Mapping):
            raise InvalidSyntaxException(detail=f"Operations[{index}] must be an object")
        try:
            answers.append(_one(adapter, operation, created))
        except SCIMException as exc:
            errors += 1
            error = exc.to_error().model_dump(scim_ctx=Context.RESOURCE_QUERY_RESPONSE)
            answer = {"method": operation.get("method"), "status": str(exc.status), "response": error}
            if operation.get("bulkId"):
                answer["bulkId"] = operation["bulkId"]
            answers.append(answer)
            if fail_on_errors is not None and errors >= fail_on_errors:
                break
    return {"schemas": [_BULK_RESPONSE], "Operations": answers}
