"""The recording proxy's own HTTP/1.1: what an upstream that breaks, closes or frames
its reply oddly does to the client and to the recording. The proxy and a raw upstream
(hand-written bytes, no framework) run on one event loop in a thread of the test."""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import json
import socket
import threading
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import httpx
import pytest

from mockllm._recording.http1 import ChunkedDecoder, ProtocolError
from mockllm._recording.proxy import FLUSH_PATH, RecordingProxy, Upstreams
from mockllm._recording.recorder import Recorder

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]
CHAT = "/v1/chat/completions"
BODY = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
EVENTS = [b'data: {"a":1}\n\n', b'data: {"a":2}\n\n', b"data: [DONE]\n\n"]


class Upstream:
    """A raw upstream: ``handler`` answers each connection; counts connections."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.connections = 0

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            await self.handler(reader, writer)
        finally:
            writer.close()


@contextlib.contextmanager
def proxied(tmp_path: Path, handler: Handler | None) -> Iterator[tuple[str, Upstream, Recorder]]:
    """(the proxy's URL, the upstream, the recorder); an upstream of None is a closed port."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    upstream = Upstream(handler or (lambda r, w: asyncio.sleep(0)))
    recorder = Recorder(tmp_path / "rec")

    async def start() -> tuple[asyncio.Server, asyncio.Server | None, str, RecordingProxy]:
        if handler is None:
            with socket.socket() as free:
                free.bind(("127.0.0.1", 0))
                up_url, up_server = f"http://127.0.0.1:{free.getsockname()[1]}", None
        else:
            up_server = await asyncio.start_server(upstream.serve, "127.0.0.1", 0)
            up_url = f"http://127.0.0.1:{up_server.sockets[0].getsockname()[1]}"
        proxy = RecordingProxy(Upstreams(up_url), recorder)
        server = await asyncio.start_server(proxy.handle, "127.0.0.1", 0)
        return server, up_server, f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}", proxy

    server, up_server, url, proxy = asyncio.run_coroutine_threadsafe(start(), loop).result(10)
    try:
        yield url, upstream, recorder
    finally:

        async def stop() -> None:
            for each in (server, up_server):
                if each is not None:
                    each.close()
            tasks = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            proxy.pool.close()
            await asyncio.sleep(0.01)  # the closed transports let go of their sockets

        asyncio.run_coroutine_threadsafe(stop(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()
        recorder.close()


async def read_request(reader: asyncio.StreamReader) -> bytes | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return None
    length = next(
        (int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")), 0
    )
    return head + await reader.readexactly(length)


def reply_json(value: dict, *, close: bool = False) -> bytes:
    body = json.dumps(value).encode()
    extra = b"connection: close\r\n" if close else b""
    return b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n%bcontent-length: %d\r\n\r\n%b" % (
        extra,
        len(body),
        body,
    )


def recorded(recorder: Recorder) -> dict:
    recorder.flush()
    (path,) = set(recorder.written)
    return json.loads(path.read_text())["exchanges"][-1]


def test_a_stream_the_upstream_breaks_is_broken_for_the_client_and_recorded_as_interrupted(tmp_path: Path) -> None:
    async def breaks(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n")
        for event in EVENTS[:2]:
            writer.write(b"%x\r\n%b\r\n" % (len(event), event))
            await writer.drain()
            await asyncio.sleep(0.01)
        # closed here: no last chunk

    with proxied(tmp_path, breaks) as (url, _, recorder), httpx.Client() as client:
        got = []
        with pytest.raises(httpx.RemoteProtocolError):
            with client.stream("POST", url + CHAT, json={**BODY, "stream": True}) as response:
                for piece in response.iter_raw():
                    got.append(piece)
        assert b"".join(got) == b"".join(EVENTS[:2])
        exchange = recorded(recorder)
    assert "the upstream stream broke" in exchange["response"]["interrupted"]
    assert [event["data"] for event in exchange["response"]["events"]] == [{"a": 1}, {"a": 2}]


def test_an_unreachable_upstream_is_a_502_naming_it_and_nothing_is_recorded(tmp_path: Path) -> None:
    with proxied(tmp_path, None) as (url, _, recorder), httpx.Client() as client:
        response = client.post(url + CHAT, json=BODY)
        recorder.flush()
        assert recorder.written == []
    assert response.status_code == 502
    assert "could not reach the upstream http://127.0.0.1:" in response.json()["error"]["message"]


def test_the_upstream_connection_is_kept_alive_and_a_stale_one_replaced(tmp_path: Path) -> None:
    served = []

    async def two_then_close(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        # Answers two requests on a connection, then closes it while it is idle, as an
        # upstream's keep-alive timeout does; the proxy's next request must still go through.
        for _ in range(2):
            if await read_request(reader) is None:
                return
            served.append(1)
            writer.write(reply_json({"n": len(served)}))
            await writer.drain()

    with proxied(tmp_path, two_then_close) as (url, upstream, _), httpx.Client() as client:
        answers = [client.post(url + CHAT, json={**BODY, "n": i}).json()["n"] for i in range(5)]
    assert answers == [1, 2, 3, 4, 5]
    assert upstream.connections == 3


def test_flush_answers_once_every_replied_exchange_is_on_disk(tmp_path: Path) -> None:
    async def answers(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while await read_request(reader) is not None:
            writer.write(reply_json({"ok": True}))
            await writer.drain()

    with proxied(tmp_path, answers) as (url, _, _), httpx.Client() as client:
        client.post(url + CHAT, json=BODY).raise_for_status()
        flushed = client.post(url + FLUSH_PATH).json()
        (written,) = flushed["written"]
        assert json.loads(Path(written).read_text())["exchanges"][0]["response"]["body"] == {"ok": True}
    assert flushed["refused"] == []


def test_a_chunked_request_body_is_forwarded_and_recorded(tmp_path: Path) -> None:
    seen = []

    async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        request = await read_request(reader)
        assert request is not None
        seen.append(request)
        writer.write(reply_json({"ok": True}, close=True))

    def pieces() -> Iterator[bytes]:
        text = json.dumps(BODY).encode()
        yield text[:10]
        yield text[10:]

    with proxied(tmp_path, echo) as (url, _, recorder), httpx.Client() as client:
        assert client.post(url + CHAT, content=pieces()).json() == {"ok": True}
        exchange = recorded(recorder)
    assert seen[0].endswith(json.dumps(BODY).encode())
    assert b"content-length: %d" % len(json.dumps(BODY)) in seen[0]
    assert exchange["request"]["body"] == BODY


def test_a_request_that_is_not_http_gets_a_400_saying_why(tmp_path: Path) -> None:
    with proxied(tmp_path, None) as (url, _, _):
        host, port = url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=10) as sock:
            sock.sendall(b"HELLO\r\nbroken header line\r\n\r\n")
            answer = sock.recv(65536)
    assert answer.startswith(b"HTTP/1.1 400 Bad Request")
    assert b"malformed header line" in answer


def test_a_gzipped_reply_reaches_the_client_as_sent_and_is_recorded_plain(tmp_path: Path) -> None:
    body = json.dumps({"ok": "zipped"}).encode()
    zipped = gzip.compress(body)

    async def gzips(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-encoding: gzip\r\n"
            b"content-length: %d\r\nconnection: close\r\n\r\n%b" % (len(zipped), zipped)
        )

    with proxied(tmp_path, gzips) as (url, _, recorder), httpx.Client() as client:
        assert client.post(url + CHAT, json=BODY).json() == {"ok": "zipped"}
        exchange = recorded(recorder)
    assert exchange["response"]["body"] == {"ok": "zipped"}


def test_a_chunked_body_is_taken_apart_however_its_bytes_are_cut() -> None:
    sent = b"5;ext=1\r\nhello\r\n1\r\n \r\n6\r\nworld!\r\n0\r\ntrailer: x\r\n\r\n"
    for cut in range(1, len(sent)):
        decoder = ChunkedDecoder()
        body = decoder.feed(sent[:cut]) + decoder.feed(sent[cut:])
        assert (body, decoder.done, decoder.extra) == (b"hello world!", True, b"")
    with pytest.raises(ProtocolError, match="chunk longer than its size line"):
        ChunkedDecoder().feed(b"2\r\nabc\r\n")


def test_a_stream_reaches_the_client_framed_as_the_upstream_framed_it(tmp_path: Path) -> None:
    body = b"".join(EVENTS)

    async def one_write(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while await read_request(reader) is not None:
            # The last event and the end of the body in one write: the client must get them together
            # (an SDK closes the response at [DONE]; a body end still on its way costs the connection).
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n")
            writer.write(b"%x\r\n%b\r\n" % (len(EVENTS[0]), EVENTS[0]))
            await writer.drain()
            await asyncio.sleep(0.01)
            rest = b"".join(EVENTS[1:])
            writer.write(b"%x\r\n%b\r\n0\r\n\r\n" % (len(rest), rest))
            await writer.drain()

    with proxied(tmp_path, one_write) as (url, upstream, recorder), httpx.Client() as client:
        for _ in range(3):
            with client.stream("POST", url + CHAT, json={**BODY, "stream": True}) as response:
                assert response.headers["transfer-encoding"] == "chunked"
                assert b"".join(response.iter_raw()) == body
        exchange = recorded(recorder)
    assert upstream.connections == 1
    assert [event.get("data", event.get("text")) for event in exchange["response"]["events"]] == [
        {"a": 1},
        {"a": 2},
        "[DONE]",
    ]


def test_a_repeated_request_is_appended_only_when_its_reply_changes(tmp_path: Path) -> None:
    replies = [{"n": 1}, {"n": 1}, {"n": 2}, {"n": 2}, {"n": 1}]

    async def answers(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while await read_request(reader) is not None:
            writer.write(reply_json(replies.pop(0)))
            await writer.drain()

    with proxied(tmp_path, answers) as (url, _, recorder), httpx.Client() as client:
        for _ in range(5):
            client.post(url + CHAT, json=BODY).raise_for_status()
        recorder.flush()
        (path,) = set(recorder.written)
    bodies = [exchange["response"]["body"] for exchange in json.loads(path.read_text())["exchanges"]]
    assert bodies == [{"n": 1}, {"n": 2}, {"n": 1}]
