"""Loading the chain service's configuration from a YAML file.

Example (every key optional)::

    llm:
      protocol: anthropic-messages      # or openai-chat
      base_url: http://127.0.0.1:8000   # the model server; omitted: see below
    prompt_configs:
      brief: {system: "You are a helpful assistant. Answer briefly."}
    chat_configs:
      casual: {protocol: openai-chat, system_character: aria, user_character: sam}
    characters:                         # character records (am7://<org>/olio.charPerson/<name>)
      aria: {name: Aria, description: "A patient guide.", attributes: {voice: warm}}
      sam: {name: Sam}
    tools:
      describeAllModels: mypackage.tools:describe_all_models
    policies:
      - name: not-empty
        rules: [{patterns: [{type: expression, check: length, op: ">", value: 0}]}]
    documents:
      acme:                             # organization
        - {uri: "am7://acme/data.data/doc-1", text: "..."}
    organizations:                      # an organization's own resources
      acme:
        prompt_configs: {brief: {system: "Answer in one word."}}
        chat_configs: {...}
        policies: [...]
        characters: {...}

``prompt_configs``, ``chat_configs``, ``policies`` and ``characters`` at the top are the
shared default every organization sees; ``organizations.<org>`` adds that
organization's own, which replace shared ones of the same name for it alone, and which
no other organization sees (``harness.systems.service.resources``). The ``llm`` section is also
the shared chat config ``default``, unless ``chat_configs`` names one so. A chat config's
characters are names (of the characters that organization sees) or ``am7://`` URIs.

A model with no ``base_url`` is reached through the ``http_client`` factory the caller
gives (``load_service_config(..., http_client=...)``; ``python -m harness serve`` gives
one that serves an in-process mock), else where its SDK goes by default: the SDK's
environment variable (``ANTHROPIC_BASE_URL``, ``OPENAI_BASE_URL``), else the provider.

Problems are ``ValueError``s naming the file and the key.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from harness.systems.chain import Am7Uri, Character, InMemoryVectorStore, Policy, PromptConfig, SQLitePlanStore
from harness.systems.chain.uris import AM7_SCHEME, CHARACTER
from harness.systems.identity import SQLiteIdentityStore
from harness.systems.llm import ModelClient, http_library, model_client, sdk_for
from harness.systems.service.core import ChainServiceConfig
from harness.systems.service.resources import ChatConfig, OrganizationResources
from harness.validation_problems import validation_problems

__all__ = ["HttpClientFactory", "LLMSettings", "ServiceFile", "load_service_config", "service_config"]

HttpClientFactory = Callable[[ModuleType], Any]
"""Builds the HTTP client a model's SDK sends through, given the HTTP library that SDK
takes clients of (``httpx`` or ``httpx2``): an ``AsyncClient`` of that library."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class LLMSettings(_Strict):
    protocol: str = "anthropic-messages"
    base_url: str | None = None
    model: str | None = None
    api_key: str | None = None


class _Prompt(_Strict):
    system: str
    max_tokens: int = 1024


class _Document(_Strict):
    uri: str
    text: str


class _ChatSettings(LLMSettings):
    system_character: str | None = None
    user_character: str | None = None


class _Resources(_Strict):
    prompt_configs: dict[str, _Prompt] = Field(default_factory=dict)
    chat_configs: dict[str, _ChatSettings] = Field(default_factory=dict)
    policies: list[Policy] = Field(default_factory=list)
    characters: dict[str, Character] = Field(default_factory=dict)


class ServiceFile(_Resources):
    llm: LLMSettings = Field(default_factory=LLMSettings)
    tools: dict[str, str] = Field(default_factory=dict)
    documents: dict[str, list[_Document]] = Field(default_factory=dict)
    organizations: dict[str, _Resources] = Field(default_factory=dict)
    database: str = ":memory:"


def _client_factory(settings: LLMSettings, http_client: HttpClientFactory | None) -> Callable[[], ModelClient]:
    def build() -> ModelClient:
        kwargs: dict[str, Any] = {}
        if settings.model:
            kwargs["model"] = settings.model
        if settings.api_key:
            kwargs["api_key"] = settings.api_key
        if settings.base_url:
            return model_client(settings.protocol, base_url=settings.base_url, **kwargs)
        if http_client is not None:  # httpx or httpx2, as the SDK's generation needs
            http = http_client(http_library(sdk_for(settings.protocol)))
            return model_client(settings.protocol, http_client=http, **kwargs)
        return model_client(settings.protocol, **kwargs)  # where the SDK goes by default

    return build


