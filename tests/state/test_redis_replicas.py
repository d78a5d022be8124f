"""Two server processes on one real Redis act as one mock (``serve --state redis://…``):
a script, a session, a Responses conversation (the openai SDK's
``previous_response_id``) and an attempt count made through one are seen by the other.
A Redis killed mid-run gives JSON 503s naming it; restarted, the mock recovers."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import openai
import pytest

from mockllm._cli import main
from tests.mockllm.server_support import ServerProcess, launch
from tests.state.redis_support import RedisServer, free_port, redis_binary

httpx2 = pytest.importorskip("httpx2", reason="httpx2 is not installed (the httpx2 extra)")

CHAT = "/v1/chat/completions"


def start_replicas(redis: RedisServer, tmp: Path) -> list[ServerProcess]:
    started = [launch(tmp, "--port", "0", "--state", redis.url) for _ in range(2)]
    for server in started:
        server.wait_ready()
    return started


def stop_replicas(started: list[ServerProcess]) -> None:
    for server in started:
        assert server.stop() == 0, server.errors


# The tests share one Redis and one pair of replicas (a server start costs about half a
# second of CPU), reset through a replica before each test; the test that stops the Redis
# starts it again (empty) before it ends, whatever happened.
@pytest.fixture(scope="module")
def shared_redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    server = RedisServer(redis_binary(), free_port(), tmp_path_factory.mktemp("redis")).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def shared_replicas(shared_redis: RedisServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    started = start_replicas(shared_redis, tmp_path_factory.mktemp("replicas"))
    try:
        yield started[0].base_url, started[1].base_url
    finally:
        stop_replicas(started)


@pytest.fixture
def replicas(shared_replicas: tuple[str, str], client: httpx2.Client) -> tuple[str, str]:
    assert client.post(f"{shared_replicas[0]}/_mockllm/reset").status_code == 200
    return shared_replicas


@pytest.fixture
def client() -> Iterator[httpx2.Client]:
    with httpx2.Client(timeout=30) as opened:
        yield opened


def chat_body(text: str) -> dict:
    return {"model": "gpt-4o", "messages": [{"role": "user", "content": text}]}


def test_a_script_and_a_session_made_on_one_replica_are_served_by_the_other(
    replicas: tuple[str, str], client: httpx2.Client
) -> None:
    a, b = replicas
    chain = {"instruction_chain": [{"id": "hi", "messages": [{"text_message": {"text": "From A."}}]}]}
    registered = client.post(f"{a}/_mockllm/scripts", json={**chain, "match": {"text": "hello"}})
    assert registered.status_code == 201
    reply = client.post(f"{b}{CHAT}", json=chat_body("hello there"))
    assert reply.status_code == 200 and reply.json()["choices"][0]["message"]["content"] == "From A."
    assert [e["script_id"] for e in client.get(f"{a}/_mockllm/requests").json()] == [registered.json()["id"]]

    session = client.post(f"{a}/_mockllm/sessions", json={"seed": 3}).json()["path"]
    session_chain = {"instruction_chain": [{"id": "s", "messages": [{"text_message": {"text": "In session."}}]}]}
    assert client.post(f"{b}{session}/_mockllm/scripts", json=session_chain).status_code == 201
    reply = client.post(f"{a}{session}{CHAT}", json=chat_body("anything"))
    assert reply.json()["choices"][0]["message"]["content"] == "In session."
    assert len(client.get(f"{b}{session}/_mockllm/requests").json()) == 1
    assert len(client.get(f"{b}/_mockllm/requests").json()) == 1  # the server's own journal is apart
    assert client.delete(f"{b}{session}").status_code == 200
    assert client.post(f"{a}{session}{CHAT}", json=chat_body("anything")).status_code == 404


def test_a_responses_conversation_and_an_attempt_count_span_both_replicas(
    replicas: tuple[str, str], client: httpx2.Client
) -> None:
    a, b = replicas
    chain = {
        "instruction_chain": [
            {"id": "one", "messages": [{"text_message": {"text": "First answer."}}]},
            {"id": "two", "messages": [{"text_message": {"text": "Second answer."}}]},
        ],
        "match": {"text": "conversation"},
    }
    assert client.post(f"{a}/_mockllm/scripts", json=chain).status_code == 201
    on_a = openai.OpenAI(api_key="test", base_url=f"{a}/v1", http_client=client, max_retries=0)
    on_b = openai.OpenAI(api_key="test", base_url=f"{b}/v1", http_client=client, max_retries=0)
    first = on_a.responses.create(model="gpt-4o", input="start the conversation")
    second = on_b.responses.create(model="gpt-4o", input="go on", previous_response_id=first.id)
    assert (first.output_text, second.output_text) == ("First answer.", "Second answer.")

    flaky = {
        "instruction_chain": [
            {"id": "flaky", "error": {"status": 529, "times": 1}, "messages": [{"text_message": {"text": "Ok."}}]}
        ],
        "match": {"text": "flaky"},
    }
    assert client.post(f"{b}/_mockllm/scripts", json=flaky).status_code == 201
    body = chat_body("a flaky call")  # plain httpx: no retry-count header, so the mock counts repeats
    assert client.post(f"{a}{CHAT}", json=body).status_code == 529
    retried = client.post(f"{b}{CHAT}", json=body)
    assert retried.status_code == 200 and retried.json()["choices"][0]["message"]["content"] == "Ok."


def test_a_redis_that_goes_away_gives_503s_naming_it_and_the_mock_recovers(
    replicas: tuple[str, str], client: httpx2.Client, shared_redis: RedisServer
) -> None:
    a, b = replicas
    # B has read the scripts (and keeps them parsed) before Redis goes away.
    before = {"instruction_chain": [{"id": "before", "messages": [{"text_message": {"text": "Before."}}]}]}
    assert client.post(f"{a}/_mockllm/scripts", json=before).status_code == 201
    assert client.post(f"{b}{CHAT}", json=chat_body("hello")).json()["choices"][0]["message"]["content"] == "Before."
    shared_redis.stop()
    try:
        for base in (a, b):
            started = time.monotonic()
            chat_reply = client.post(f"{base}{CHAT}", json=chat_body("hello"))
            assert time.monotonic() - started < 10  # never a hang
            assert chat_reply.status_code == 503, chat_reply.text
            error = chat_reply.json()["error"]
            assert set(error) == {"message", "type", "param", "code"}  # OpenAI's error shape
            assert shared_redis.url in error["message"] and "--state" in error["message"]
            anthropic_reply = client.post(
                f"{base}/v1/messages",
                json={"model": "claude-x", "max_tokens": 16, "messages": [{"role": "user", "content": "hi"}]},
            )
            assert anthropic_reply.status_code == 503 and anthropic_reply.json()["type"] == "error"
            listing = client.get(f"{base}/_mockllm/scripts")
            assert listing.status_code == 503 and shared_redis.url in listing.json()["error"]["message"]
    finally:
        shared_redis.start()  # empty: it kept nothing (--save "")
    # What B kept parsed is gone with the Redis it came from: B serves the new script.
    chain = {"instruction_chain": [{"id": "back", "messages": [{"text_message": {"text": "Back again."}}]}]}
    assert client.post(f"{a}/_mockllm/scripts", json=chain).status_code == 201
    reply = client.post(f"{b}{CHAT}", json=chat_body("hello"))
    assert reply.status_code == 200 and reply.json()["choices"][0]["message"]["content"] == "Back again."


def test_an_unreachable_redis_is_a_startup_error_naming_the_option(capsys: pytest.CaptureFixture[str]) -> None:
    # In process: a startup error's exit from a process is test_workers.py's corrupt
    # SQLite file's test (the same path: the state opened before anything is served).
    redis_binary()  # the same skips as the other tests: no redis package, no test
    url = f"redis://127.0.0.1:{free_port()}/0"  # a port nothing listens on, as a Redis that is down
    assert main(["serve", "--port", "0", "--state", url]) == 2
    errors = capsys.readouterr().err
    assert f"--state {url}" in errors and "cannot reach Redis" in errors
    assert "Traceback" not in errors
