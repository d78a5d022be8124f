"""Azure OpenAI Chat Completions: a deployment's route and the ``/openai/v1/`` route.

- ``POST /openai/deployments/{deployment}/chat/completions?api-version=…``: what
  ``openai.AzureOpenAI`` calls. ``api-version`` is required, as Azure requires it (its
  absence is Azure's 404 "Resource not found", saying what to add); the body's
  ``model`` may be left out or null (the deployment names the model), and the reply's
  ``model`` is then the deployment's name.
- ``POST /openai/v1/chat/completions``: Azure's v1 API, no ``api-version`` needed.

The bytes of a reply are OpenAI Chat Completions' (``mockllm._wire.openai_chat``);
what is Azure's own is the routes, the ``api-key`` header (accepted, never checked,
like ``Authorization``) and the error shape: a 400 about the request is OpenAI's
``{"error": {"message", "type", "param", "code"}}`` (Azure passes the model service's
validation through), any other status Azure's ``{"error": {"code", "message"}}``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from mockllm._conversation import Conversation
from mockllm._exceptions import RequestRejected
from mockllm._plan import ReplyPlan
from mockllm._wire.encoding import dumps
from mockllm._wire.openai_chat import OpenAIChatCodec
from mockllm._wire.openai_errors import openai_error_body
from mockllm._wire.rendering import EventBatches

__all__ = ["AzureOpenAICodec", "azure_openai"]

_DEPLOYMENT = re.compile(r"/openai/deployments/(?P<deployment>[^/]+)/chat/completions$")
_V1 = "/openai/v1/chat/completions"

# What Azure answers when a script names only the status: the message, and the code,
# which is the status's number unless Azure names one.
_AZURE_MESSAGES = {
    401: (
        "Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid "
        "key for an active subscription and use a correct regional API endpoint for your resource."
    ),
    403: "The principal does not have access to this resource.",
    404: "The API deployment for this resource does not exist.",
    408: "The operation was timeout.",
    429: (
        "Requests to the ChatCompletions_Create Operation under Azure OpenAI API have exceeded the rate limit "
        "of your current pricing tier. Please retry after 1 second."
    ),
    500: "The server had an error while processing your request. Sorry about that!",
    503: "The service is temporarily unable to process your request. Please try again later.",
}
_AZURE_CODES = {404: "DeploymentNotFound", 500: "InternalServerError", 503: "ServiceUnavailable"}


class AzureOpenAICodec(OpenAIChatCodec):
    """Azure OpenAI's Chat Completions; bound to a request's deployment and
    ``api-version`` by ``for_request``."""

    name = "azure-openai"
    aliases: tuple[str, ...] = ("azure",)
    route = _V1
    routes: tuple[str, ...] = (
        "POST /openai/deployments/{deployment}/chat/completions?api-version=…",
        f"POST {_V1}",
    )

    def __init__(self, deployment: str | None = None, api_version: str | None = None) -> None:
        self.deployment = deployment
        self.api_version = api_version

    def matches(self, path: str) -> bool:
        return path.endswith(_V1) or _DEPLOYMENT.search(path) is not None

    def for_request(self, path: str, query: Mapping[str, str]) -> AzureOpenAICodec:
        found = _DEPLOYMENT.search(path.rstrip("/"))
        if found is None:
            return AzureOpenAICodec(None, query.get("api-version"))
        return AzureOpenAICodec(found.group("deployment"), query.get("api-version"))

    def read_request(self, body: Any, *, lenient: bool) -> Conversation:
        """Azure's ``api-version`` rule, then Chat Completions' checks (``model`` may be
        left out on a deployment's route)."""
        if self.deployment is not None and not self.api_version:
            raise RequestRejected(
                "Resource not found: the api-version query parameter is required on "
                "/openai/deployments/{deployment}/ routes (e.g. ?api-version=2024-10-21); "
                "the openai SDK's AzureOpenAI(api_version=...) sends it.",
                status=404,
                type="404",
            )
        return super().read_request(self._with_model(body), lenient=lenient)

    def request_model(self, body: Any) -> str | None:
        """The body's ``model``; on a deployment's route without one, the deployment."""
        return super().request_model(self._with_model(body))

    def _with_model(self, body: Any) -> Any:
        # A null ``model`` is left out too: LangChain's AzureChatOpenAI sends ``"model": null``
        # when only the deployment is named, and Azure takes the model from the route.
        if self.deployment is not None and isinstance(body, dict) and body.get("model") is None:
            return {**body, "model": self.deployment}
        return body

    def render_json(self, plan: ReplyPlan, body: dict[str, Any]) -> bytes:
        return super().render_json(plan, self._with_model(body))

    def render_stream(self, plan: ReplyPlan, body: dict[str, Any]) -> EventBatches:
        return super().render_stream(plan, self._with_model(body))

    def render_error(self, status: int, type: str | None, message: str | None, param: str | None = None) -> bytes:
        """OpenAI's body for a 400 about the request; Azure's ``{"error": {"code",
        "message"}}`` for any other status (a scripted ``type`` is the ``code``)."""
        if status == 400:
            return openai_error_body(status, type, message, param)
        default_message = _AZURE_MESSAGES.get(
            status, "The server had an error while processing your request." if status >= 500 else ""
        )
        text = message or default_message or f"The request was rejected (HTTP {status})."
        return dumps({"error": {"code": type or _AZURE_CODES.get(status, str(status)), "message": text}}).encode()


azure_openai = AzureOpenAICodec()
