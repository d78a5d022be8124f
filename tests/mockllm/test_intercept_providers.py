"""``intercept()`` serves every provider's default host, not only OpenAI's and Anthropic's:
a Gemini, Azure OpenAI or Ollama client built with no base URL is answered by the mock,
in process, and one on another port or host is not; the host patterns are checked."""

from __future__ import annotations

import socket
from typing import Any

import pytest

from mockllm import MockLLM, intercept
from mockllm._hosts import DEFAULT_HOSTS, HostPatterns

SCRIPT = [{"messages": [{"text_message": {"text": "Served in process."}}]}]


@pytest.fixture(autouse=True)
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """A request that left the process would resolve its host or connect first."""

    def refused(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError(f"the network was touched: {args[:1]}")

    monkeypatch.setattr(socket, "getaddrinfo", refused)
    monkeypatch.setattr(socket, "create_connection", refused)


@pytest.fixture
def mock() -> MockLLM:
    mock = MockLLM()
    mock.script(SCRIPT)
    return mock


def test_a_gemini_client_with_no_base_url_is_served(mock: MockLLM, monkeypatch: pytest.MonkeyPatch) -> None:
    genai = pytest.importorskip("google.genai", reason="google-genai is not installed (the test extra)")
    monkeypatch.delenv("GOOGLE_GEMINI_BASE_URL", raising=False)
    with intercept(mock), genai.Client(api_key="live-looking-key") as client:
        reply = client.models.generate_content(model="gemini-2.0-flash", contents="Hi")
    assert reply.text == "Served in process."
    (entry,) = mock.journal
    assert (entry.protocol, entry.model) == ("gemini", "gemini-2.0-flash")


def test_an_azure_client_on_its_resource_host_is_served(mock: MockLLM) -> None:
    openai = pytest.importorskip("openai")
    client = openai.AzureOpenAI(
        azure_endpoint="https://my-resource.openai.azure.com", api_key="k", api_version="2024-10-21", max_retries=0
    )
    with intercept(mock), client:
        reply = client.chat.completions.create(model="my-deployment", messages=[{"role": "user", "content": "Hi"}])
    assert reply.choices[0].message.content == "Served in process."
    assert mock.journal[-1].path == "/openai/deployments/my-deployment/chat/completions"


def test_an_ollama_client_on_its_default_host_is_served(mock: MockLLM, monkeypatch: pytest.MonkeyPatch) -> None:
    ollama = pytest.importorskip("ollama", reason="the ollama client is not installed (the test extra)")
    monkeypatch.delenv("OLLAMA_HOST", raising=False)
    with intercept(mock):
        reply = ollama.Client().chat(model="llama3.2", messages=[{"role": "user", "content": "Hi"}])
    assert reply.message.content == "Served in process."
    assert mock.journal[-1].protocol == "ollama"


@pytest.mark.parametrize(
    ("host", "port", "covered"),
    [
        ("api.openai.com", None, True),
        ("generativelanguage.googleapis.com", 443, True),
        ("us-central1-aiplatform.googleapis.com", None, True),
        ("aiplatform.googleapis.com", None, True),
        ("my-resource.openai.azure.com", None, True),
        ("my-resource.cognitiveservices.azure.com", None, True),
        ("openai.azure.com.attacker.example", None, False),
        ("localhost", 11434, True),
        ("127.0.0.1", 11434, True),
        ("127.0.0.1", 8000, False),
        ("localhost", None, False),
        ("example.com", None, False),
    ],
)
def test_the_default_hosts_cover_the_providers_and_nothing_else(host: str, port: int | None, covered: bool) -> None:
    assert HostPatterns.parse(DEFAULT_HOSTS).covers(host, port) is covered


@pytest.mark.parametrize(
    ("pattern", "says"),
    [
        ("*openai.azure.com", r"'\*openai\.azure\.com' is not a pattern"),
        ("api.*.com", r"puts '\*' inside a name"),
        ("localhost:http", r"'localhost:http' is not a host and port"),
        ("localhost:0", r"'localhost:0' is not a host and port"),
        ("http://localhost", r"no scheme or path"),
    ],
)
def test_a_malformed_host_pattern_says_what_a_pattern_is(pattern: str, says: str) -> None:
    with pytest.raises(ValueError, match=says) as info, intercept(hosts=(pattern,)):
        pass
    assert "'localhost:11434'" in str(info.value) and "'*.openai.azure.com'" in str(info.value)


def test_a_refusal_names_the_patterns_it_was_given() -> None:
    httpx = pytest.importorskip("httpx")
    with (
        pytest.raises(Exception, match=r"only \*\.example\.test, api\.example\.test, localhost:9 are served"),
        intercept(hosts=("api.example.test", "*.example.test", "localhost:9"), block_unmocked=True),
        httpx.Client() as client,
    ):
        client.get("http://elsewhere.invalid/")
