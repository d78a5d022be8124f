"""Every provider's default host is refused while a fixture runs, not only OpenAI's and
Anthropic's: a Gemini, Azure OpenAI or Ollama client the test forgot to point at the
mock is stopped before any connection and fails the test, naming the request, even if
the app swallowed the error (docs/strictness.md#the-doors)."""

from __future__ import annotations

import pytest

from tests.harness.plugin.test_verdict_doors import refused_run

pytest.importorskip("google.genai", reason="google-genai is not installed (the test extra)")
pytest.importorskip("ollama", reason="the ollama client is not installed (the test extra)")

# Beside the inner run's network guard (``refused_run``'s: DNS for anything but loopback
# fails the test), no environment that would point the clients somewhere else.
DEFAULT_HOSTS = """
@pytest.fixture(autouse=True)
def default_hosts(monkeypatch):
    monkeypatch.delenv("OLLAMA_HOST", raising=False)
    monkeypatch.delenv("GOOGLE_GEMINI_BASE_URL", raising=False)
"""

TESTS = """
import openai
import ollama
import pytest
from google import genai

def swallowed(call):
    # An app that catches the error: the test must fail all the same.
    try:
        call()
    except Exception as exc:
        return exc
    raise AssertionError("the request was not refused")

def test_gemini(FIXTURE):
    with genai.Client(api_key="live-looking-key") as client:
        swallowed(lambda: client.models.generate_content(model="gemini-2.0-flash", contents="Hi"))

def test_azure(FIXTURE):
    client = openai.AzureOpenAI(azure_endpoint="https://my-resource.openai.azure.com", api_key="k",
                                api_version="2024-10-21", max_retries=0)
    with client:
        swallowed(lambda: client.chat.completions.create(model="d", messages=[{"role": "user", "content": "Hi"}]))

def test_ollama(FIXTURE):
    with ollama.Client() as client:
        swallowed(lambda: client.chat(model="llama3.2", messages=[{"role": "user", "content": "Hi"}]))

def test_ollama_pointed_at_the_mock(FIXTURE, monkeypatch):
    FIXTURE.patch_env(monkeypatch)
    FIXTURE.script([{"messages": [{"text_message": {"text": "From the mock."}}]}])
    with ollama.Client(host=FIXTURE.base_url) as client:
        reply = client.chat(model="llama3.2", messages=[{"role": "user", "content": "Hi"}])
    assert reply.message.content == "From the mock."

@pytest.mark.mockllm(allow_real_providers=True)
def test_gemini_allowed_goes_on_to_the_network(FIXTURE):
    with genai.Client(api_key="k") as client:
        exc = swallowed(lambda: client.models.generate_content(model="gemini-2.0-flash", contents="Hi"))
    assert "the network was touched: generativelanguage.googleapis.com" in repr(exc) + repr(exc.__cause__)
"""


@pytest.mark.parametrize("fixture", ["mockllm", "mockllm_server"])
def test_a_gemini_azure_or_ollama_client_not_pointed_at_the_mock_fails_the_test(
    strict_pytester: pytest.Pytester, shared_server_conftest: str, fixture: str
) -> None:
    tests = TESTS.replace("FIXTURE", fixture)
    allowed = "test_gemini_allowed_goes_on_to_the_network"
    conftest = DEFAULT_HOSTS + shared_server_conftest
    result = refused_run(strict_pytester, conftest, tests, passed=5, errors=3, allowed_test=allowed)
    result.stdout.fnmatch_lines(
        [
            "E*1 request(s) went to hosts the mock does not serve:",
            "E*- POST https://generativelanguage.googleapis.com/*/models/gemini-2.0-flash:generateContent",
            "E*- POST https://my-resource.openai.azure.com/openai/deployments/d/chat/completions?api-version=2024-10-21",
            "E*- POST http://127.0.0.1:11434/api/chat",
        ],
        consecutive=False,
    )
