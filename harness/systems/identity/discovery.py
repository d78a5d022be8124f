"""What the SCIM service says about itself (RFC 7644 §4): ``/ServiceProviderConfig``,
``/ResourceTypes`` and ``/Schemas``, built by ``scim2-models`` from the ``User`` and
``Group`` models the adapter serves, so the announcement cannot drift from them."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from scim2_models import (
    AuthenticationScheme,
    Bulk,
    ChangePassword,
    Context,
    ETag,
    Filter,
    Meta,
    Patch,
    ResourceType,
    Schema,
    ScimProvider,
    ServiceProviderConfig,
    Sort,
)

from harness.systems.identity.adapter import MAX_RESULTS, MODELS
from harness.systems.identity.bulk import MAX_OPERATIONS, MAX_PAYLOAD_SIZE

__all__ = ["provider", "resource_types", "schemas", "service_provider_config"]


@lru_cache(maxsize=1)
def provider() -> ScimProvider:
    config = ServiceProviderConfig(
        patch=Patch(supported=True),
        bulk=Bulk(supported=True, max_operations=MAX_OPERATIONS, max_payload_size=MAX_PAYLOAD_SIZE),
        filter=Filter(supported=True, max_results=MAX_RESULTS),
        change_password=ChangePassword(supported=False),
        sort=Sort(supported=True),
        etag=ETag(supported=False),
        authentication_schemes=[
            AuthenticationScheme(
                type="oauthbearertoken",
                name="Bearer token",
                primary=True,
                description="Authorization: Bearer <token>, the chain service's tokens (HARNESS_CHAIN_TOKENS)",
            )
        ],
    )
    return ScimProvider(models=list(MODELS.values()), config=config)


def _located(resource: Any, base_url: str, endpoint: str, resource_id: str) -> Any:
    resource = resource.model_copy(deep=True)
    resource.meta = Meta(resource_type=type(resource).__name__, location=f"{base_url}/{endpoint}/{resource_id}")
    return resource


def service_provider_config(base_url: str) -> dict[str, Any]:
    config = provider().config
    assert config is not None
    config = config.model_copy(deep=True)
    config.meta = Meta(resource_type="ServiceProviderConfig", location=f"{base_url}/ServiceProviderConfig")
    return config.model_dump(scim_ctx=Context.RESOURCE_QUERY_RESPONSE)


def resource_types(base_url: str) -> list[ResourceType]:
    return [_located(r, base_url, "ResourceTypes", str(r.id)) for r in provider().resource_types]


def schemas(base_url: str) -> list[Schema]:
    return [_located(s, base_url, "Schemas", str(s.id)) for s in provider().schemas]
