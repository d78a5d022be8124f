"""aiohttp clients (google-genai's async client wherever aiohttp is installed, as beside
LiteLLM) are refused the providers' hosts: by ``refuse_hosts`` (what the fixtures use),
and by ``intercept()``, which cannot serve them in process. No network: a request the
guard let through would reach a closed loopback port, or fail at DNS here."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
from typing import Any

import pytest

from mockllm import UnmockedRequestError, intercept, refuse_hosts

aiohttp = pytest.importorskip("aiohttp", reason="aiohttp is not installed (the lean CI run has it, beside LiteLLM)")

GEMINI = "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.0-flash:generateContent"
ORIGINAL = aiohttp.ClientSession._request


@pytest.fixture(autouse=True)
def no_dns(monkeypatch: pytest.MonkeyPatch) -> None:
    real = socket.getaddrinfo

    def loopback_only(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host not in ("127.0.0.1", "localhost", "::1"):
            raise AssertionError(f"the network was touched: {host}")
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", loopback_only)


async def post(url: str, **session: Any) -> Any:
    async with aiohttp.ClientSession(**session) as client, client.post(url, json={"contents": []}) as response:
        return response.status


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_refuse_hosts_refuses_a_provider_host_and_notes_it() -> None:
    with refuse_hosts(lambda shown: f"refused {shown}") as blocked:
        with pytest.raises(UnmockedRequestError, match=f"^refused POST {GEMINI}$"):
            asyncio.run(post(GEMINI))
        # A session's base_url is resolved before the check, as aiohttp resolves it.
        with pytest.raises(UnmockedRequestError, match="refused POST http://127.0.0.1:11434/api/chat"):
            asyncio.run(post("/api/chat", base_url="http://127.0.0.1:11434"))
    assert blocked == [f"POST {GEMINI}", "POST http://127.0.0.1:11434/api/chat"]
    assert aiohttp.ClientSession._request is ORIGINAL


def test_other_hosts_and_ports_go_on_to_the_network() -> None:
    port = closed_port()
    with refuse_hosts(lambda shown: f"refused {shown}") as blocked:
        with pytest.raises(aiohttp.ClientConnectorError):
            asyncio.run(post(f"http://127.0.0.1:{port}/v1/chat/completions"))
    assert blocked == []


def test_intercept_refuses_what_it_cannot_serve_and_fails_the_block() -> None:
    with pytest.raises(UnmockedRequestError) as info, intercept():
        try:
            asyncio.run(post("https://api.openai.com/v1/chat/completions"))
        except UnmockedRequestError as refused:
            assert "went through aiohttp, which the mock cannot serve in process" in str(refused)
            assert "httpx_async_client" in str(refused)
    assert "POST https://api.openai.com/v1/chat/completions" in str(info.value)


def test_aiohttp_imported_after_the_refusal_began_is_refused_too() -> None:
    code = (
        "import asyncio, sys\n"
        "from mockllm import UnmockedRequestError, refuse_hosts\n"
        "assert 'aiohttp' not in sys.modules\n"
        "with refuse_hosts(lambda shown: 'refused ' + shown) as blocked:\n"
        "    import aiohttp\n"
        "    async def go():\n"
        "        async with aiohttp.ClientSession() as s, s.get('https://api.anthropic.com/v1/models'):\n"
        "            pass\n"
        "    try:\n"
        "        asyncio.run(go())\n"
        "    except UnmockedRequestError as e:\n"
        "        print(e)\n"
        "print(blocked, aiohttp.ClientSession._request.__module__)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "refused GET https://api.anthropic.com/v1/models",
        "['GET https://api.anthropic.com/v1/models'] aiohttp.client",
    ]
