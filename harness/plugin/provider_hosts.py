"""The provider-host refusal of the mock fixtures: a client a test forgot to point at the
mock fails the test naming the host, before any connection (``refusing_provider_hosts``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from harness.plugin.config import Settings

__all__ = ["refusing_provider_hosts"]


@contextlib.contextmanager
def refusing_provider_hosts(settings: Settings, fixture: str) -> Iterator[list[str]]:
    """Refuse requests to the providers' default hosts while a test runs (unless
    ``allow_real_providers``): a client the test forgot to point at the mock fails the
    test naming the host, before any connection, instead of spending real money."""
    if settings.allow_real_providers:
        yield []
        return
    from mockllm import refuse_hosts

    def message(shown: str) -> str:
        return (
            f"mockllm refused {shown} before it left the process: this test uses the {fixture} fixture, "
            "but this client is not pointed at the mock and would reach the real provider. Build the "
            f"client from the fixture ({fixture}.openai(), {fixture}.anthropic()) or point it at "
            f"{fixture}.base_url (Gemini, Azure, Ollama: see docs/testing-your-app.md), call "
            f"{fixture}.patch_env(monkeypatch), or serve the host with intercept(mockllm); or allow it "
            "with @pytest.mark.mockllm(allow_real_providers=True)."
        )

    def bedrock_message(shown: str) -> str:
        # boto3 sends through urllib3: only a URL reaches the mock, the server fixture's.
        return (
            f"mockllm refused {shown} before it left the process: this test uses the {fixture} fixture, "
            "but this boto3 client is not pointed at the mock and would reach AWS Bedrock. Use the "
            "mockllm_server fixture and call mockllm_server.patch_env(monkeypatch) before the app builds "
            "its client (it sets AWS_ENDPOINT_URL_BEDROCK_RUNTIME, a region and dummy credentials), or pass "
            "endpoint_url=mockllm_server.base_url to boto3.client('bedrock-runtime'); or allow it with "
            "@pytest.mark.mockllm(allow_real_providers=True)."
        )

    with refuse_hosts(message, bedrock_message=bedrock_message) as refused:
        yield refused
