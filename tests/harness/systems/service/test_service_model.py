"""Where the chain service's model is: the URL its configuration names, else the HTTP
client the caller's factory builds (``python -m harness serve``'s: the mock, in process),
else where the SDK goes by default. The service itself knows nothing of the mock."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from harness.in_process_mock import mock_http_clients
from harness.systems.llm import ModelClient, TurnComplete, UserMessage
from harness.systems.service.config import load_service_config
from mockllm import InstructionChain, MockLLM


def _config(tmp_path: Path, llm: dict[str, Any]) -> Path:
    path = tmp_path / "service.yaml"
    path.write_text(f"llm: {llm!r}\n".replace("'", '"'), encoding="utf-8")
    return path


async def _answer(client: ModelClient, text: str) -> str:
    try:
        async for event in client.stream_turn([UserMessage(text)]):
            if isinstance(event, TurnComplete):
                return event.turn.text
    finally:
        await client.aclose()
    raise AssertionError("the stream ended without its turn")


@pytest.mark.parametrize(
    ("protocol", "default_url"),
    [("anthropic-messages", "https://api.anthropic.com"), ("openai-chat", "https://api.openai.com/v1/")],
)
def test_a_model_with_no_url_and_no_factory_goes_where_its_sdk_goes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, protocol: str, default_url: str
) -> None:
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    client = load_service_config(_config(tmp_path, {"protocol": protocol})).client()
    assert str(client.client.base_url).rstrip("/") == default_url.rstrip("/")


def test_a_model_with_no_url_honours_the_sdks_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    client = load_service_config(_config(tmp_path, {"protocol": "anthropic-messages"})).client()
    assert str(client.client.base_url) == "http://127.0.0.1:9"


def test_a_model_with_no_url_is_the_factorys_client(tmp_path: Path) -> None:
    mock = MockLLM()
    libraries: list[ModuleType] = []
    factory = mock_http_clients(mock)

    def recording(library: ModuleType) -> Any:
        libraries.append(library)
        return factory(library)

    config = load_service_config(_config(tmp_path, {"protocol": "openai-chat"}), http_client=recording)
    chain = InstructionChain.model_validate({"instruction_chain": [{"messages": [{"text_message": {"text": "Hi."}}]}]})
    assert asyncio.run(_answer(config.client(), chain.tagged("Greet me"))) == "Hi."
    assert [library.__name__ for library in libraries] in (["httpx"], ["httpx2"])
    assert [entry.protocol for entry in mock.journal] == ["openai-chat"]


def test_a_model_url_wins_over_the_factory(tmp_path: Path) -> None:
    def refuse(library: ModuleType) -> Any:
        raise AssertionError("a model with a URL must not be built from the factory")

    path = _config(tmp_path, {"protocol": "anthropic-messages", "base_url": "http://127.0.0.1:9"})
    client = load_service_config(path, http_client=refuse).client()
    assert str(client.client.base_url) == "http://127.0.0.1:9"