def _import(spec: str, key: str) -> Callable[..., Any]:
    module, _, name = spec.partition(":")
    if not module or not name:
        raise ValueError(f"tools.{key}: expected 'package.module:function', got {spec!r}")
    try:
        target = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"tools.{key}: cannot import {spec!r}: {exc}") from exc
    if not callable(target):
        raise ValueError(f"tools.{key}: {spec!r} is not callable")
    return target


def _check_characters(resources: _Resources, shared: _Resources, where: str) -> None:
    """Each chat config's characters name a character its organization sees, or are
    ``am7://`` character URIs (whose organization is checked when they are used)."""
    seen = {**shared.characters, **resources.characters}
    for name, chat in resources.chat_configs.items():
        for key in ("system_character", "user_character"):
            reference = getattr(chat, key)
            if reference is None:
                continue
            if reference.startswith(AM7_SCHEME):
                try:
                    if Am7Uri.parse(reference).type != CHARACTER:
                        raise ValueError(f"expected am7://<organization>/{CHARACTER}/<name>, got {reference!r}")
                except ValueError as exc:
                    raise ValueError(f"{where}chat_configs.{name}.{key}: {exc}") from exc
            elif reference not in seen:
                raise ValueError(
                    f"{where}chat_configs.{name}.{key}: no character named {reference!r}; known: {sorted(seen)}"
                )


def _organization(resources: _Resources, http_client: HttpClientFactory | None) -> OrganizationResources:
    return OrganizationResources(
        prompt_configs={name: PromptConfig(p.system, p.max_tokens) for name, p in resources.prompt_configs.items()},
        chat_configs={
            name: ChatConfig(_client_factory(s, http_client), s.system_character, s.user_character)
            for name, s in resources.chat_configs.items()
        },
        policies=list(resources.policies),
        characters=dict(resources.characters),
    )


def service_config(
    data: ServiceFile,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    http_client: HttpClientFactory | None = None,
) -> ChainServiceConfig:
    """Build the runtime configuration; ``base_url`` and ``api_key`` override ``llm``'s.
    ``http_client`` builds the HTTP client of each model that names no ``base_url``."""
    update = {k: v for k, v in (("base_url", base_url), ("api_key", api_key)) if v}
    llm = data.llm.model_copy(update=update) if update else data.llm
    stores: dict[str, InMemoryVectorStore] = {}
    for organization, documents in data.documents.items():
        store = stores.setdefault(organization, InMemoryVectorStore())
        for document in documents:
            store.add_document(document.uri, document.text)
    _check_characters(data, data, "")
    for organization, resources in data.organizations.items():
        if not organization or "/" in organization:
            raise ValueError(f"organizations: {organization!r} is not an organization name (non-empty, no '/')")
        _check_characters(resources, data, f"organizations.{organization}.")
    client = _client_factory(llm, http_client)
    shared = _organization(data, http_client)
    return ChainServiceConfig(
        client=client,
        tools={name: _import(spec, name) for name, spec in data.tools.items()},
        prompt_configs=shared.prompt_configs,
        # "default" names the llm section's model, so am7://<org>/chat.config/default resolves.
        chat_configs={"default": client, **shared.chat_configs},
        policies=shared.policies,
        characters=shared.characters,
        organizations={org: _organization(resources, http_client) for org, resources in data.organizations.items()},
        vector_stores=dict(stores),
        store=SQLitePlanStore(data.database),
        identity=SQLiteIdentityStore(data.database),
    )


def load_service_config(
    path: str | Path | None = None,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    http_client: HttpClientFactory | None = None,
) -> ChainServiceConfig:
    """The configuration in YAML file ``path`` (defaults when ``None``); the keywords as
    ``service_config``'s."""
    if path is None:
        return service_config(ServiceFile(), base_url=base_url, api_key=api_key, http_client=http_client)
    try:
        raw = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise ValueError(f"{path}: cannot read the service configuration: {exc}") from exc
    try:
        data = ServiceFile.model_validate(raw)
    except ValidationError as exc:
        raise ValueError(f"{path}: {validation_problems(exc, 'file')[0]}") from exc
    try:
        return service_config(data, base_url=base_url, api_key=api_key, http_client=http_client)
    except ValueError as exc:  # a tool that does not import, a character that is not there
        raise ValueError(f"{path}: {exc}") from exc
