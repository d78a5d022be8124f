"""A paced stream keeps to its schedule: each event is due at the sum of the waits before
it (``mockllm._delivery.on_schedule``), so a slow write or a late wake-up does not push
back every later event.

The exact distributions are checked on the schedules the mock computes
(test_latency.py, no sleeping); here a fake clock checks the catching up, and a small
wall-clock run with generous bounds (the machine is shared) checks that events arrive
on their schedule, never early."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import pytest

from mockllm import HTTPXTransport, InstructionChain, MockLLM
from mockllm._delivery import on_schedule
from mockllm._latency import LatencyProfile, LatencyProfiles


def _clock(times: list[float]) -> Any:
    readings: Iterator[float] = iter(times)
    return lambda: next(readings)


def test_each_wait_counts_from_the_stream_start_and_a_late_stream_catches_up_by_half_a_wait() -> None:
    pieces = [(0.5, b"a"), (0.5, b"b"), (0.5, b"c"), (0.0, b"d"), (0.5, b"e"), (0.5, b"f")]
    # Taken at 0.0, then 60 ms late, 300 ms late (catch up: half a wait at most), ...
    waits = [wait for wait, _ in on_schedule(iter(pieces), _clock([0.0, 0.56, 1.3, 1.6, 2.0]))]
    assert waits == pytest.approx([0.5, 0.44, 0.25, 0.0, 0.4, 0.5])


def test_unpaced_pieces_are_left_alone() -> None:
    pieces = [(0.0, b"a"), (0.0, b"b")]
    assert list(on_schedule(iter(pieces), _clock([]))) == pieces


STREAMS = 20
PROFILE = {
    "ttft_ms": {"distribution": "normal", "mean": 150, "stddev": 30},
    "itl_ms": {"distribution": "normal", "mean": 40, "stddev": 10},
    "seed": 11,
}


def _body(n: int) -> bytes:
    prompt = InstructionChain(instruction_chain=[{"messages": [{"text_message": {"length": 8}}]}]).tagged(f"go {n}")
    return json.dumps({"model": "m", "stream": True, "messages": [{"role": "user", "content": prompt}]}).encode()


def test_concurrent_streams_arrive_on_their_schedule_never_early() -> None:
    mock = MockLLM(latency=LatencyProfiles(default=LatencyProfile.model_validate(PROFILE)))
    # The schedule each stream is due to keep: the same request gets the same waits.
    schedules = []
    for n in range(STREAMS):
        waits = [wait for wait, _ in mock.handle("POST", "/v1/chat/completions", {}, _body(n)).paced_chunks()]
        schedules.append([sum(waits[: i + 1]) for i in range(len(waits))])
    arrivals: dict[int, list[float]] = {}

    async def stream(client: httpx.AsyncClient, n: int) -> None:
        started = time.monotonic()
        seen: list[float] = []
        async with client.stream("POST", "/v1/chat/completions", content=_body(n)) as response:
            async for chunk in response.aiter_raw():
                seen += [time.monotonic() - started] * chunk.count(b"\n\n")
        arrivals[n] = seen

    async def main() -> None:
        async with httpx.AsyncClient(transport=HTTPXTransport(mock), base_url="http://mock") as client:
            async with anyio.create_task_group() as group:
                for n in range(STREAMS):
                    group.start_soon(stream, client, n)

    anyio.run(main)
    lateness = []
    for n, due in enumerate(schedules):
        assert len(arrivals[n]) == len(due), n
        lateness += [got - at for got, at in zip(arrivals[n], due, strict=True)]
    assert min(lateness) > -0.005, "an event came before its time"
    lateness.sort()
    # Generous: a loaded 2-core box wakes late; drift would add up over the events instead.
    assert lateness[len(lateness) // 2] < 0.25, lateness[len(lateness) // 2]
