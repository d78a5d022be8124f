"""Host interception: default SDK clients, with no base_url and no http_client, are
served by the mock; other hosts pass through; patches come out on exit.

No request here leaves the machine: the only real sockets are to a loopback server
started by the ``loopback_url`` fixture.
"""

from __future__ import annotations

import asyncio
import http.server
import json
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from mockllm import InstructionChain
from mockllm._engine import MockLLM
from mockllm._intercept import intercept

# This file drives the httpx2 generation of the SDKs (openai>=3, anthropic>=1); the
# httpx-only path is tested in tests/test_optional_dependencies.py and the lean CI run.
httpx2 = pytest.importorskip("httpx2", reason="httpx2 is not installed (the httpx2 extra)")
openai = pytest.importorskip("openai", minversion="3", reason="openai>=3 (built on httpx2) is not installed")
anthropic = pytest.importorskip("anthropic", minversion="1", reason="anthropic>=1 (built on httpx2) is not installed")

ORIGINAL_HTTPX2_SYNC = httpx2.HTTPTransport.handle_request
ORIGINAL_HTTPX2_ASYNC = httpx2.AsyncHTTPTransport.handle_async_request
ORIGINAL_HTTPX_SYNC = httpx.HTTPTransport.handle_request
ORIGINAL_HTTPX_ASYNC = httpx.AsyncHTTPTransport.handle_async_request

GREETING = "Hello from the mock"
WORDS = "alpha beta gamma delta epsilon zeta"


def script(text: str, **instruction: Any) -> str:
    """A user message scripting one assistant turn that says ``text``."""
    step = {"id": "only", "messages": [{"text_message": {"text": text}}], **instruction}
    return InstructionChain(instruction_chain=[step]).tagged("prompt")


def chat_body(text: str = GREETING, **instruction: Any) -> dict[str, Any]:
    return {"model": "gpt-mock", "messages": [{"role": "user", "content": script(text, **instruction)}]}


def assert_patches_removed() -> None:
    assert httpx2.HTTPTransport.handle_request is ORIGINAL_HTTPX2_SYNC
    assert httpx2.AsyncHTTPTransport.handle_async_request is ORIGINAL_HTTPX2_ASYNC
    assert httpx.HTTPTransport.handle_request is ORIGINAL_HTTPX_SYNC
    assert httpx.AsyncHTTPTransport.handle_async_request is ORIGINAL_HTTPX_ASYNC


@pytest.fixture(autouse=True)
def _no_patch_leaks() -> Iterator[None]:
    assert_patches_removed()
    yield
    assert_patches_removed()


