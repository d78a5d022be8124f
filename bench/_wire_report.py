"""The wire benchmark's report: its tables, its targets and its section of the docs."""

from __future__ import annotations

import datetime
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

import httpx2
import openai
from _docs import replace_section

SECTION = "## Wire: in-process, server and floor"
DOC_DATE = datetime.date.today().isoformat()  # the day the figures are measured
LABEL = {
    "in-process": "(a) in-process",
    "floor": "(b) floor (MockTransport)",
    "server": "(c) mockllm server",
    "starlette": "(d) Starlette, one write",
    "sse": "(e) sse-starlette, per event",
    "work": "(f) Starlette, the reply's own work",
    "in-process-baseline": "(a) in-process, baseline",
    "server-baseline": "(c) mockllm server, baseline",
}


def ratio_median(values: list[float], reference: list[float]) -> float:
    return statistics.median(v / ref for v, ref in zip(values, reference, strict=False))


@dataclass
class Target:
    name: str
    scenario: str
    value: float
    limit: float

    @property
    def ok(self) -> bool:
        return self.value <= self.limit


def tables(
    client: dict[str, dict[str, list[float]]],
    cpu: dict[str, dict[str, list[float]]],
    rate: dict[str, dict[str, list[float]]],
    totals: dict[str, tuple[int, int]],
    handle_us: dict[str, float],
    *,
    turns: dict[str, int],
    concurrency: int,
) -> tuple[str, list[Target]]:
    """The section's tables and what they say of the targets.

    ``client``: seconds per run, ``cpu``: CPU µs per request, ``rate``: requests per second,
    each by scenario ("text", "tools"), mode and round; ``turns``: requests per run.
    """
    scenarios = tuple(turns)
    lines = [
        (
            "Client time: openai SDK (sync), stream=True, every chunk consumed; ms per run "
            "(text: 1 request; tools: 3 requests), modes interleaved run by run. "
            "Ratio = median over rounds of (mode / floor)."
        ),
        "",
        "| mode | text ms | text ratio | tools ms | tools ratio |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for mode in client["text"]:
        cells = []
        for scenario in scenarios:
            cells.append(f"{statistics.median(client[scenario][mode]) * 1000:.2f}")
            cells.append(f"{ratio_median(client[scenario][mode], client[scenario]['floor']):.3f}x")
        lines.append(f"| {LABEL[mode]} | " + " | ".join(cells) + " |")
    implied = {s: 1 + handle_us[s] * turns[s] / 1e6 / statistics.median(client[s]["floor"]) for s in scenarios}
    lines += [
        "",
        (
            "Cross-check from the engine's own cost (deterministic, unlike the wall times above): "
            f"`MockLLM.handle` takes {handle_us['text']:.0f} µs CPU for the 200-word request and "
            f"{handle_us['tools']:.0f} µs per tool-loop request, so (a) should sit near "
            f"1 + handle / floor = {implied['text']:.3f}x (text) and {implied['tools']:.3f}x (tools); "
            "the measured ratio's spread around that is the machine's noise."
        ),
    ]
    lines += [
        "",
        (
            f"Server CPU: the server process's CPU µs per HTTP request, {concurrency} concurrent "
            "async clients (raw httpx2, keep-alive). Ratio = median over rounds of (server / (d)). "
            "req/s is wall throughput (informational; client and server share 2 cores)."
        ),
        "",
        "| server | text CPU µs/req | text ratio | text req/s | tools CPU µs/req | tools ratio | tools req/s |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for mode in cpu["text"]:
        cells = []
        for scenario in scenarios:
            cells.append(f"{statistics.median(cpu[scenario][mode]):.0f}")
            cells.append(f"{ratio_median(cpu[scenario][mode], cpu[scenario]['starlette']):.2f}x")
            cells.append(f"{statistics.median(rate[scenario][mode]):.0f}")
        lines.append(f"| {LABEL[mode]} | " + " | ".join(cells) + " |")
    extra = {s: statistics.median(cpu[s]["server"]) - statistics.median(cpu[s]["starlette"]) for s in scenarios}
    lines += [
        "",
        (
            "What (c) adds to (d), per request: "
            f"{extra['text']:.0f} µs (text) and {extra['tools']:.0f} µs (tools), against "
            f"`MockLLM.handle`'s own {handle_us['text']:.0f} µs and {handle_us['tools']:.0f} µs "
            "measured in this process."
        ),
    ]
    if "work" in cpu["text"]:
        over = {s: ratio_median(cpu[s]["server"], cpu[s]["work"]) for s in scenarios}
        lines += [
            "",
            (
                "(f) is the floor under (c): (d) plus only what any mock must do to answer a scripted "
                "text reply (parse the body and its chain, generate the words, render the stream; "
                "a tool call's turn is parsed, then answered with (d)'s bytes). (c) / (f): "
                f"{over['text']:.2f}x (text), {over['tools']:.2f}x (tools)."
            ),
        ]
    agree = ", ".join(f"{m} {a / 1e9:.2f} s vs {b / 1e9:.2f} s" for m, (a, b) in totals.items())
    lines += ["", f"CPU cross-check over the whole phase, schedstat vs /proc/<pid>/stat: {agree}."]

    targets = [
        Target(
            "in-process <= 1.1x floor, 200-word reply",
            "text",
            ratio_median(client["text"]["in-process"], client["text"]["floor"]),
            1.1,
        ),
        Target(
            "in-process <= 1.2x floor, 3-turn tool loop",
            "tools",
            ratio_median(client["tools"]["in-process"], client["tools"]["floor"]),
            1.2,
        ),
        Target(
            "server CPU/request <= 2x (d), 200-word reply",
            "text",
            ratio_median(cpu["text"]["server"], cpu["text"]["starlette"]),
            2.0,
        ),
        Target(
            "server CPU/request <= 2x (d), 3-turn tool loop",
            "tools",
            ratio_median(cpu["tools"]["server"], cpu["tools"]["starlette"]),
            2.0,
        ),
    ]
    lines += ["", "| target | measured | limit | result |", "| --- | ---: | ---: | --- |"]
    for t in targets:
        lines.append(f"| {t.name} | {t.value:.3f}x | {t.limit}x | {'PASS' if t.ok else 'FAIL'} |")
    return "\n".join(lines), targets


def write_docs(doc: Path, body: str, command: str, settings: str) -> None:
    """Write the section into ``doc`` in place of its last version."""
    section = "\n".join(
        [
            SECTION,
            "",
            (
                f"Measured {DOC_DATE} with `{command}` on this project's machine: 2 cores, shared with "
                "other work and noisy, so every figure is a median over alternating rounds and the "
                "ratios (median of per-round ratios) are the figures to trust, not the absolute times. "
                f"Python {sys.version.split()[0]}, openai {openai.__version__}, httpx2 {httpx2.__version__}; "
                "uvicorn on its default asyncio loop and h11 (no uvloop, no httptools) for every server. "
                f"{settings}"
            ),
            "",
            (
                "Modes: (a) `HTTPX2Transport` in process; (b) `httpx2.MockTransport` returning the "
                "pre-rendered bytes (the floor: no logic); (c) `python -m mockllm serve --port 0`; "
                "(d) a minimal Starlette app writing the pre-rendered body in one piece; (e) a minimal "
                "sse-starlette app sending the same events one by one; (f) (d) plus the text reply's own work "
                "(`bench/_apps.py`). The "
                "pre-rendered bodies are `MockLLM().handle`'s replies to the SDK's own requests, and "
                "every server's bytes are checked against them before measuring."
            ),
            "",
            body,
            "",
        ]
    )
    replace_section(doc, SECTION, section)
