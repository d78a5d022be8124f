"""The chain service's core, shared by its doors (REST, WebSocket, MCP).

For a ``Principal`` (``harness.systems.service.auth``: a user and an organization, and its
permissions) it turns a ``ChainRequest`` into a plan, runs it on a ``ChainExecutor``
scoped to the caller's organization — synchronously or in the background — and answers
status (``harness.systems.service.status``), cancel and plan reads. Everything is scoped: a
plan, document, config, policy or character of another organization is ``NotFound``
(404), never "forbidden", and never its data; what the caller's own organization has
but its permissions deny is ``Forbidden`` (403) — at the request, or, met by a step,
that step fails saying so.

Errors are ``harness.systems.service.errors.ChainServiceError``s carrying the HTTP status and
a ``detail`` sentence.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from harness.events import Listener, notify
from harness.systems.chain import (
    Am7Uri,
    ChainEvent,
    ChainExecutor,
    ChainPlan,
    Character,
    CharacterError,
    InMemoryVectorStore,
    PlanExecutionError,
    Policy,
    PromptConfig,
    SQLitePlanStore,
    UnknownReference,
    VectorStore,
    character_tools,
    plan_uri,
    read_character,
    resolve_name,
    save_context,
)
from harness.systems.chain.access import forbidden
from harness.systems.chain.uris import CHAT_CONFIG, PROMPT_CONFIG
from harness.systems.identity import SQLiteIdentityStore
from harness.systems.identity.tools import identity_tools
from harness.systems.llm import ModelClient
from harness.systems.service.auth import Principal
from harness.systems.service.errors import BadRequest, Forbidden, NotFound
from harness.systems.service.requests import ChainRequest
from harness.systems.service.resources import (
    ChatConfig,
    ClientFactory,
    OrganizationResources,
    ScopedResources,
    resources_for,
)
from harness.systems.service.status import ChainStatus, derive_status

__all__ = ["KEEP_FINISHED", "ChainRequest", "ChainService", "ChainServiceConfig"]
EventCallback = Listener[ChainEvent]


@dataclass
class ChainServiceConfig:
    """What chains run with. ``client`` builds the model client (called once, lazily,
    in the event loop that runs chains); ``chat_configs`` name other clients.

    ``prompt_configs``, ``chat_configs``, ``policies`` and ``characters`` are the shared
    default every organization sees; ``organizations`` holds each organization's own,
    which add to them and replace them by name (``harness.systems.service.resources``).
    """

    client: Callable[[], ModelClient]
    tools: dict[str, Callable[..., Any]] = field(default_factory=dict)
    prompt_configs: dict[str, PromptConfig] = field(default_factory=dict)
    chat_configs: dict[str, ClientFactory] = field(default_factory=dict)
    policies: list[Policy] = field(default_factory=list)
    vector_stores: dict[str, VectorStore] = field(default_factory=dict)  # per organization
    characters: dict[str, Character] = field(default_factory=dict)
    organizations: dict[str, OrganizationResources] = field(default_factory=dict)
    store: SQLitePlanStore = field(default_factory=SQLitePlanStore)
    identity: SQLiteIdentityStore = field(default_factory=SQLiteIdentityStore)  # served at /scim/v2


@dataclass
class _Live:
    principal: Principal
    plan_id: str
    task: asyncio.Task[ChainPlan] | None
    cancel: asyncio.Event
    subscribers: list[EventCallback]
    last_event: ChainEvent | None = None
    error: str | None = None


KEEP_FINISHED = 256
"""Finished runs whose live state (last event, error) is kept for status reads."""


class ChainService:
    """Runs chains for principals; one instance per app."""

    def __init__(self, config: ChainServiceConfig) -> None:
        self.config = config
        self._clients: dict[ClientFactory, ModelClient] = {}
        self._live: dict[tuple[str, str], _Live] = {}

    # -- planning ------------------------------------------------------------------------

    def _client(self, factory: ClientFactory) -> ModelClient:
        """The client ``factory`` builds, built once (a chat config shared by every
        organization is one client; an organization's own is its own)."""
        if factory not in self._clients:
            self._clients[factory] = factory()
        return self._clients[factory]

    def resources(self, principal: Principal) -> ScopedResources:
        """The named resources ``principal``'s organization sees: the shared default,
        its own over them by name; never another organization's."""
        config = self.config
        shared = OrganizationResources(config.prompt_configs, config.chat_configs, config.policies, config.characters)
        return resources_for(principal.organization, shared, config.organizations.get(principal.organization))

    @staticmethod
    def _config_name(
        principal: Principal, name: str | None, uri: str | None, kind: str, known: Mapping[str, Any]
    ) -> str | None:
        """The config a request names (``<kind>ConfigName``: a name, or a URI) or points at
        (``<kind>ConfigUri``, ``am7://<org>/<kind>.config/<name>``), resolved as a step's is
        (``harness.systems.chain.resolve_name``); an unknown one, or another organization's, is NotFound."""
        field_name, reference = (f"{kind}ConfigUri", uri) if uri else (f"{kind}ConfigName", name)
        if reference is None:
            return None
        try:
            if uri:
                Am7Uri.parse(uri)  # the URI field takes URIs only
            return resolve_name(
                reference, CHAT_CONFIG if kind == "chat" else PROMPT_CONFIG, principal.organization, known
            )
        except ValueError as exc:
            raise BadRequest(f"{field_name}: {exc}") from exc
        except UnknownReference as exc:
            raise NotFound(f"{field_name}: {exc}") from exc

    def _check_data_references(self, principal: Principal, references: list[str]) -> None:
        """Each data reference is a document of the caller's organization (else NotFound)
        that the caller may read (else Forbidden)."""
        store = self.config.vector_stores.get(principal.organization)
        for ref in references:
            try:
                parsed = Am7Uri.parse(ref)
            except ValueError as exc:
                raise BadRequest(f"dataReferences: {exc}") from exc
            if parsed.organization != principal.organization or store is None or not store.contains(ref):
                raise NotFound(f"dataReferences: not found: {ref}")
            if not principal.permissions.may_read(ref):
                raise Forbidden(f"dataReferences: {forbidden(ref, 'data')}")

    def _chat_context(self, principal: Principal, resources: ScopedResources, chat: str | None) -> dict[str, Any]:
        """The chain context a plan starts with: its chat config and the config's two
        characters as full records (Group K); empty when there is no chat config."""
        chat = chat if chat is not None else ("default" if "default" in resources.chat_configs else None)
        if chat is None:
            return {}
        config = resources.chat_configs[chat]
        context: dict[str, Any] = {"chatConfigId": chat}
        if isinstance(config, ChatConfig):
            for key, reference in (
                ("systemCharacter", config.system_character),
                ("userCharacter", config.user_character),
            ):
                if reference is None:
                    continue
                try:
                    context[key] = read_character(
                        reference, principal.organization, resources.characters, principal.permissions
                    )
                except CharacterError as exc:
                    error = Forbidden if exc.status == 403 else NotFound
                    raise error(f"chat config {chat!r}: {key}: {exc}") from exc
                except ValueError as exc:  # a malformed URI in the configuration
                    raise NotFound(f"chat config {chat!r}: {key}: {exc}") from exc
        return context

    def make_plan(self, principal: Principal, request: ChainRequest) -> ChainPlan:
        """The plan ``request`` asks for, with a fresh id; a ``ChainServiceError`` if not."""
        resources = self.resources(principal)
        chat = self._config_name(
            principal, request.chat_config, request.chat_config_uri, "chat", resources.chat_configs
        )
        prompt = self._config_name(
            principal, request.prompt_config, request.prompt_config_uri, "prompt", resources.prompt_configs
        )
        self._check_data_references(principal, request.data_references)
        context = self._chat_context(principal, resources, chat)
        # No steps: the executor has the model plan them (seed 001 §2.3, createChainPlan).
        steps = [s.model_copy(deep=True) for s in request.steps or ()]
        for number, step in enumerate(steps, start=1):
            step.step_number = number
        plan = ChainPlan(
            object_id=uuid.uuid4().hex,
            name=request.name,
            plan_query=request.query,
            max_steps=request.max_steps,
            chain_mode=True,
            steps=steps,
            chat_config_name=chat,
            prompt_config_name=prompt,
            data_references=list(request.data_references),
        )
        if context:  # the chain's chat config and characters (Group K), readable by its steps
            plan.context_blocks = save_context(context, plan.object_id or "")
        return plan

    def executor(self, principal: Principal) -> ChainExecutor:
        """An executor that sees what ``principal``'s organization sees, and lets it do
        what its permissions allow."""
        organization, resources = principal.organization, self.resources(principal)
        store = self.config.vector_stores.get(organization)
        # The identity and character tools act in the caller's organization; a configured
        # tool of the same name wins.
        tools = {
            **identity_tools(self.config.identity, organization),
            **character_tools(resources.characters, organization, principal.permissions),
            **self.config.tools,
        }
        return ChainExecutor(
            self._client(self.config.client),
            tools=tools,
            prompt_configs=resources.prompt_configs,
            chat_configs={name: self._client(factory) for name, factory in resources.chat_configs.items()},
            policies=resources.policies,
            vector_store=store if store is not None else InMemoryVectorStore(),
            store=self.config.store,
            organization=organization,
            permissions=principal.permissions,
        )

    # -- running -------------------------------------------------------------------------

    def start(
        self,
        principal: Principal,
        request: ChainRequest,
        on_event: EventCallback | None = None,
        *,
        stream_session_id: str | None = None,
        mcp_session_id: str | None = None,
    ) -> str:
        """Start a run in the background; returns the plan id at once. A door names its
        session: the WebSocket's (``stream_session_id``) or the MCP client's."""
        plan = self.make_plan(principal, request)
        plan.stream_session_id, plan.mcp_session_id = stream_session_id, mcp_session_id
        assert plan.object_id is not None
        # Stored before it is registered: a plan that cannot be stored leaves nothing behind.
        self.config.store.save(plan, principal.organization)  # readable (and cancellable) at once
        live = _Live(principal, plan.object_id, None, asyncio.Event(), [on_event] if on_event else [])
        self._live[(principal.organization, plan.object_id)] = live
        live.task = asyncio.ensure_future(self._execute(live, plan))
        return plan.object_id

    async def _execute(self, live: _Live, plan: ChainPlan) -> ChainPlan:
        async def fan_out(event: ChainEvent) -> None:
            live.last_event = event
            for callback in list(live.subscribers):
                try:
                    await notify((callback,), event)
                except Exception:  # a subscriber that went away must not stop the chain
                    live.subscribers.remove(callback)

        try:
            return await self.executor(live.principal).execute_chain(plan, cancel=live.cancel, listeners=[fan_out])
        except PlanExecutionError as exc:
            live.error = str(exc)
            assert exc.plan is not None
            return exc.plan
        finally:
            live.subscribers.clear()
            self._forget_finished()

    def _forget_finished(self) -> None:
        """Keep the last ``KEEP_FINISHED`` finished runs' live state; the store keeps the plans."""
        finished = [key for key, live in self._live.items() if live.task is not None and live.task.done()]
        for key in finished[: max(0, len(finished) - KEEP_FINISHED)]:
            del self._live[key]

    def subscribe(self, principal: Principal, plan_id: str, callback: EventCallback) -> bool:
        """Add ``callback`` to a running chain's events; ``False`` if it is not running."""
        live = self._live.get((principal.organization, plan_id))
        if live is None or live.task is None or live.task.done():
            return False
        live.subscribers.append(callback)
        return True

    def unsubscribe(self, principal: Principal, plan_id: str, callback: EventCallback) -> None:
        live = self._live.get((principal.organization, plan_id))
        if live is not None and callback in live.subscribers:
            live.subscribers.remove(callback)

    async def wait(self, principal: Principal, plan_id: str) -> ChainPlan:
        """The plan once its run has ended (at once if it is not running)."""
        live = self._live.get((principal.organization, plan_id))
        if live is not None and live.task is not None:
            return await asyncio.shield(live.task)
        return self.plan(principal, plan_id)

    def cancel(self, principal: Principal, plan_id: str) -> ChainStatus:
        """Ask a running chain to stop; a finished one is left as it is."""
        self.plan(principal, plan_id)  # NotFound for an unknown or foreign plan
        live = self._live.get((principal.organization, plan_id))
        if live is not None:
            live.cancel.set()
        return self.status(principal, plan_id)

    # -- reading -------------------------------------------------------------------------

    def plan(self, principal: Principal, plan_id: str) -> ChainPlan:
        plan = self.config.store.load(plan_id, principal.organization)
        if plan is None:  # the same words for an unknown plan and another organization's
            raise NotFound(f"not found: {plan_uri(principal.organization, plan_id)}")
        return plan

    def plan_by_uri(self, principal: Principal, uri: str) -> ChainPlan:
        try:
            ref = Am7Uri.parse(uri)
        except ValueError as exc:
            raise BadRequest(str(exc)) from exc
        if ref.type != "tool.plan" or ref.organization != principal.organization:
            raise NotFound(f"not found: {uri}")
        try:
            return self.plan(principal, ref.object_id)
        except NotFound as exc:  # in the caller's own spelling of the URI
            raise NotFound(f"not found: {uri}") from exc

    def status(self, principal: Principal, plan_id: str) -> ChainStatus:
        plan = self.plan(principal, plan_id)
        live = self._live.get((principal.organization, plan_id))
        running = live is not None and live.task is not None and not live.task.done()
        return derive_status(
            plan,
            plan_uri(principal.organization, plan_id),
            running=running,
            last_event=live.last_event if live is not None else None,
            error=live.error if live is not None else None,
        )
