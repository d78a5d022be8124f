"""The SCIM endpoints of the chain service (``harness.systems.service.scim`` mounts them
at ``/scim/v2`` and imports this module, and with it the SCIM models, on the first
SCIM request).

- ``/Users``, ``/Groups`` — ``GET`` (``filter``, ``startIndex``, ``count``, ``sortBy``,
  ``sortOrder``, ``attributes``, ``excludedAttributes``), ``POST``;
  ``/Users/{id}``, ``/Groups/{id}`` — ``GET``, ``PUT``, ``PATCH``, ``DELETE``.
- ``/Bulk`` — ``POST``; ``/ServiceProviderConfig``, ``/ResourceTypes``, ``/Schemas`` — ``GET``.

Every answer is ``application/scim+json``; every error is a SCIM ``Error``
(``urn:ietf:params:scim:api:messages:2.0:Error`` with ``status``, ``scimType``,
``detail``) — a body that is not JSON or not a valid resource is a 400, never a 500.
The work is done by ``harness.systems.identity.ScimAdapter``, the same layer the chain's
identity tools use.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import ValidationError
from scim2_models import (
    Context,
    Error,
    InvalidSyntaxException,
    ListResponse,
    NotFoundException,
    PayloadTooLargeException,
    ResourceType,
    Schema,
    SCIMException,
    SearchRequest,
)
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route, Router

from harness.systems.identity import SQLiteIdentityStore
from harness.systems.identity.adapter import (
    ScimAdapter,
    kind_of_endpoint,
    parametrized,
    response_parameters,
    scim_error,
)
from harness.systems.identity.bulk import MAX_PAYLOAD_SIZE, run_bulk
from harness.systems.identity.discovery import resource_types, schemas, service_provider_config
from harness.systems.service.auth import Principal
from harness.systems.service.errors import ChainServiceError

__all__ = ["SCIM_MEDIA_TYPE", "scim_router"]

SCIM_MEDIA_TYPE = "application/scim+json"
_ALL = ["GET", "POST", "PUT", "PATCH", "DELETE"]

Handler = Callable[[Request, ScimAdapter], Awaitable[Response]]


def _answer(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(json.dumps(body), status_code=status, headers=headers, media_type=SCIM_MEDIA_TYPE)


def _error(error: Error, headers: dict[str, str] | None = None) -> Response:
    return _answer(error.model_dump(scim_ctx=Context.RESOURCE_QUERY_RESPONSE), int(error.status or 500), headers)


def _not_allowed(request: Request, allowed: list[str]) -> Response:
    detail = f"{request.method} is not allowed on {request.url.path!r}; use {', '.join(allowed)}"
    return _error(Error(status=405, detail=detail), {"Allow": ", ".join(allowed)})


async def _body(request: Request) -> Any:
    raw = await request.body()
    if len(raw) > MAX_PAYLOAD_SIZE:
        raise PayloadTooLargeException(detail=f"the body has {len(raw)} bytes; at most {MAX_PAYLOAD_SIZE}")
    try:
        return json.loads(raw)
    except ValueError as exc:
        raise InvalidSyntaxException(detail=f"the request body is not valid JSON: {exc}") from exc


def _list(model: type[ResourceType] | type[Schema], resources: list[Any]) -> dict[str, Any]:
    answer = parametrized(ListResponse, model)(
        total_results=len(resources), start_index=1, items_per_page=len(resources), resources=resources
    )
    return answer.model_dump(scim_ctx=Context.SEARCH_RESPONSE)


def _search(found: tuple[ListResponse[Any], SearchRequest[Any]]) -> Response:
    page, search = found
    return _answer(page.model_dump(scim_ctx=Context.SEARCH_RESPONSE, response_parameters=search))


def scim_router(identity: SQLiteIdentityStore, authenticate: Callable[[str | None], Principal], prefix: str) -> Router:
    """The SCIM routes over ``identity``, to be mounted at ``prefix``; ``authenticate``
    turns an ``Authorization`` header into the caller."""

    def endpoint(handler: Handler) -> Callable[[Request], Awaitable[Response]]:
        async def run(request: Request) -> Response:
            try:
                principal = authenticate(request.headers.get("authorization"))
                base_url = f"{str(request.base_url).rstrip('/')}{prefix}"
                return await handler(request, ScimAdapter(identity, principal.organization, base_url=base_url))
            except ChainServiceError as exc:
                headers = {"WWW-Authenticate": "Bearer"} if exc.status == 401 else None
                return _error(Error(status=exc.status, detail=exc.detail), headers)
            except (SCIMException, ValidationError) as exc:
                return _error(scim_error(exc))
            except Exception as exc:  # still a SCIM answer, with what went wrong
                return _error(
                    Error(
                        status=500,
                        detail=f"the SCIM service failed on {request.method} "
                        f"{request.url.path}: {type(exc).__name__}: {exc}",
                    )
                )

        return run

    async def collection(request: Request, adapter: ScimAdapter) -> Response:
        kind = kind_of_endpoint(request.path_params["endpoint"])
        if kind is None:
            raise NotFoundException(detail=f"there is no {request.url.path!r} here; see {prefix}/ResourceTypes")
        if request.method == "GET":
            return _search(adapter.search(kind, dict(request.query_params)))
        if request.method == "POST":
            resource = adapter.create(kind, await _body(request))
            assert resource.meta is not None and resource.meta.location is not None
            body = adapter.dump(resource, Context.RESOURCE_CREATION_RESPONSE, request.query_params)
            return _answer(body, 201, {"Location": resource.meta.location})
        return _not_allowed(request, ["GET", "POST"])

    async def single(request: Request, adapter: ScimAdapter) -> Response:
        kind = kind_of_endpoint(request.path_params["endpoint"])
        resource_id = request.path_params["resource_id"]
        if kind is None:
            raise NotFoundException(detail=f"there is no {request.url.path!r} here; see {prefix}/ResourceTypes")
        if resource_id == ".search":
            if request.method != "POST":
                return _not_allowed(request, ["POST"])
            return _search(adapter.search(kind, await _body(request)))
        if request.method == "GET":
            return _answer(
                adapter.dump(adapter.get(kind, resource_id), params=response_parameters(request.query_params))
            )
        if request.method == "PUT":
            resource = adapter.replace(kind, resource_id, await _body(request))
            return _answer(adapter.dump(resource, Context.RESOURCE_REPLACEMENT_RESPONSE, request.query_params))
        if request.method == "PATCH":
            resource = adapter.patch(kind, resource_id, await _body(request))
            return _answer(adapter.dump(resource, Context.RESOURCE_PATCH_RESPONSE, request.query_params))
        if request.method == "DELETE":
            adapter.delete(kind, resource_id)
            return Response(status_code=204)
        return _not_allowed(request, ["GET", "PUT", "PATCH", "DELETE"])

    async def search_all(request: Request, adapter: ScimAdapter) -> Response:
        if request.method != "POST":
            return _not_allowed(request, ["POST"])
        return _search(adapter.search(None, await _body(request)))

    async def bulk(request: Request, adapter: ScimAdapter) -> Response:
        if request.method != "POST":
            return _not_allowed(request, ["POST"])
        return _answer(run_bulk(adapter, await _body(request)))

    async def config(request: Request, adapter: ScimAdapter) -> Response:
        if request.method != "GET":
            return _not_allowed(request, ["GET"])
        return _answer(service_provider_config(adapter.base_url))

    def discovery(
        model: type[ResourceType] | type[Schema], items: Callable[[str], list[ResourceType] | list[Schema]]
    ) -> Handler:
        async def answer(request: Request, adapter: ScimAdapter) -> Response:
            if request.method != "GET":
                return _not_allowed(request, ["GET"])
            found = items(adapter.base_url)
            wanted = request.path_params.get("resource_id")
            if wanted is None:
                return _answer(_list(model, found))
            match = next((item for item in found if str(item.id) == wanted), None)
            if match is None:
                raise NotFoundException(detail=f"not found: {request.url.path!r}")
            return _answer(match.model_dump(scim_ctx=Context.RESOURCE_QUERY_RESPONSE))

        return answer

    async def unknown(request: Request, adapter: ScimAdapter) -> Response:
        raise NotFoundException(
            detail=f"there is no {request.url.path!r} here; this service serves /Users, "
            "/Groups, /Bulk, /ServiceProviderConfig, /ResourceTypes and /Schemas"
        )

    return Router(
        routes=[
            Route("/ServiceProviderConfig", endpoint(config), methods=_ALL),
            Route("/ResourceTypes", endpoint(discovery(ResourceType, resource_types)), methods=_ALL),
            Route("/ResourceTypes/{resource_id}", endpoint(discovery(ResourceType, resource_types)), methods=_ALL),
            Route("/Schemas", endpoint(discovery(Schema, schemas)), methods=_ALL),
            Route("/Schemas/{resource_id}", endpoint(discovery(Schema, schemas)), methods=_ALL),
            Route("/Bulk", endpoint(bulk), methods=_ALL),
            Route("/.search", endpoint(search_all), methods=_ALL),
            Route("/{endpoint}", endpoint(collection), methods=_ALL),
            Route("/{endpoint}/{resource_id}", endpoint(single), methods=_ALL),
            Route("/{rest:path}", endpoint(unknown), methods=_ALL),
        ],
    )
