"""What ``MockLLM.handle`` costs on the benchmark's requests: CPU time and cProfile tables.

A request is (path, headers, body) as the SDK sent it, captured by ``bench/bench_wire.py``.
"""

from __future__ import annotations

import cProfile
import io
import os
import pstats
import statistics
import time
from pathlib import Path

from mockllm._engine import MockLLM

__all__ = ["Request", "handle_breakdown", "handle_cpu", "handle_cpu_side_by_side", "profile_handle"]

Request = tuple[str, dict[str, str], bytes]


def _handle_all(mock: MockLLM, requests: list[Request], reps: int) -> None:
    for _ in range(reps):
        for path, headers, body in requests:
            mock.handle("POST", path, headers, body).body


def profile_handle(requests: dict[str, list[Request]], reps: int = 300) -> str:
    """cProfile of ``MockLLM.handle`` on the captured requests: where the mock's time goes."""
    out = io.StringIO()
    for scenario, batch in requests.items():
        mock = MockLLM()
        _handle_all(mock, batch, 1)  # warm
        t0 = time.perf_counter()
        _handle_all(mock, batch, reps)
        per = (time.perf_counter() - t0) / reps / len(batch) * 1e6
        profiler = cProfile.Profile()
        profiler.enable()
        _handle_all(mock, batch, reps)
        profiler.disable()
        out.write(
            f"\n=== MockLLM.handle, {scenario}: {per:.0f} µs per request unprofiled "
            f"({len(batch)} request(s) x {reps}) ===\n"
        )
        for sort in ("tottime", "cumulative"):
            stats = pstats.Stats(profiler, stream=out)
            stats.sort_stats(sort).print_stats(22)
    return out.getvalue()


def handle_cpu(requests: list[Request], reps: int = 300) -> float:
    """``MockLLM.handle``'s CPU µs per request on ``requests`` (median of 5), every byte of
    the reply made (a lazy stream renders as it is read)."""
    return handle_cpu_side_by_side(requests, (MockLLM,), reps, rounds=5)[0][0]


def handle_cpu_side_by_side(
    requests: list[Request], mock_classes: tuple[type, ...], reps: int = 300, rounds: int = 15
) -> list[tuple[float, float]]:
    """For each of ``mock_classes`` (this checkout's ``MockLLM``, another's), ``handle``'s
    CPU µs per request and its ratio to the first class's, measured in alternating
    rounds so that the machine's drift hits them alike: medians over rounds of the
    per-round figure and of the per-round ratio."""
    mocks = [mock_class() for mock_class in mock_classes]
    for mock in mocks:
        _handle_all(mock, requests, 20)  # warm
    samples: list[list[float]] = [[] for _ in mocks]
    per_round = max(1, reps // 5)
    for r in range(rounds):
        order = list(range(len(mocks)))
        if r % 2:
            order.reverse()
        for i in order:
            c0 = time.process_time()
            _handle_all(mocks[i], requests, per_round)
            samples[i].append((time.process_time() - c0) / per_round / len(requests) * 1e6)
    return [
        (statistics.median(values), statistics.median(v / ref for v, ref in zip(values, samples[0], strict=False)))
        for values in samples
    ]


def handle_breakdown(requests: list[Request], scenario: str, per: float, root: Path, reps: int = 300) -> str:
    """Markdown: ``MockLLM.handle``'s CPU per request for ``scenario`` and the mockllm
    functions taking the largest share of it (cProfile, cumulative)."""
    mock = MockLLM()
    profiler = cProfile.Profile()
    profiler.enable()
    _handle_all(mock, requests, reps)
    profiler.disable()
    stats = pstats.Stats(profiler)
    handle_total = next(
        ct
        for (f, _, fn), (_, _, _, ct, _) in stats.stats.items()  # type: ignore[attr-defined]
        if fn == "handle" and f.endswith("engine.py")
    )
    rows = []
    for (filename, line, fn), (_, calls, own, cum, _) in stats.stats.items():  # type: ignore[attr-defined]
        if f"{os.sep}mockllm{os.sep}" in filename and fn != "handle":
            where = Path(filename)
            where = where.relative_to(root) if where.is_relative_to(root) else Path(*where.parts[-2:])
            name = f"{where.as_posix()}:{line} `{fn}`"
            rows.append((cum, own, calls, name))
    rows.sort(reverse=True)
    lines = [
        (
            f"`MockLLM.handle` on the {scenario} request(s): {per:.0f} µs CPU per request "
            "(unprofiled). Largest mockllm functions by share of `handle`'s profiled time:"
        ),
        "",
        "| function | cumulative | own | calls/request |",
        "| --- | ---: | ---: | ---: |",
    ]
    for cum, own, calls, name in rows[:10]:
        lines.append(
            f"| {name} | {cum / handle_total:.0%} | {own / handle_total:.0%} | {calls / reps / len(requests):.3g} |"
        )
    return "\n".join(lines)
