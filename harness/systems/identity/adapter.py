"""The SCIM adapter: one organization's users and groups as SCIM 2.0 resources.

Every door onto identity goes through it — the ``/scim/v2`` endpoints, the chain's
identity tools and scenario seeding — so field mapping, validation, uniqueness and
the organization boundary are the same everywhere. Payloads are read and written
with ``scim2-models`` (``User``, ``Group``, ``PatchOp``, ``SearchRequest``,
``ListResponse``), filters parse and match with its ``ScimFilter``.

Errors are ``scim2_models.SCIMException``s (each knows its HTTP status and
``scimType`` and turns into an ``Error`` body). A resource of another organization is
``NotFoundException`` — the same words as one that does not exist — never "forbidden".

Resources are also known by ``am7://`` URIs: ``am7://<org>/system.user/<id>`` and
``am7://<org>/auth.group/<id>``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from functools import cache
from typing import Any

from pydantic import ValidationError
from scim2_models import (
    Context,
    Error,
    Group,
    InvalidSyntaxException,
    InvalidValueException,
    ListResponse,
    Meta,
    NotFoundException,
    PatchOp,
    Resource,
    ResponseParameters,
    SCIMException,
    SearchRequest,
    UniquenessException,
    User,
)

from harness.systems.chain.uris import Am7Uri
from harness.systems.identity.store import DuplicateName, Member, ResourceKind, SQLiteIdentityStore, StoredResource

__all__ = ["AM7_TYPES", "ENDPOINTS", "MAX_RESULTS", "MODELS", "ScimAdapter", "parametrized", "scim_error"]

MODELS: dict[ResourceKind, type[Resource[Any]]] = {"User": User, "Group": Group}
ENDPOINTS: dict[ResourceKind, str] = {"User": "Users", "Group": "Groups"}
AM7_TYPES: dict[ResourceKind, str] = {"User": "system.user", "Group": "auth.group"}
MAX_RESULTS = 200
"""The most resources one page of a query answers (``ServiceProviderConfig.filter.maxResults``)."""

_COMPUTED = {"id", "meta", "schemas", "members", "groups", "password"}


@cache
def parametrized(generic: Any, model: Any) -> Any:
    """``generic[model]`` (``SearchRequest[User]``, ``ListResponse[User | Group]``), built
    once. Pydantic keeps a parametrized model only while something holds it, and building
    one again costs milliseconds on each request that needs it (scim2-models reads every
    field's docstring from source, looking for it up the caller's stack)."""
    return generic[model]


def scim_error(exc: SCIMException | ValidationError) -> Error:
    """The SCIM ``Error`` body for an exception raised while handling a request."""
    if isinstance(exc, ValidationError):
        return Error.from_validation_errors(exc.errors())[0]
    return exc.to_error()


@contextlib.contextmanager
def _unique_user_name() -> Iterator[None]:
    """The store's ``DuplicateName`` as SCIM says it: a 409 ``uniqueness`` error."""
    try:
        yield
    except DuplicateName as exc:
        raise UniquenessException(detail=f"userName {exc.name!r} is already taken in this organization") from exc


def _invalid(exc: ValidationError, what: str) -> SCIMException:
    error = scim_error(exc)
    error.detail = f"{what}: {error.detail}"
    return SCIMException.from_error(error)


