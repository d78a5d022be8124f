"""The chain service's named resources, per organization (seed 001 §6.2).

Prompt configs, chat configs, policies and character records are named. The ones a
``ChainServiceConfig`` holds itself are the **shared default**: every organization
sees them. ``ChainServiceConfig.organizations[<org>]`` holds an organization's own,
which add to the shared ones and, under the same name, replace them for that
organization only. Another organization's own resources are never seen: naming one
(by name or by ``am7://<other-org>/…`` URI) is "not found", exactly as a name that
does not exist. ``resources_for`` gives the view one organization has.

A chat config is how to build its model client (a ``ModelClient`` factory); a
``ChatConfig`` is such a factory that also casts a ``systemCharacter`` and a
``userCharacter`` (character names, or ``am7://`` URIs of the organization's).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from harness.systems.chain import Character, Policy, PromptConfig
from harness.systems.llm import ModelClient

__all__ = ["ChatConfig", "ClientFactory", "OrganizationResources", "ScopedResources", "resources_for"]

ClientFactory = Callable[[], ModelClient]


@dataclass(eq=False)  # hashed by identity: the service keeps one client per factory
class ChatConfig:
    """A chat config: builds its model client when called, and names its characters."""

    client: ClientFactory
    system_character: str | None = None
    user_character: str | None = None

    def __call__(self) -> ModelClient:
        return self.client()


@dataclass
class OrganizationResources:
    """One organization's own named resources."""

    prompt_configs: dict[str, PromptConfig] = field(default_factory=dict)
    chat_configs: dict[str, ClientFactory] = field(default_factory=dict)
    policies: list[Policy] = field(default_factory=list)
    characters: dict[str, Character] = field(default_factory=dict)


@dataclass(frozen=True)
class ScopedResources:
    """What one organization sees: the shared resources, its own over them by name."""

    organization: str
    prompt_configs: dict[str, PromptConfig]
    chat_configs: dict[str, ClientFactory]
    policies: dict[str, Policy]
    characters: dict[str, Character]


def _by_name(policies: Iterable[Policy]) -> dict[str, Policy]:
    return {policy.name: policy for policy in policies}


def resources_for(
    organization: str, shared: OrganizationResources, own: OrganizationResources | None
) -> ScopedResources:
    """The resources ``organization`` sees: ``shared``, with its ``own`` over them."""
    own = own or OrganizationResources()
    return ScopedResources(
        organization,
        prompt_configs={**shared.prompt_configs, **own.prompt_configs},
        chat_configs={**shared.chat_configs, **own.chat_configs},
        policies={**_by_name(shared.policies), **_by_name(own.policies)},
        characters={**shared.characters, **own.characters},
    )
