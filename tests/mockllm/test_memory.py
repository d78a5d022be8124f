"""Peak memory of one request is bounded whatever it scripts, a stream is rendered as it
is sent, and reset gives memory back (issue 16). Read from the server subprocess's
/proc/<pid>/status: VmHWM (peak resident set) and VmRSS.

The tests share two servers (a start costs about half a second of CPU): the plugin's
session server (``serve --port 0 --seed 0``, which every worker starts for the door tests)
and this module's, whose output cap is raised. Each test first resets the server's peak
to its current resident set (``/proc/<pid>/clear_refs``), so that the peak it reads is its
own requests'. What an earlier test left resident is bounded by that test's own assertions."""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from harness.plugin.fixtures import MockLLMServer
from mockllm import Limits
from mockllm._parsing import MAX_VALUES
from tests.mockllm.bulk_scripts import bulk_script
from tests.mockllm.server_support import PATHS, PROTOCOLS, fresh_peak, launch, script, status_kib, user_body

httpx2 = pytest.importorskip("httpx2", reason="httpx2 is not installed (the httpx2 extra)")

MIB = 1024 * 1024


@dataclass(frozen=True)
class Served:
    """A server process whose memory a test reads: its URL and its PID."""

    base_url: str
    pid: int


@pytest.fixture
def server(mockllm_server_process: MockLLMServer) -> Served:
    """The plugin's session server: the mock's default caps."""
    return Served(mockllm_server_process.base_url, mockllm_server_process.pid)


@pytest.fixture(scope="module")
def long_stream_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """A server whose output cap is raised far past the default, so that a stream dwarfs
    the server's own memory."""
    started = launch(tmp_path_factory.mktemp("memory"), "--port", "0", "--max-output-bytes", str(256 * MIB))
    try:
        started.wait_ready()
        yield Served(started.base_url, started.proc.pid)
    finally:
        started.stop()


def largest_allowed(stream: bool) -> dict[str, object]:
    """A script just under the 8 MiB output cap: the most one request may make."""
    words = 19_000 if stream else 680_000
    per_message = 100_000
    messages = [{"text_message": {"length": min(per_message, words - i)}} for i in range(0, words, per_message)]
    return user_body("openai-chat", script({"id": "max", "messages": messages}), stream=stream)


@pytest.mark.parametrize("stream", [False, True])
def test_the_largest_reply_allowed_stays_under_256_mb_and_reset_gives_memory_back(server: Served, stream: bool) -> None:
    with httpx2.Client(base_url=server.base_url, timeout=120) as http:
        assert http.get("/_mockllm/health").status_code == 200
        baseline = fresh_peak(server.pid)
        for _ in range(3):
            reply = http.post(
                PATHS["openai-chat"],
                content=json.dumps(largest_allowed(stream)).encode(),
                headers={"content-type": "application/json"},
            )
            assert reply.status_code == 200
            assert "x-mockllm-fallback" not in reply.headers  # really made, not refused
            assert len(reply.content) > 2 * MIB
        assert status_kib(server.pid, "VmHWM") * 1024 < 256 * MIB
        # A 3 KB request asking for gigabytes is refused before a word is made.
        huge = user_body(
            "openai-chat",
            script({"id": "huge", "messages": [{"text_message": {"length": 100_000}}] * 90}),
            stream=stream,
        )
        refused = http.post(
            PATHS["openai-chat"], content=json.dumps(huge).encode(), headers={"content-type": "application/json"}
        )
        assert "over the cap" in refused.headers["x-mockllm-fallback"]
        assert status_kib(server.pid, "VmHWM") * 1024 < 256 * MIB
        assert http.post("/_mockllm/reset").status_code == 200
        assert (status_kib(server.pid, "VmRSS") - baseline) * 1024 < 48 * MIB


def costliest_body(size: int) -> bytes:
    """A body of ``size`` bytes that costs the most to hold: empty objects take ~27 times
    their text once parsed, and an instruction block near ``MAX_VALUES`` is parsed and
    validated into models besides."""
    steps = [{"id": f"s{i}", "messages": [{"text_message": {"length": 1}}]} for i in range(MAX_VALUES // 6)]
    content = bulk_script(*steps)
    head = json.dumps({"model": "m", "messages": [{"role": "user", "content": content}]})[:-1] + ', "x": ['
    count = (size - len(head) - 4) // 3
    body = (head + "{}," * count + "{}]}").encode()
    assert size - 8 < len(body) <= size
    return body


def test_the_costliest_body_allowed_stays_under_256_mb(server: Served) -> None:
    body = costliest_body(Limits.max_body_bytes)
    with httpx2.Client(base_url=server.base_url, timeout=120) as http:
        baseline = fresh_peak(server.pid)
        for _ in range(2):
            reply = http.post(PATHS["openai-chat"], content=body, headers={"content-type": "application/json"})
            assert reply.status_code == 200
            assert "x-mockllm-fallback" not in reply.headers  # the block was parsed and run
        peak = status_kib(server.pid, "VmHWM") * 1024
        assert peak < 256 * MIB, f"peak {peak / MIB:.0f} MiB"
        refused = http.post(PATHS["openai-chat"], content=body + b" " * 8, headers={"content-type": "application/json"})
        assert refused.status_code == 413
        assert http.post("/_mockllm/reset").status_code == 200
        assert (status_kib(server.pid, "VmRSS") - baseline) * 1024 < 48 * MIB


# Words making a stream of about 40 MB in each protocol (an Anthropic delta is smaller).
_LAST_EVENT = {
    "openai-chat": b"data: [DONE]",
    "anthropic-messages": b"event: message_stop",
    "openai-responses": b"event: response.completed",
}
_STREAM_WORDS = {"openai-chat": 160_000, "anthropic-messages": 330_000, "openai-responses": 170_000}


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_long_stream_is_rendered_as_it_is_sent_so_its_peak_is_a_fraction_of_its_size(
    long_stream_server: Served, protocol: str
) -> None:
    # Built whole, the stream's events and their joined bytes alone would be twice its size.
    server = long_stream_server
    words = _STREAM_WORDS[protocol]
    messages = [{"text_message": {"length": min(100_000, words - i)}} for i in range(0, words, 100_000)]
    body = user_body(protocol, script({"id": "long", "messages": messages}), stream=True)
    body["store"] = False  # Responses: nothing held for a later previous_response_id
    with httpx2.Client(base_url=server.base_url, timeout=120) as http:
        assert http.get("/_mockllm/health").status_code == 200
        baseline = fresh_peak(server.pid)
        with http.stream(
            "POST", PATHS[protocol], content=json.dumps(body).encode(), headers={"content-type": "application/json"}
        ) as reply:
            assert reply.status_code == 200
            assert "x-mockllm-fallback" not in reply.headers
            assert "content-length" not in reply.headers  # sent in pieces as they are made
            size, tail = 0, deque(maxlen=64)  # the last pieces: the last event may be long
            for piece in reply.iter_raw():
                size += len(piece)
                tail.append(piece)
    growth = status_kib(server.pid, "VmHWM") * 1024 - baseline * 1024
    assert size > 32 * MIB
    assert growth < 16 * MIB, f"peak grew {growth / MIB:.1f} MiB for a {size / MIB:.1f} MiB stream"
    assert _LAST_EVENT[protocol] in b"".join(tail)  # whole: the stream's last event came
