"""``intercept(block_unmocked=True)``: a request to any other host fails, shown."""

from __future__ import annotations

import httpx
import openai
import pytest

from mockllm._intercept import UnmockedRequestError, intercept

httpx2 = pytest.importorskip("httpx2", reason="httpx2 is not installed (the httpx2 extra)")


@pytest.mark.parametrize("library", [httpx, httpx2], ids=["httpx", "httpx2"])
def test_a_request_to_another_host_is_refused_and_shown(library: object) -> None:
    with pytest.raises(UnmockedRequestError) as info:
        with intercept(block_unmocked=True), library.Client() as client:  # type: ignore[attr-defined]
            client.get("http://example.invalid/data?q=1")
    assert str(info.value).startswith(
        "intercept(block_unmocked=True) blocked GET http://example.invalid/data?q=1: only "
        "the providers' default hosts (OpenAI, Anthropic, Gemini, Vertex AI, Azure OpenAI, Ollama) are served "
        "by the mock."
    )


def test_a_refusal_the_app_swallowed_still_fails_when_the_block_ends() -> None:
    def app_that_hides_errors() -> None:
        client = openai.OpenAI(api_key="k", base_url="http://elsewhere.invalid/v1", max_retries=0)
        try:
            client.models.list()
        except Exception:
            pass

    with pytest.raises(UnmockedRequestError) as info:
        with intercept(block_unmocked=True):
            app_that_hides_errors()
    assert str(info.value) == (
        "1 request(s) went to hosts the mock does not serve:\n"
        "  - GET http://elsewhere.invalid/v1/models (intercept(block_unmocked=True) serves "
        "the providers' default hosts (OpenAI, Anthropic, Gemini, Vertex AI, Azure OpenAI, Ollama))\n"
        "The request was refused before any connection. Point the client at the mock (patch_env, base_url, "
        "an http_client from the fixture, or intercept()), or allow this with intercept(block_unmocked=False)."
    )


def test_the_mocked_hosts_are_still_served_and_others_pass_without_the_flag() -> None:
    with intercept(block_unmocked=True, allow_fallback=True) as mock, httpx2.Client() as client:
        client.post(
            "https://api.openai.com/v1/chat/completions",
            json={"model": "m", "messages": [{"role": "user", "content": "hi"}]},
        )
    assert mock.journal[-1].path == "/v1/chat/completions"
