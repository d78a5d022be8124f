"""``mockllm.testing``: the public helpers for test tooling built on the mock."""

from __future__ import annotations

import json

import pytest

from mockllm import HTTPX2Transport, HTTPXTransport, InstructionChain, MockLLM
from mockllm.testing import transport_for


@pytest.mark.parametrize(("library_name", "transport_class"), [("httpx", HTTPXTransport), ("httpx2", HTTPX2Transport)])
def test_transport_for_a_library_serves_the_mock_in_process(library_name: str, transport_class: type) -> None:
    library = pytest.importorskip(library_name, reason=f"needs {library_name}")
    mock = MockLLM()
    transport = transport_for(mock, library)
    assert isinstance(transport, transport_class)
    chain = InstructionChain.model_validate({"instruction_chain": [{"messages": [{"text_message": {"text": "Hi."}}]}]})
    # Any host: the transport answers every request from the mock, with no socket.
    with library.Client(transport=transport, base_url="https://api.example.test") as client:
        reply = client.post(
            "/v1/chat/completions",
            json={"model": "m", "messages": [{"role": "user", "content": chain.tagged("Greet me")}]},
        )
    assert reply.status_code == 200
    assert reply.json()["choices"][0]["message"]["content"] == "Hi."
    assert [entry.protocol for entry in mock.journal] == ["openai-chat"]


def test_transport_for_another_library_is_a_type_error_naming_it() -> None:
    with pytest.raises(TypeError, match=r"library must be the httpx or httpx2 module, got <module 'json'"):
        transport_for(MockLLM(), json)
