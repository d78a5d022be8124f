"""The chain service as an MCP server (the official SDK's low-level ``Server``).

- Tools: ``am7_chain_execute``, ``am7_chain_status``, ``am7_chain_cancel``
  (``harness.systems.service.mcp_tools``).
- Resources: every plan of the caller's organization, ``am7://<org>/tool.plan/<id>``
  (a resource template), read as the plan's JSON, running or finished.
- Subscriptions to plan URIs (``harness.systems.service.mcp_subscriptions``).

Who calls: a server built with a ``principal`` answers everyone as that principal
(stdio, where the process's environment says who it serves). Without one, each
request's principal is the one the HTTP door put in the request's ASGI scope under
``PRINCIPAL_SCOPE_KEY`` after checking its bearer token. Everything is scoped to that
principal's organization: another organization's plan is "not found", never its data.
"""

from __future__ import annotations

import importlib.metadata
import uuid
from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.shared.exceptions import MCPError

from harness.systems.chain import ChainEvent, plan_uri
from harness.systems.service.auth import Principal
from harness.systems.service.core import ChainService
from harness.systems.service.errors import BadRequest, ChainServiceError
from harness.systems.service.mcp_subscriptions import PlanSubscriptions
from harness.systems.service.mcp_tools import (
    CANCEL,
    EXECUTE,
    TOOLS,
    chain_result,
    error_result,
    execute_request,
    plan_uri_argument,
    started_result,
    status_result,
)

__all__ = ["PRINCIPAL_SCOPE_KEY", "SERVER_NAME", "chain_mcp_server"]

PRINCIPAL_SCOPE_KEY = "harness.principal"
"""The ASGI scope key under which the HTTP door puts a request's authenticated ``Principal``."""

SERVER_NAME = "harness-chain"

_PLAN_TEMPLATE = types.ResourceTemplate(
    name="chain plan",
    uri_template="am7://{organization}/tool.plan/{planId}",
    mime_type="application/json",
    description="A chain plan of your organization as JSON (executed, steps, output, totalExecutedSteps, "
    "chainContextJson, ...), running or finished. Subscribe to follow a running chain.",
)

Context = ServerRequestContext[Any, Any]


def _version() -> str:
    try:
        return importlib.metadata.version("mockllm-harness")
    except importlib.metadata.PackageNotFoundError:
        return ""


# What every server answers alike, whoever asks: its tools and its one resource template.


