"""The plugin beside LiteLLM (openai 2.x): LiteLLM pointed at the plugin's mock server.

LiteLLM, LlamaIndex and instructor hold openai below 3, so this runs in .ci/run's lean
environment; where LiteLLM is not installed it skips.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mockllm import InstructionChain


# LiteLLM's own models warn when pydantic first builds them (its TypedDicts use ReadOnly).
@pytest.mark.filterwarnings("ignore:Items? .*ReadOnly. qualifier:UserWarning")
def test_litellm_completion_is_served_by_the_mock_server(mockllm_server: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no cost map from the network
    litellm = pytest.importorskip("litellm", reason="litellm is not installed (the lean CI run has it)")
    prompt = InstructionChain(
        instruction_chain=[{"id": "hello", "messages": [{"text_message": {"text": "Hi from the mock, via LiteLLM."}}]}]
    ).tagged("Say hi")
    # The async call: LiteLLM's sync completion() starts a logging thread holding an event
    # loop it never closes (litellm 1.110), which a later test's garbage collection reports.
    reply = asyncio.run(
        litellm.acompletion(
            model="openai/gpt-mock",
            api_key="test",
            api_base=mockllm_server.openai_base_url,
            messages=[{"role": "user", "content": prompt}],
        )
    )
    assert reply.choices[0].message.content == "Hi from the mock, via LiteLLM."
    assert [entry.instruction_id for entry in mockllm_server.journal] == ["hello"]
