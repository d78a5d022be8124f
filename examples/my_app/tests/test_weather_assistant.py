"""The assistant's tests: three ways to point it at the mock, no tags in its prompt."""

from __future__ import annotations

import pytest
from weather_assistant import answer

from mockllm import MockLLM, intercept

# The model's side of the conversation: call the tool, then answer.
SCRIPT = [
    {"id": "look-up", "messages": [{"tool_call": [{"name": "weather", "args": {"city": "Oslo"}}]}]},
    {"id": "reply", "messages": [{"text_message": {"text": "It is sunny in Oslo."}}]},
]


def test_through_the_environment(mockllm_server, monkeypatch):
    """1. The app builds its client from OPENAI_BASE_URL: point that at the mock."""
    mockllm_server.patch_env(monkeypatch)
    mockllm_server.script(SCRIPT, match="Oslo")
    assert answer("What is the weather in Oslo?") == "It is sunny in Oslo."
    assert [e.instruction_id for e in mockllm_server.journal] == ["look-up", "reply"]


def test_with_an_injected_client(mockllm):
    """2. The app takes a client: hand it one wired to the in-process mock."""
    mockllm.script(SCRIPT)
    assert answer("Weather in Oslo?", client=mockllm.openai()) == "It is sunny in Oslo."


def test_in_process_through_the_environment(mockllm, monkeypatch):
    """1b. The environment again, served in process: no server, no socket."""
    mockllm.patch_env(monkeypatch)
    mockllm.script(SCRIPT)
    assert answer("Weather in Oslo?") == "It is sunny in Oslo."


def test_by_intercepting_the_default_host(monkeypatch):
    """3. Unchanged code on the default api.openai.com: intercept it, block the rest."""
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    mock = MockLLM()
    mock.script(SCRIPT)
    with intercept(mock, block_unmocked=True):
        assert answer("Weather in Oslo?") == "It is sunny in Oslo."
    assert mock.journal[-1].script_id is not None


@pytest.mark.mockllm(allow_fallback=True, allow_unused_steps=True)
def test_a_question_nobody_scripted_gets_the_fallback_only_when_allowed(mockllm):
    """Without allow_fallback this test would fail: nothing scripted this request."""
    mockllm.script(SCRIPT, match="Oslo")
    assert answer("Weather in Bergen?", client=mockllm.openai())
    assert mockllm.journal[-1].fallback_reason == (
        "no user message holds an instruction block, and of the registered scripts none fits "
        "the first user message 'Question: Weather in Bergen?' (model 'gpt-4o-mini')"
    )