class ScimAdapter:
    """SCIM operations on ``organization``'s identity resources in ``store``.

    ``base_url`` prefixes ``meta.location`` and member ``$ref``s: the endpoints pass
    the URL they are served at; tools and scenarios keep the path ``/scim/v2``.
    """

    def __init__(self, store: SQLiteIdentityStore, organization: str, *, base_url: str = "/scim/v2") -> None:
        self.store = store
        self.organization = organization
        self.base_url = base_url.rstrip("/")

    # -- references ----------------------------------------------------------------------

    def location(self, kind: ResourceKind, resource_id: str) -> str:
        return f"{self.base_url}/{ENDPOINTS[kind]}/{resource_id}"

    def uri(self, kind: ResourceKind, resource_id: str) -> str:
        """The resource's ``am7://`` URI."""
        return str(Am7Uri(self.organization, AM7_TYPES[kind], resource_id))

    def resolve(self, kind: ResourceKind, reference: Any) -> str:
        """The id ``reference`` names: an id, an ``am7://`` URI, or a resource (its ``id``).

        A URI into another organization, of another type, or naming nothing is
        ``NotFoundException`` in the caller's own words.
        """
        if isinstance(reference, Mapping) and isinstance(reference.get("Resources"), list):
            found = reference["Resources"]  # a findUsers answer: it must have found exactly one
            if len(found) != 1:
                raise InvalidValueException(detail=f"expected a search that found one {kind}, it found {len(found)}")
            reference = found[0]
        if isinstance(reference, Mapping):
            reference = reference.get("id")
        if not isinstance(reference, str) or not reference:
            raise InvalidValueException(detail=f"expected a {kind} id, am7:// URI or resource, got {reference!r}")
        resource_id = reference
        if reference.startswith("am7://"):
            try:
                ref = Am7Uri.parse(reference)
            except ValueError as exc:
                raise InvalidValueException(detail=str(exc)) from exc
            if ref.organization != self.organization or ref.type != AM7_TYPES[kind]:
                raise NotFoundException(
                    detail=f"not found: {reference} (no such {kind} in organization {self.organization!r})"
                )
            resource_id = ref.object_id
        if self.store.get(self.organization, kind, resource_id) is None:
            raise NotFoundException(
                detail=f"not found: {reference} (no such {kind} in organization {self.organization!r})"
            )
        return resource_id

    # -- reading -------------------------------------------------------------------------

    def _stored(self, kind: ResourceKind, resource_id: str) -> StoredResource:
        stored = self.store.get(self.organization, kind, resource_id)
        if stored is None:  # the same words for an unknown id and another organization's
            raise NotFoundException(detail=f"{kind} {resource_id!r} not found")
        return stored

    def _model(self, stored: StoredResource) -> Resource[Any]:
        model = MODELS[stored.kind]
        data: dict[str, Any] = {**stored.attributes, "schemas": [str(model.__schema__)], "id": stored.id}
        if stored.kind == "Group":
            data["members"] = [
                self._reference(m.kind, m.id, m.display) for m in self.store.members(self.organization, stored.id)
            ]
        else:
            data["groups"] = [
                {**self._reference("Group", g), "type": "direct"}
                for g in self.store.groups_of(self.organization, stored.id)
            ]
        resource = model.model_validate({k: v for k, v in data.items() if v != []}, scim_ctx=Context.DEFAULT)
        resource.meta = Meta(
            resource_type=stored.kind,
            created=stored.created,
            last_modified=stored.last_modified,
            location=self.location(stored.kind, stored.id),
            version=f'W/"{stored.version}"',
        )
        return resource

    def _reference(self, kind: ResourceKind, resource_id: str, display: str | None = None) -> dict[str, Any]:
        if display is None:
            stored = self.store.get(self.organization, kind, resource_id)
            attributes = stored.attributes if stored is not None else {}
            display = attributes.get("displayName") or attributes.get("userName")
        entry = {"value": resource_id, "$ref": self.location(kind, resource_id), "type": kind, "display": display}
        return {k: v for k, v in entry.items() if v is not None}

    def get(self, kind: ResourceKind, resource_id: str) -> Resource[Any]:
        return self._model(self._stored(kind, resource_id))

    def get_uri(self, uri: str) -> Resource[Any]:
        """The resource an ``am7://`` URI names (a user or a group of this organization)."""
        try:
            ref = Am7Uri.parse(uri)
        except ValueError as exc:
            raise InvalidValueException(detail=str(exc)) from exc
        kind = next((k for k, t in AM7_TYPES.items() if t == ref.type), None)
        if kind is None:
            raise NotFoundException(detail=f"not found: {uri}")
        return self.get(kind, self.resolve(kind, uri))

    def search(self, kind: ResourceKind | None, params: Any) -> tuple[ListResponse[Any], SearchRequest[Any]]:
        """One page of the resources of ``kind`` (``None``: users and groups) matching a
        ``SearchRequest`` — a query string's parameters or a ``/.search`` body:
        ``filter``, ``sortBy``/``sortOrder``, ``startIndex``, ``count``."""
        if not isinstance(params, Mapping):
            raise InvalidSyntaxException(detail=f"a SearchRequest must be a JSON object, got {type(params).__name__}")
        kinds: list[ResourceKind] = [kind] if kind is not None else list(MODELS)
        model: Any = MODELS[kind] if kind is not None else User | Group
        try:
            request = parametrized(SearchRequest, model).model_validate(dict(params), scim_ctx=Context.SEARCH_REQUEST)
        except ValidationError as exc:
            raise _invalid(exc, "search") from exc
        resources = [self._model(s) for k in kinds for s in self.store.list(self.organization, k)]
        if request.filter is not None:
            resources = [r for r in resources if request.filter.match(r)]
        if request.sort_by is not None:
            resources = request.sort(resources)
        start = request.start_index or 1
        count = min(request.count if request.count is not None else MAX_RESULTS, MAX_RESULTS)
        page = resources[start - 1 : start - 1 + count]
        answer = parametrized(ListResponse, model)(
            total_results=len(resources), start_index=start, items_per_page=len(page), resources=page
        )
        return answer, request

    @staticmethod
    def dump(
        resource: Resource[Any],
        context: Context = Context.RESOURCE_QUERY_RESPONSE,
        params: Mapping[str, Any] | ResponseParameters[Any] | None = None,
    ) -> dict[str, Any]:
        """The resource's SCIM JSON, narrowed by ``attributes``/``excludedAttributes``."""
        if params is not None and not isinstance(params, ResponseParameters):
            params = response_parameters(params)
        return resource.model_dump(scim_ctx=context, response_parameters=params)

    # -- writing -------------------------------------------------------------------------

    def _validated(self, kind: ResourceKind, payload: Any, context: Context) -> Resource[Any]:
        if not isinstance(payload, Mapping):
            raise InvalidSyntaxException(detail=f"a {kind} must be a JSON object, got {type(payload).__name__}")
        try:
            return MODELS[kind].model_validate(dict(payload), scim_ctx=context)
        except ValidationError as exc:
            raise _invalid(exc, kind) from exc

    def _members(self, resource: Resource[Any]) -> list[Member]:
        members = []
        for entry in getattr(resource, "members", None) or []:
            member_kind = self.store.kind_of(self.organization, str(entry.value))
            if entry.value is None or member_kind is None:
                raise InvalidValueException(detail=f"members: no user or group {entry.value!r} in this organization")
            members.append(Member(str(entry.value), member_kind, entry.display))
        return members

    @staticmethod
    def _attributes(resource: Resource[Any]) -> dict[str, Any]:
        return resource.model_dump(scim_ctx=Context.DEFAULT, exclude=_COMPUTED)

    def create(self, kind: ResourceKind, payload: Any) -> Resource[Any]:
        """``POST /<Endpoint>``."""
        resource = self._validated(kind, payload, Context.RESOURCE_CREATION_REQUEST)
        members = self._members(resource)
        resource_id = self.store.new_id(kind)
        with _unique_user_name():
            self.store.insert(self.organization, kind, resource_id, self._attributes(resource))
        if kind == "Group":
            self.store.set_members(self.organization, resource_id, members)
        return self.get(kind, resource_id)

    def _save(self, kind: ResourceKind, resource_id: str, resource: Resource[Any]) -> Resource[Any]:
        members = self._members(resource) if kind == "Group" else None
        with _unique_user_name():
            self.store.update(self.organization, kind, resource_id, self._attributes(resource))
        if members is not None:
            self.store.set_members(self.organization, resource_id, members)
        return self.get(kind, resource_id)

    def replace(self, kind: ResourceKind, resource_id: str, payload: Any) -> Resource[Any]:
        """``PUT /<Endpoint>/<id>``: read-only attributes are kept, immutable ones checked."""
        original = self.get(kind, resource_id)
        resource = self._validated(kind, payload, Context.RESOURCE_REPLACEMENT_REQUEST)
        resource.replace(original)
        return self._save(kind, resource_id, resource)

    def patch(self, kind: ResourceKind, resource_id: str, payload: Any) -> Resource[Any]:
        """``PATCH /<Endpoint>/<id>`` with a ``PatchOp`` (add, replace, remove; SCIM paths)."""
        resource = self.get(kind, resource_id)
        if not isinstance(payload, Mapping):
            raise InvalidSyntaxException(detail=f"a PatchOp must be a JSON object, got {type(payload).__name__}")
        model = MODELS[kind]
        try:
            patch = parametrized(PatchOp, model).model_validate(dict(payload), scim_ctx=Context.RESOURCE_PATCH_REQUEST)
        except ValidationError as exc:
            raise _invalid(exc, "PatchOp") from exc
        if patch.patch(resource):
            return self._save(kind, resource_id, resource)
        return resource

    def delete(self, kind: ResourceKind, resource_id: str) -> None:
        """``DELETE /<Endpoint>/<id>``: a user leaves its groups; a group's memberships go."""
        if not self.store.delete(self.organization, kind, resource_id):
            raise NotFoundException(detail=f"{kind} {resource_id!r} not found")


def response_parameters(params: Mapping[str, Any]) -> ResponseParameters[Any]:
    """``attributes`` / ``excludedAttributes`` from a query string."""
    wanted = {k: params[k] for k in ("attributes", "excludedAttributes") if k in params}
    try:
        return ResponseParameters.model_validate(wanted)
    except ValidationError as exc:
        raise _invalid(exc, "query") from exc


def kind_of_endpoint(endpoint: str) -> ResourceKind | None:
    """``"Users"`` -> ``"User"``; ``None`` for an endpoint the service does not serve."""
    return next((k for k, e in ENDPOINTS.items() if e == endpoint), None)
