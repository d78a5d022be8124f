"""Recording through a server: while one request is being forwarded to its upstream
(seconds, for a real model), the server answers its other requests — its health, other
sessions' model calls — at once (docs/recording.md)."""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from harness.plugin.recording import serve_in_thread
from mockllm import InstructionChain, MockLLM, RecordingSession
from mockllm.testing import Upstreams, load_recording

HOLD_S = 30  # the upstream's longest hold; the test releases it long before
PROMPT_WAIT_S = 5  # "at once": a reply the loop was free to send comes within this


def _completion(text: str) -> dict[str, Any]:
    message = {"role": "assistant", "content": text}
    return {
        "id": "chatcmpl-up",
        "object": "chat.completion",
        "model": "gpt-up",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
    }


def _event(text: str) -> bytes:
    chunk = {
        "id": "chatcmpl-up",
        "object": "chat.completion.chunk",
        "model": "gpt-up",
        "choices": [{"index": 0, "delta": {"content": text}}],
    }
    return f"data: {json.dumps(chunk)}\n\n".encode()


def _chunked(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


@contextlib.contextmanager
def held_upstream(release: threading.Event, *, after_done: bool = False) -> Iterator[str]:
    """An OpenAI-shaped upstream on loopback that holds each reply until ``release``: a
    whole reply before it starts; a stream after its first event, or (``after_done``)
    after its last, ``[DONE]``, before its body ends."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            request = json.loads(self.rfile.read(int(self.headers["content-length"])))
            if not request.get("stream"):
                release.wait(HOLD_S)
                body = json.dumps(_completion("Held, then sent.")).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            self.wfile.write(_chunked(_event("Held, ")))
            self.wfile.flush()
            if not after_done:
                release.wait(HOLD_S)
            self.wfile.write(_chunked(_event("then sent.") + b"data: [DONE]\n\n"))
            self.wfile.flush()
            if after_done:
                release.wait(HOLD_S)
            self.wfile.write(b"0\r\n\r\n")

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    # shutdown() waits for serve_forever's next poll: 0.5 s by default, every test.
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.02}, name="held-upstream", daemon=True
    )
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        release.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def _forwarded(base_url: str, stream: bool, first_seen: threading.Event) -> str:
    """The text of one model call through the recording server (the stream's deltas joined)."""
    body = {"model": "gpt-up", "stream": stream, "messages": [{"role": "user", "content": "Hold on."}]}
    with httpx.Client(base_url=base_url, headers={"authorization": "Bearer test"}, timeout=HOLD_S + 10) as client:
        if not stream:
            first_seen.set()
            return str(client.post("/v1/chat/completions", json=body).json()["choices"][0]["message"]["content"])
        text = []
        with client.stream("POST", "/v1/chat/completions", json=body) as reply:
            for line in reply.iter_lines():
                if line.startswith("data: {"):
                    text.append(json.loads(line[6:])["choices"][0]["delta"]["content"])
                    first_seen.set()
        return "".join(text)


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_a_request_being_forwarded_holds_none_of_the_servers_others(tmp_path: Path, stream: bool) -> None:
    release, first_seen = threading.Event(), threading.Event()
    with held_upstream(release) as upstream:
        recording = RecordingSession(tmp_path / "held.json", "all", upstreams=Upstreams.parse([upstream]))
        with serve_in_thread(MockLLM(recordings=recording)) as server, ThreadPoolExecutor(1) as pool:
            forwarding = pool.submit(_forwarded, server.base_url, stream, first_seen)
            try:
                assert first_seen.wait(PROMPT_WAIT_S)
                with httpx.Client(base_url=server.base_url, timeout=PROMPT_WAIT_S) as other:
                    assert other.get("/_mockllm/health").json() == {"status": "ok"}
                    session = other.post("/_mockllm/sessions", json={}).json()["path"]
                    prompt = InstructionChain(
                        instruction_chain=[{"messages": [{"text_message": {"text": "Meanwhile."}}]}]
                    )
                    call = {"model": "gpt-x", "messages": [{"role": "user", "content": prompt.tagged("Hi")}]}
                    answered = other.post(f"{session}/v1/chat/completions", json=call)
                # Answered while the upstream still held the forwarded reply.
                assert not forwarding.done()
                assert answered.json()["choices"][0]["message"]["content"] == "Meanwhile."
            finally:
                release.set()
            assert forwarding.result(timeout=HOLD_S + 10) == "Held, then sent."
    saved = recording.save()
    assert saved is not None
    (exchange,) = load_recording(saved).exchanges
    assert exchange.request.body["messages"] == [{"role": "user", "content": "Hold on."}]
    assert exchange.response.status == 200
    if stream:
        assert exchange.response.interrupted is None
        *chunks, done = [event.text for event in exchange.response.events or []]
        assert [json.loads(chunk)["choices"][0]["delta"]["content"] for chunk in chunks] == ["Held, ", "then sent."]
        assert done == "[DONE]"
    else:
        assert exchange.response.body["choices"][0]["message"]["content"] == "Held, then sent."


def test_a_stream_its_client_stopped_reading_at_done_is_saved_whole(tmp_path: Path) -> None:
    """The SDKs stop reading at ``[DONE]``, before the upstream's body ends, and the test
    then ends: the recording is saved once the server has read the stream to its end,
    every event kept, not before (when it would have lost the exchange)."""
    import openai

    release = threading.Event()
    with held_upstream(release, after_done=True) as upstream:
        recording = RecordingSession(tmp_path / "done.json", "all", upstreams=Upstreams.parse([upstream]))
        with serve_in_thread(MockLLM(recordings=recording)) as server, ThreadPoolExecutor(1) as pool:
            client = openai.OpenAI(base_url=server.base_url + "/v1", api_key="test", max_retries=0)
            stream = client.chat.completions.create(
                model="gpt-up", messages=[{"role": "user", "content": "Hold on."}], stream=True
            )
            text = "".join(chunk.choices[0].delta.content or "" for chunk in stream)
            assert text == "Held, then sent."
            saving = pool.submit(recording.save)
            try:
                # The upstream has not ended the body: the save waits for it.
                with pytest.raises(TimeoutError):
                    saving.result(timeout=0.15)
            finally:
                release.set()
            saved = saving.result(timeout=HOLD_S)
    assert saved is not None
    (exchange,) = load_recording(saved).exchanges
    assert exchange.response.interrupted is None
    assert [event.text for event in exchange.response.events or []][-1] == "[DONE]"


def test_a_stream_the_upstream_never_ends_fails_the_save_naming_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rather than write the file without the call, ``save`` says it did not write it."""
    import openai

    from mockllm import RecordingError
    from mockllm._recording import session

    monkeypatch.setattr(session, "SETTLE_TIMEOUT_S", 0.1)
    release = threading.Event()
    with held_upstream(release, after_done=True) as upstream:
        recording = RecordingSession(tmp_path / "open.json", "all", upstreams=Upstreams.parse([upstream]))
        with serve_in_thread(MockLLM(recordings=recording)) as server:
            client = openai.OpenAI(base_url=server.base_url + "/v1", api_key="test", max_retries=0)
            stream = client.chat.completions.create(
                model="gpt-up", messages=[{"role": "user", "content": "Hold on."}], stream=True
            )
            assert "".join(chunk.choices[0].delta.content or "" for chunk in stream) == "Held, then sent."
            try:
                with pytest.raises(RecordingError, match="open.json: not written: 1 forwarded stream"):
                    recording.save()
            finally:
                release.set()
    assert not (tmp_path / "open.json").exists()