async def _list_tools(ctx: Context, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
    return types.ListToolsResult(tools=list(TOOLS.values()))


async def _list_resource_templates(
    ctx: Context, params: types.PaginatedRequestParams | None
) -> types.ListResourceTemplatesResult:
    return types.ListResourceTemplatesResult(resource_templates=[_PLAN_TEMPLATE])


def _not_found(error: ChainServiceError, uri: str) -> MCPError:
    # The SDK answers an unknown resource with INVALID_PARAMS; the status says which kind.
    return MCPError(types.INVALID_PARAMS, error.detail, data={"uri": uri, **error.body()})


class _ChainHandlers:
    """The request handlers of one server over one service: those whose answer depends
    on the service or the caller."""

    def __init__(self, service: ChainService, principal: Principal | None) -> None:
        self.service = service
        self.fixed = principal
        self.subscriptions = PlanSubscriptions(service)
        self.stdio_session_id = uuid.uuid4().hex  # a stdio server has one client session: its process's

    def principal(self, ctx: Context) -> Principal:
        request = ctx.request
        found = getattr(request, "scope", {}).get(PRINCIPAL_SCOPE_KEY) if request is not None else None
        if isinstance(found, Principal):
            return found
        if self.fixed is not None:
            return self.fixed
        raise MCPError(
            types.INVALID_REQUEST,
            "this request has no authenticated caller: serve the chain MCP server "
            "over HTTP with harness.systems.service.mcp_http.mcp_asgi_app, which checks "
            "bearer tokens",
        )

    @staticmethod
    def connection(ctx: Context) -> str:
        """Which client connection ``ctx`` came on (stdio has one; HTTP names its sessions)."""
        if ctx.request is None:
            return "stdio"
        return f"http:{ctx.request.headers.get('mcp-session-id')}"

    def session_id(self, ctx: Context) -> str | None:
        """The MCP session ``ctx`` came in, as its plans record it (``mcpSessionId``): the
        HTTP transport's ``mcp-session-id``; over stdio, the one session of the process."""
        if ctx.request is None:
            return self.stdio_session_id
        return ctx.request.headers.get("mcp-session-id")

    # -- tools ---------------------------------------------------------------------------

    async def call_tool(self, ctx: Context, params: types.CallToolRequestParams) -> types.CallToolResult:
        if params.name not in TOOLS:
            raise MCPError(types.INVALID_PARAMS, f"unknown tool {params.name!r}; this server has {', '.join(TOOLS)}")
        principal = self.principal(ctx)
        try:
            if params.name == EXECUTE:
                return await self.execute(ctx, principal, params.arguments)
            plan_id = self.plan_id(principal, plan_uri_argument(params.name, params.arguments))
            if params.name == CANCEL:
                self.service.cancel(principal, plan_id)
                await self.service.wait(principal, plan_id)  # answer once it has stopped
            return status_result(self.service.status(principal, plan_id))
        except ChainServiceError as exc:
            return error_result(exc)

    def plan_id(self, principal: Principal, uri: str) -> str:
        try:
            plan_id = self.service.plan_by_uri(principal, uri).object_id
        except BadRequest as exc:
            raise BadRequest(f"planUri: {exc.detail}") from exc
        assert plan_id is not None
        return plan_id

    async def execute(
        self, ctx: Context, principal: Principal, arguments: dict[str, Any] | None
    ) -> types.CallToolResult:
        request, wait = execute_request(arguments)
        session = self.session_id(ctx)
        if not wait:
            plan_id = self.service.start(principal, request, mcp_session_id=session)
            return started_result(self.service.status(principal, plan_id))
        events = 0

        async def report(event: ChainEvent) -> None:
            # Progress for a caller that asked for it: one notification per chain event.
            nonlocal events
            events += 1
            step = f" step {event.step_number} of {event.total_steps}" if event.step_number else ""
            await ctx.session.report_progress(events, None, f"{event.event_type}{step}: {event.mcp_context_uri}")

        plan_id = self.service.start(principal, request, report, mcp_session_id=session)
        try:
            plan = await self.service.wait(principal, plan_id)
        except anyio.get_cancelled_exc_class():
            self.service.cancel(principal, plan_id)  # a caller that stopped waiting stops its chain
            raise
        return chain_result(plan, self.service.status(principal, plan_id))

    # -- resources -----------------------------------------------------------------------

    async def list_resources(
        self, ctx: Context, params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        organization = self.principal(ctx).organization
        return types.ListResourcesResult(
            resources=[
                types.Resource(
                    uri=plan_uri(organization, plan_id), name=f"chain plan {plan_id}", mime_type="application/json"
                )
                for plan_id in self.service.config.store.list_ids(organization)
            ]
        )

    async def read_resource(self, ctx: Context, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        try:
            plan = self.service.plan_by_uri(self.principal(ctx), params.uri)
        except ChainServiceError as exc:
            raise _not_found(exc, params.uri) from exc
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=params.uri, mime_type="application/json", text=plan.to_json())]
        )

    async def subscribe(self, ctx: Context, params: types.SubscribeRequestParams) -> types.EmptyResult:
        try:
            self.subscriptions.subscribe(self.principal(ctx), params.uri, self.connection(ctx), ctx.session)
        except ChainServiceError as exc:
            raise _not_found(exc, params.uri) from exc
        return types.EmptyResult()

    async def unsubscribe(self, ctx: Context, params: types.UnsubscribeRequestParams) -> types.EmptyResult:
        try:
            self.subscriptions.unsubscribe(self.principal(ctx), params.uri, self.connection(ctx))
        except ChainServiceError as exc:
            raise _not_found(exc, params.uri) from exc
        return types.EmptyResult()

    async def listen(
        self, ctx: Context, params: types.SubscriptionsListenRequestParams
    ) -> types.SubscriptionsListenResult:
        try:
            return await self.subscriptions.listen(self.principal(ctx), ctx, params)
        except ChainServiceError as exc:
            raise MCPError(types.INVALID_PARAMS, exc.detail, data=exc.body()) from exc


def chain_mcp_server(service: ChainService, principal: Principal | None = None) -> Server[Any]:
    """An MCP server over ``service``: its chains as tools, its plans as resources.

    ``principal``: who every request is from (stdio). ``None``: each request's principal
    is in its ASGI scope, put there by the HTTP door (``mcp_asgi_app``).
    """
    handlers = _ChainHandlers(service, principal)
    return Server(
        SERVER_NAME,
        version=_version(),
        instructions="Run chains with am7_chain_execute; follow one by reading or subscribing to its planUri.",
        on_list_tools=_list_tools,
        on_call_tool=handlers.call_tool,
        on_list_resources=handlers.list_resources,
        on_list_resource_templates=_list_resource_templates,
        on_read_resource=handlers.read_resource,
        on_subscribe_resource=handlers.subscribe,
        on_unsubscribe_resource=handlers.unsubscribe,
        on_subscriptions_listen=handlers.listen,
        # Plan and tool inputs are checked in the handlers; this saves header checks a tools/list.
        get_tool_input_schema=lambda name: TOOLS[name].input_schema if name in TOOLS else None,
    )
