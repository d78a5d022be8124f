"""The shared timer of paced streams (``mockllm._paced_sender.Ticker``): an event never
goes out before its due time, streams due in the same tick wake together, and a stream
whose client went away does not hold back the others (timings: lower bounds only, the
machine is shared)."""

from __future__ import annotations

import asyncio
from typing import Any

from mockllm._paced_sender import TICK_S, Ticker


def test_no_wait_ends_before_its_due_time_and_one_tick_wakes_every_stream_due() -> None:
    async def run() -> tuple[list[tuple[float, float]], list[float]]:
        loop = asyncio.get_running_loop()
        timers: list[float] = []
        call_at = loop.call_at

        def counted_call_at(when: float, *args: Any) -> asyncio.TimerHandle:
            timers.append(when)
            return call_at(when, *args)

        loop.call_at = counted_call_at  # type: ignore[method-assign,assignment]
        ticker = Ticker(loop)
        woken: list[tuple[float, float]] = []
        waits = [0.01 + 0.0003 * k for k in range(40)]  # 40 streams over about 6 ticks
        # The 40 streams ask at one instant of the loop's clock, as streams woken by one
        # tick do: how many ticks their waits span then does not depend on how fast this
        # (shared, loaded) machine starts 40 tasks.
        now = loop.time()
        loop.time = lambda: now  # type: ignore[method-assign]
        try:
            futures = [ticker.after(wait) for wait in waits]
        finally:
            del loop.time
        for wait, future in zip(waits, futures, strict=True):
            future.add_done_callback(lambda _, due=now + wait: woken.append((due, loop.time())))
        await asyncio.gather(*futures)
        await asyncio.sleep(0)  # the done callbacks run
        return woken, timers

    woken, timers = asyncio.run(run())
    assert len(woken) == 40
    assert all(now >= due for due, now in woken), [now - due for due, now in woken if now < due]
    # One timer per tick: the 40 streams' waits span about 6 ticks, not 40 timers.
    assert len(set(timers)) == len(timers), timers
    assert len(timers) <= 0.0003 * 40 / TICK_S + 2, timers


def test_a_cancelled_stream_leaves_the_others_due_in_its_tick_on_time() -> None:
    async def run() -> list[str]:
        loop = asyncio.get_running_loop()
        ticker = Ticker(loop)
        done: list[str] = []

        async def stream(name: str) -> None:
            await ticker.after(0.02)
            done.append(name)

        gone = asyncio.ensure_future(stream("gone"))
        kept = [asyncio.ensure_future(stream(f"kept {k}")) for k in range(3)]
        await asyncio.sleep(0)
        gone.cancel()  # its client went away
        await asyncio.gather(*kept)
        return done

    assert sorted(asyncio.run(run())) == ["kept 0", "kept 1", "kept 2"]
