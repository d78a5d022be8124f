"""The three protocol adapters of the SDK tests, and the mark that runs a test with each."""

from __future__ import annotations

import pytest

from mockllm import PROTOCOLS
from tests.mockllm.sdk_anthropic_support import MESSAGES
from tests.mockllm.sdk_chat_support import CHAT
from tests.mockllm.sdk_responses_support import RESPONSES
from tests.mockllm.sdk_support import SDKAdapter

ADAPTERS: dict[str, SDKAdapter] = {sdk.protocol: sdk for sdk in (CHAT, MESSAGES, RESPONSES)}
OWN_SDK_MODULE = {
    "gemini": "test_sdk_gemini.py",
    "azure-openai": "test_sdk_azure.py",
    "ollama": "test_sdk_ollama.py",
    "bedrock-converse": "test_sdk_bedrock.py",
    "bedrock-invoke": "test_sdk_bedrock.py",
}
"""Protocols whose official SDK is tested in a module of its own, not through an adapter."""
assert set(ADAPTERS) | set(OWN_SDK_MODULE) == set(PROTOCOLS), "a new codec needs an SDK adapter or SDK test module"

EACH_PROTOCOL = pytest.mark.parametrize("sdk", list(ADAPTERS.values()), ids=list(ADAPTERS))
"""Run a test with each protocol's adapter, as the ``sdk`` argument."""
