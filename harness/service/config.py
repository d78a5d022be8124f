"""Loading the chain service's configuration from a YAML file.

Example (every key optional)::

    llm:
      protocol: anthropic-messages      # or openai-chat
      base_url: http://127.0.0.1:8000   # the mock server; omitted: an in-process mock
    prompt_configs:
      brief: {system: "You are a helpful assistant. Answer briefly."}
    chat_configs:
      casual: {protocol: openai-chat}
    tools:
      describeAllModels: mypackage.tools:describe_all_models
    policies:
      - name: not-empty
        rules: [{patterns: [{type: expression, check: length, op: ">", value: 0}]}]
    documents:
      acme:                             # organization
        - {uri: "am7://acme/data.data/doc-1", text: "..."}

Problems are ``ValueError``s naming the file and the key.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from harness.chain import InMemoryVectorStore, Policy, PromptConfig, SQLitePlanStore
from harness.identity import SQLiteIdentityStore
from harness.llm import ModelClient, http_library, model_client, sdk_for
from harness.service.core import ChainServiceConfig
from harness.validation_problems import validation_problems

__all__ = ["LLMSettings", "ServiceFile", "load_service_config", "service_config"]


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


class ServiceFile(_Strict):
    llm: LLMSettings = Field(default_factory=LLMSettings)
    prompt_configs: dict[str, _Prompt] = Field(default_factory=dict)
    chat_configs: dict[str, LLMSettings] = Field(default_factory=dict)
    tools: dict[str, str] = Field(default_factory=dict)
    policies: list[Policy] = Field(default_factory=list)
    documents: dict[str, list[_Document]] = Field(default_factory=dict)
    database: str = ":memory:"


def _client_factory(settings: LLMSettings) -> Callable[[], ModelClient]:
    def build() -> ModelClient:
        kwargs: dict[str, Any] = {}
        if settings.model:
            kwargs["model"] = settings.model
        if settings.api_key:
            kwargs["api_key"] = settings.api_key
        if settings.base_url:
            return model_client(settings.protocol, base_url=settings.base_url, **kwargs)
        # No server named: the mock runs in-process, still spoken to over the wire protocol.
        from mockllm import MockLLM
        from mockllm._transports import HTTPX2Transport, HTTPXTransport

        library = http_library(sdk_for(settings.protocol))  # httpx or httpx2, as the SDK's generation needs
        transport = HTTPXTransport if library.__name__ == "httpx" else HTTPX2Transport
        http = library.AsyncClient(transport=transport(MockLLM()), base_url="http://mockllm.invalid")
        return model_client(settings.protocol, http_client=http, **kwargs)
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


def service_config(data: ServiceFile, *, base_url: str | None = None,
                   api_key: str | None = None) -> ChainServiceConfig:
    """Build the runtime configuration; ``base_url`` and ``api_key`` override ``llm``'s."""
    update = {k: v for k, v in (("base_url", base_url), ("api_key", api_key)) if v}
    llm = data.llm.model_copy(update=update) if update else data.llm
    stores: dict[str, InMemoryVectorStore] = {}
    for organization, documents in data.documents.items():
        store = stores.setdefault(organization, InMemoryVectorStore())
        for document in documents:
            store.add_document(document.uri, document.text)
    return ChainServiceConfig(
        client=_client_factory(llm),
        tools={name: _import(spec, name) for name, spec in data.tools.items()},
        prompt_configs={name: PromptConfig(p.system, p.max_tokens) for name, p in data.prompt_configs.items()},
        # "default" names the llm section's model, so am7://<org>/chat.config/default resolves.
        chat_configs={"default": _client_factory(llm)} | {name: _client_factory(s)
                                                          for name, s in data.chat_configs.items()},
        policies=list(data.policies),
        vector_stores=dict(stores),
        store=SQLitePlanStore(data.database),
        identity=SQLiteIdentityStore(data.database),
    )


def load_service_config(path: str | Path | None = None, *, base_url: str | None = None,
                        api_key: str | None = None) -> ChainServiceConfig:
    """The configuration in YAML file ``path`` (defaults when ``None``)."""
    if path is None:
        return service_config(ServiceFile(), base_url=base_url, api_key=api_key)
    try:
        raw = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise ValueError(f"{path}: cannot read the service configuration: {exc}") from exc
    try:
        data = ServiceFile.model_validate(raw)
    except ValidationError as exc:
        raise ValueError(f"{path}: {validation_problems(exc, 'file')[0]}") from exc
    return service_config(data, base_url=base_url, api_key=api_key)