class _LoopbackHandler(http.server.BaseHTTPRequestHandler):
    def _reply(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        self.rfile.read(length)
        body = json.dumps({"served_by": "loopback", "path": self.path}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _reply

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def loopback_url() -> Iterator[str]:
    """A tiny HTTP server on 127.0.0.1 that answers every request with a JSON marker."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _LoopbackHandler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


# -- official SDKs, default clients ----------------------------------------------------


def test_openai_sync_chat_completion_is_served_by_the_mock() -> None:
    with intercept() as mock, openai.OpenAI(api_key="test", max_retries=0) as client:
        reply = client.chat.completions.create(
            model="gpt-mock", messages=[{"role": "user", "content": script(GREETING)}]
        )
    assert reply.choices[0].message.content == GREETING
    [entry] = mock.journal
    assert (entry.path, entry.protocol, entry.model, entry.stream) == (
        "/v1/chat/completions",
        "openai-chat",
        "gpt-mock",
        False,
    )
    assert entry.instruction_id == "only"


def test_openai_sync_chat_stream_is_served_by_the_mock() -> None:
    with intercept() as mock, openai.OpenAI(api_key="test", max_retries=0) as client:
        stream = client.chat.completions.create(
            model="gpt-mock",
            messages=[{"role": "user", "content": script(WORDS, chunk_words=1)}],
            stream=True,
        )
        deltas = [c.choices[0].delta.content for c in stream if c.choices and c.choices[0].delta.content]
    assert "".join(deltas) == WORDS
    assert len(deltas) > 1
    assert [(e.path, e.stream) for e in mock.journal] == [("/v1/chat/completions", True)]


def test_openai_sync_responses_api_is_served_by_the_mock() -> None:
    with intercept() as mock, openai.OpenAI(api_key="test", max_retries=0) as client:
        response = client.responses.create(model="gpt-mock", input=script(GREETING))
    assert response.output_text == GREETING
    assert [e.protocol for e in mock.journal] == ["openai-responses"]


def test_openai_async_chat_streaming_and_not_are_served_by_the_mock() -> None:
    async def run() -> tuple[str | None, str]:
        async with openai.AsyncOpenAI(api_key="test", max_retries=0) as client:
            reply = await client.chat.completions.create(
                model="gpt-mock", messages=[{"role": "user", "content": script(GREETING)}]
            )
            stream = await client.chat.completions.create(
                model="gpt-mock", messages=[{"role": "user", "content": script(WORDS)}], stream=True
            )
            text = "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])
        return reply.choices[0].message.content, text

    with intercept() as mock:
        content, streamed = asyncio.run(run())
    assert (content, streamed) == (GREETING, WORDS)
    assert [e.stream for e in mock.journal] == [False, True]


def test_anthropic_sync_messages_streaming_and_not_are_served_by_the_mock() -> None:
    with intercept() as mock, anthropic.Anthropic(api_key="test", max_retries=0) as client:
        message = client.messages.create(
            model="claude-mock-1", max_tokens=100, messages=[{"role": "user", "content": script(GREETING)}]
        )
        with client.messages.stream(
            model="claude-mock-1",
            max_tokens=100,
            messages=[{"role": "user", "content": script(WORDS, chunk_words=1)}],
        ) as stream:
            streamed = stream.get_final_text()
    assert message.content[0].type == "text"
    assert message.content[0].text == GREETING
    assert streamed == WORDS
    assert [(e.path, e.protocol, e.model, e.stream) for e in mock.journal] == [
        ("/v1/messages", "anthropic-messages", "claude-mock-1", False),
        ("/v1/messages", "anthropic-messages", "claude-mock-1", True),
    ]


def test_anthropic_async_messages_streaming_and_not_are_served_by_the_mock() -> None:
    async def run() -> tuple[str, str]:
        async with anthropic.AsyncAnthropic(api_key="test", max_retries=0) as client:
            message = await client.messages.create(
                model="claude-mock-1",
                max_tokens=100,
                messages=[{"role": "user", "content": script(GREETING)}],
            )
            async with client.messages.stream(
                model="claude-mock-1", max_tokens=100, messages=[{"role": "user", "content": script(WORDS)}]
            ) as stream:
                streamed = await stream.get_final_text()
        block = message.content[0]
        assert block.type == "text"
        return block.text, streamed

    with intercept() as mock:
        assert asyncio.run(run()) == (GREETING, WORDS)
    assert [e.stream for e in mock.journal] == [False, True]


def test_openai_sdk_with_a_legacy_httpx_client_is_served() -> None:
    with intercept(clients=("httpx",)) as mock, httpx.Client() as http_client:
        client = openai.OpenAI(api_key="test", max_retries=0, http_client=http_client)
        reply = client.chat.completions.create(
            model="gpt-mock", messages=[{"role": "user", "content": script(GREETING)}]
        )
    assert reply.choices[0].message.content == GREETING
    assert [e.path for e in mock.journal] == ["/v1/chat/completions"]


# -- plain clients -----------------------------------------------------------------------


def test_plain_httpx_client_is_served_by_the_httpx_patch() -> None:
    with intercept(clients=("httpx",)) as mock, httpx.Client() as client:
        response = client.post("https://api.openai.com/v1/chat/completions", json=chat_body())
    assert response.status_code == 200
    assert response.json()["choices"][0]["message"]["content"] == GREETING
    assert response.headers["x-mockllm-protocol"] == "openai-chat"
    assert [e.path for e in mock.journal] == ["/v1/chat/completions"]


def test_plain_httpx2_client_is_served_by_the_httpx2_patch() -> None:
    with intercept(clients=("httpx2",)) as mock, httpx2.Client() as client:
        response = client.post("https://api.openai.com/v1/chat/completions", json=chat_body())
    assert response.status_code == 200
    assert response.json()["choices"][0]["message"]["content"] == GREETING
    assert [e.path for e in mock.journal] == ["/v1/chat/completions"]


@pytest.mark.parametrize("library", [httpx, httpx2], ids=["httpx", "httpx2"])
def test_paced_stream_reaches_sync_and_async_clients_of_either_library(library: Any) -> None:
    body = {**chat_body(WORDS, chunk_words=2, timing={"chunk_ms": 1}), "stream": True}
    url = "https://api.openai.com/v1/chat/completions"

    def sync_events() -> list[str]:
        with library.Client() as client, client.stream("POST", url, json=body) as response:
            return [line for line in response.iter_lines() if line.startswith("data:")]

    async def async_events() -> list[str]:
        async with library.AsyncClient() as client, client.stream("POST", url, json=body) as response:
            return [line async for line in response.aiter_lines() if line.startswith("data:")]

    with intercept() as mock:
        from_sync = sync_events()
        from_async = asyncio.run(async_events())
    assert from_sync == from_async
    assert from_sync[-1] == "data: [DONE]"
    deltas = [json.loads(line[5:])["choices"][0]["delta"].get("content") for line in from_sync[:-1]]
    assert "".join(d for d in deltas if d) == WORDS
    assert [e.stream for e in mock.journal] == [True, True]


@pytest.mark.parametrize("library", [httpx, httpx2], ids=["httpx", "httpx2"])
def test_unrouted_path_on_an_intercepted_host_gets_the_engine_404(library: Any) -> None:
    with intercept(allow_fallback=True) as mock, library.Client() as client:  # the 404 is the point
        response = client.get("https://api.anthropic.com/v1/files")
    assert response.status_code == 404
    assert "Unknown route GET /v1/files" in response.json()["error"]["message"]
    assert [(e.path, e.status) for e in mock.journal] == [("/v1/files", 404)]


# -- pass-through ----------------------------------------------------------------------


@pytest.mark.parametrize("library", [httpx, httpx2], ids=["httpx", "httpx2"])
def test_other_hosts_pass_through_to_the_network(library: Any, loopback_url: str) -> None:
    async def post_async() -> Any:
        async with library.AsyncClient() as client:
            return (await client.post(f"{loopback_url}/v1/chat/completions", json=chat_body())).json()

    with intercept() as mock, library.Client() as client:
        from_sync = client.post(f"{loopback_url}/v1/chat/completions", json=chat_body()).json()
        from_async = asyncio.run(post_async())
    expected = {"served_by": "loopback", "path": "/v1/chat/completions"}
    assert from_sync == from_async == expected
    assert mock.journal == []


def test_openai_sdk_pointed_at_another_host_is_not_intercepted(loopback_url: str) -> None:
    with (
        intercept() as mock,
        openai.OpenAI(api_key="test", base_url=f"{loopback_url}/v1", max_retries=0) as client,
    ):
        raw = client.chat.completions.with_raw_response.create(
            model="gpt-mock", messages=[{"role": "user", "content": script(GREETING)}]
        )
    assert json.loads(raw.text) == {"served_by": "loopback", "path": "/v1/chat/completions"}
    assert mock.journal == []


def test_hosts_limits_what_is_intercepted(loopback_url: str) -> None:
    with intercept(hosts=("127.0.0.1",)) as mock, httpx2.Client() as client:
        response = client.post(f"{loopback_url}/v1/chat/completions", json=chat_body())
    assert response.json()["choices"][0]["message"]["content"] == GREETING
    assert len(mock.journal) == 1


# -- lifecycle ---------------------------------------------------------------------------


def test_patches_are_in_place_only_inside_the_block() -> None:
    with intercept():
        assert httpx2.HTTPTransport.handle_request is not ORIGINAL_HTTPX2_SYNC
        assert httpx2.AsyncHTTPTransport.handle_async_request is not ORIGINAL_HTTPX2_ASYNC
        assert httpx.HTTPTransport.handle_request is not ORIGINAL_HTTPX_SYNC
        assert httpx.AsyncHTTPTransport.handle_async_request is not ORIGINAL_HTTPX_ASYNC
    assert_patches_removed()


def test_disabled_library_is_not_patched() -> None:
    with intercept(clients=("httpx",)):
        assert httpx2.HTTPTransport.handle_request is ORIGINAL_HTTPX2_SYNC
    with intercept(clients=("httpx2",)):
        assert httpx.HTTPTransport.handle_request is ORIGINAL_HTTPX_SYNC


def test_nested_interceptions_innermost_wins_and_outer_resumes() -> None:
    outer_mock, inner_mock, anthropic_only = MockLLM(), MockLLM(), MockLLM()
    url = "https://api.openai.com/v1/chat/completions"
    with intercept(outer_mock) as outer, httpx2.Client() as client2, httpx.Client() as client1:
        assert outer is outer_mock
        with intercept(inner_mock):
            client2.post(url, json=chat_body())
            client1.post(url, json=chat_body())
            with intercept(anthropic_only, hosts=("api.anthropic.com",)):
                client2.post(url, json=chat_body())
        assert httpx2.HTTPTransport.handle_request is not ORIGINAL_HTTPX2_SYNC
        client2.post(url, json=chat_body())
        client1.post(url, json=chat_body())
    assert len(inner_mock.journal) == 3
    assert len(outer_mock.journal) == 2
    assert anthropic_only.journal == []


def test_exception_inside_the_block_still_restores() -> None:
    with pytest.raises(RuntimeError, match="boom"), intercept(), intercept(MockLLM()):
        raise RuntimeError("boom")
    assert_patches_removed()


def test_interceptions_may_end_out_of_order_across_threads() -> None:
    entered, release = threading.Event(), threading.Event()
    thread_mock = MockLLM()
    results: list[int] = []

    def in_thread() -> None:
        with intercept(thread_mock), httpx2.Client() as client:
            entered.set()
            release.wait(timeout=30)
            results.append(client.post("https://api.openai.com/v1/chat/completions", json=chat_body()).status_code)

    with intercept():
        worker = threading.Thread(target=in_thread)
        worker.start()
        assert entered.wait(timeout=30)
    # The main thread's interception ended first; the thread's still serves.
    assert httpx2.HTTPTransport.handle_request is not ORIGINAL_HTTPX2_SYNC
    release.set()
    worker.join(timeout=30)
    assert results == [200]
    assert len(thread_mock.journal) == 1


# -- misuse ------------------------------------------------------------------------------


def test_a_single_host_string_is_rejected() -> None:
    with (
        pytest.raises(TypeError, match=r"hosts must be a tuple.*'api\.openai\.com'"),
        intercept(hosts="api.openai.com"),
    ):
        pass


def test_a_url_as_host_is_rejected() -> None:
    with (
        pytest.raises(ValueError, match=r"bare host names.*'https://api\.openai\.com'"),
        intercept(hosts=("https://api.openai.com",)),
    ):
        pass


def test_intercepting_neither_library_is_rejected() -> None:
    with (
        pytest.raises(ValueError, match="nothing would be intercepted"),
        intercept(clients=()),
    ):
        pass


@pytest.mark.parametrize(
    ("clients", "error", "message"),
    [
        (("httpx", "requests"), ValueError, r"clients names 'requests'; intercept covers \['httpx', 'httpx2'\]"),
        ("httpx2", TypeError, r"clients must be a tuple of client library names"),
    ],
)
def test_an_unknown_client_library_is_rejected(clients: Any, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message), intercept(clients=clients):
        pass
    assert_patches_removed()


def test_a_respx_mock_of_another_host_still_sees_its_requests() -> None:
    respx = pytest.importorskip("respx", reason="respx is not installed (a test dependency)")
    with respx.mock(assert_all_called=True) as router, intercept(clients=("httpx",)) as mock, httpx.Client() as client:
        router.get("https://example.test/ping").respond(200, text="pong from respx")
        served = client.post("https://api.openai.com/v1/chat/completions", json=chat_body())
        mocked = client.get("https://example.test/ping")
    assert served.json()["choices"][0]["message"]["content"] == GREETING
    assert mocked.text == "pong from respx"
    assert [e.path for e in mock.journal] == ["/v1/chat/completions"]
