"""The Azure OpenAI codec through the engine: its routes beside OpenAI's, the
``api-version`` rule, the model from the deployment, Azure's error shape, and the same
bytes as OpenAI Chat Completions for the same reply."""

from __future__ import annotations

import json

from mockllm import MockLLM
from tests.mockllm.conversation_support import chain, tagged, text_step

BODY = {"model": "gpt-4o", "messages": [{"role": "user", "content": tagged(chain(text_step("one", length=5)))}]}
RAW = json.dumps(BODY).encode()
DEPLOYMENT = "/openai/deployments/dep-1/chat/completions"


def test_the_deployment_route_is_azure_and_the_reply_is_openais_bytes() -> None:
    azure = MockLLM().handle("POST", DEPLOYMENT, {}, RAW, "api-version=2024-10-21")
    plain = MockLLM().handle("POST", "/v1/chat/completions", {}, RAW)
    assert dict(azure.headers)["x-mockllm-protocol"] == "azure-openai"
    assert dict(plain.headers)["x-mockllm-protocol"] == "openai-chat"
    assert azure.body == plain.body


def test_without_model_the_reply_and_the_journal_name_the_deployment() -> None:
    body = json.dumps({"messages": BODY["messages"]}).encode()
    mock = MockLLM()
    reply = mock.handle("POST", DEPLOYMENT, {}, body, "api-version=2024-10-21")
    assert reply.status == 200 and json.loads(reply.body)["model"] == "dep-1"
    mock.handle("POST", DEPLOYMENT, {}, RAW, "api-version=2024-10-21")
    assert [entry.model for entry in mock.journal] == ["dep-1", "gpt-4o"]
    assert MockLLM().handle("POST", "/openai/v1/chat/completions", {}, body).status == 400


def test_api_version_is_required_on_deployments_only() -> None:
    missing = MockLLM().handle("POST", DEPLOYMENT, {}, RAW)
    assert missing.status == 404 and json.loads(missing.body)["error"]["code"] == "404"
    assert MockLLM().handle("POST", "/openai/v1/chat/completions", {}, RAW).status == 200


def test_errors_other_than_a_bad_request_are_in_azures_shape() -> None:
    script = chain({"id": "down", "error": {"status": 503}})
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": tagged(script)}]}).encode()
    reply = MockLLM().handle("POST", DEPLOYMENT, {}, body, "api-version=1")
    assert reply.status == 503 and set(json.loads(reply.body)["error"]) == {"code", "message"}
    bad = MockLLM().handle("POST", DEPLOYMENT, {}, b'{"model": "m"}', "api-version=1")
    assert bad.status == 400 and json.loads(bad.body)["error"]["param"] == "messages"
