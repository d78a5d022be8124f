"""Wire benchmark: the openai SDK against the mock in process, over loopback, and floors.

    python bench/bench_wire.py [--rounds N] [--quick] [--check] [--write-docs] [--profile]
                               [--baseline DIR]

Two scenarios, both OpenAI Chat Completions with ``stream=True``:

- ``text``:  one 200-word streamed reply (1 word per chunk, the default);
- ``tools``: a 3-turn tool loop (tool call, tool call, 20-word answer), the client
  sending each tool result back as a real agent loop does.

Client time (the openai SDK, sync, ``max_retries=0``, consuming every chunk), five ways:

  (a) in-process  ``mockllm._transports.HTTPX2Transport`` — the engine, no socket;
  (b) floor       ``httpx2.MockTransport`` returning the same pre-rendered bytes;
  (c) server      ``python -m mockllm serve --port 0`` on 127.0.0.1;
  (d) starlette   a minimal Starlette app writing the pre-rendered body in one piece;
  (e) sse         a minimal sse-starlette app sending the same events one by one;
  (f) work        (d) plus only the work any mock must do for a scripted text reply
                  (parse the body and its chain, generate the words, render the stream):
                  the floor under (c) (server phase only).

Server cost: the server process's CPU time (``/proc/<pid>/task/*/schedstat``, ns; the
``/proc/<pid>/stat`` utime+stime total is printed beside it as a cross-check) per
request, while 16 concurrent asyncio clients (raw ``httpx2.AsyncClient`` streaming, the
SDK's own request bytes and headers) drive a batch, for (c), (d) and (e).

The machine's speed drifts, so modes alternate in small rounds (order rotated each
round) and each figure is the median over rounds of the per-round ratio to the
reference of that round: (b) for client time, (d) for server CPU. Pre-rendered bodies
come from ``MockLLM().handle`` on the SDK's own requests, captured once in setup, and
every server's bytes are checked against them before measuring.

Targets (issue 3): (a) <= 1.1x (b) for ``text`` and <= 1.2x for ``tools``; (c) server
CPU per request <= 2x (d). Exit status is 0 (it is a report) unless ``--check`` is given
and a target fails. ``--write-docs`` writes the figures into ``docs/performance.md``
(section "## Wire: in-process, server and floor"); ``--profile`` also prints a cProfile
of ``MockLLM.handle`` on both scenarios' requests. ``--baseline DIR`` adds (a) and (c)
served by the ``mockllm`` of another checkout (e.g. ``git archive main``), interleaved
with this one's in every round, so that a change is measured before and after in one run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import openai

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from _baseline import import_baseline
from _handle_cost import handle_breakdown, handle_cpu, handle_cpu_side_by_side, profile_handle
from _servers import Server, start_server, stop_server
from _wire_report import SECTION, tables, write_docs

from mockllm._engine import MockLLM
from mockllm._instructions import InstructionChain
from mockllm._transports import HTTPX2Transport

DOC = ROOT / "docs" / "performance.md"
MODEL = "mock-model"
CONCURRENCY = 16
_ASSISTANT = b'"role":"assistant"'

TEXT_PROMPT = InstructionChain(instruction_chain=[{"messages": [{"text_message": {"length": 200}}]}]).tagged(
    "Write two hundred words."
)
TOOLS_PROMPT = InstructionChain(
    instruction_chain=[
        {"id": "weather", "messages": [{"tool_call": [{"name": "get_weather", "args": {"city": "Paris"}}]}]},
        {"id": "time", "messages": [{"tool_call": [{"name": "get_time", "args": {"tz": "Europe/Paris"}}]}]},
        {"id": "answer", "messages": [{"text_message": {"length": 20}}]},
    ]
).tagged("What is the weather and the time in Paris?")
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather for a city.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    },
    {
        "type": "function",
        "function": {
            "name": "get_time",
            "description": "Local time in a time zone.",
            "parameters": {"type": "object", "properties": {"tz": {"type": "string"}}, "required": ["tz"]},
        },
    },
]
SCENARIOS = ("text", "tools")
TURNS = {"text": 1, "tools": 3}

CLIENT_MODES = ("in-process", "floor", "server", "starlette", "sse")
SERVER_MODES = ("server", "starlette", "work", "sse")
BASELINE_CLIENT_MODES = ("in-process-baseline", "server-baseline")
BASELINE_SERVER_MODES = ("server-baseline",)


# -- the client side: what an agent does with the openai SDK -------------------------


def run_text(client: openai.OpenAI) -> Any:
    stream = client.chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": TEXT_PROMPT}], stream=True
    )
    parts = []
    for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            parts.append(chunk.choices[0].delta.content)
    return "".join(parts)


def run_tools(client: openai.OpenAI) -> Any:
    messages: list[dict[str, Any]] = [{"role": "user", "content": TOOLS_PROMPT}]
    seen: list[Any] = []
    for _ in range(TURNS["tools"]):  # bounded: the script has 3 turns
        stream = client.chat.completions.create(model=MODEL, messages=messages, tools=TOOLS, stream=True)
        text: list[str] = []
        calls: dict[int, dict[str, str]] = {}
        for chunk in stream:
            if not chunk.choices:
                continue
            delta = chunk.choices[0].delta
            if delta.content:
                text.append(delta.content)
            for piece in delta.tool_calls or ():
                call = calls.setdefault(piece.index, {"id": "", "name": "", "arguments": ""})
                if piece.id:
                    call["id"] = piece.id
                if piece.function is not None:
                    call["name"] += piece.function.name or ""
                    call["arguments"] += piece.function.arguments or ""
        if not calls:
            seen.append("".join(text))
            break
        ordered = [calls[i] for i in sorted(calls)]
        seen.append([(c["id"], c["name"], json.loads(c["arguments"])) for c in ordered])
        messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
                    for c in ordered
                ],
            }
        )
        for c in ordered:
            messages.append({"role": "tool", "tool_call_id": c["id"], "content": f"{c['name']}: ok"})
    return seen


RUNNERS: dict[str, Callable[[openai.OpenAI], Any]] = {"text": run_text, "tools": run_tools}


def sdk_client(http_client: httpx2.Client, root: str, scenario: str) -> openai.OpenAI:
    return openai.OpenAI(api_key="bench", base_url=f"{root}/{scenario}/v1", max_retries=0, http_client=http_client)


# -- setup: the SDK's own requests and the mock's own replies ------------------------


@dataclass
class Turn:
    path: str
    headers: list[tuple[str, str]]  # the SDK's request headers (no host/length)
    body: bytes  # the SDK's request body
    reply_headers: list[tuple[str, str]]
    events: list[bytes]

    @property
    def reply(self) -> bytes:
        return b"".join(self.events)


def capture() -> tuple[dict[str, list[Turn]], dict[str, Any]]:
    """Run both scenarios through the in-process transport once, recording each request
    and ``MockLLM.handle``'s reply to it: the pre-rendered bodies for (b), (d), (e)."""
    captured: dict[str, list[Turn | None]] = {s: [None] * TURNS[s] for s in SCENARIOS}
    mock = MockLLM()

    class Recorder(HTTPX2Transport):
        def handle_request(self, request: Any) -> Any:
            body = request.read()
            reply = self.mock.handle(request.method, request.url.path, request.headers, body)
            assert reply.status == 200 and reply.pacing is None and reply.events, reply.body[:300]
            assert reply.body == b"".join(reply.events)
            scenario = request.url.path.split("/")[1]
            headers = [(k, v) for k, v in request.headers.items() if k not in ("host", "content-length")]
            captured[scenario][body.count(_ASSISTANT)] = Turn(
                request.url.path, headers, body, list(reply.headers), list(reply.events)
            )
            return super().handle_request(request)

    http = httpx2.Client(transport=Recorder(mock))
    results = {s: RUNNERS[s](sdk_client(http, "http://mockllm", s)) for s in SCENARIOS}
    for scenario, turns in captured.items():
        assert all(t is not None for t in turns), f"{scenario}: not every turn was requested"
    return captured, results  # type: ignore[return-value]


def floor_transport(captured: dict[str, list[Turn]]) -> httpx2.MockTransport:
    replies = {s: [(t.reply_headers, t.reply) for t in turns] for s, turns in captured.items()}

    def handler(request: httpx2.Request) -> httpx2.Response:
        headers, body = replies[request.url.path.split("/")[1]][request.content.count(_ASSISTANT)]
        return httpx2.Response(200, headers=headers, content=body)

    return httpx2.MockTransport(handler)


# -- servers -------------------------------------------------------------------------


def write_bodies(captured: dict[str, list[Turn]], path: Path) -> None:
    data = {
        s: {"turns": [{"headers": t.reply_headers, "events": [e.decode("latin-1") for e in t.events]} for t in turns]}
        for s, turns in captured.items()
    }
    path.write_text(json.dumps(data), encoding="utf-8")


def check_bytes(servers: dict[str, Server], captured: dict[str, list[Turn]]) -> None:
    """Every server returns, for each captured request, exactly the pre-rendered body."""
    with httpx2.Client(timeout=30) as http:
        for server in servers.values():
            for scenario, turns in captured.items():
                for turn in turns:
                    response = http.post(server.root + turn.path, content=turn.body, headers=turn.headers)
                    if response.status_code != 200 or response.content != turn.reply:
                        raise SystemExit(
                            f"{server.name}: {scenario} turn reply differs from MockLLM().handle "
                            f"(status {response.status_code}, {len(response.content)} bytes "
                            f"vs {len(turn.reply)})"
                        )


# -- measuring -----------------------------------------------------------------------


def rotate(items: tuple[str, ...], by: int) -> list[str]:
    by %= len(items)
    return list(items[by:] + items[:by])


def client_phase(
    clients: dict[str, dict[str, openai.OpenAI]], rounds: int, reps: dict[str, int], progress: Callable[[str], None]
) -> dict[str, dict[str, list[float]]]:
    """Per scenario and mode, the per-round median seconds per run."""
    modes = tuple(clients)
    out: dict[str, dict[str, list[float]]] = {s: {m: [] for m in modes} for s in SCENARIOS}
    for r in range(rounds):
        for scenario in SCENARIOS:
            run = RUNNERS[scenario]
            order = rotate(modes, r)
            times: dict[str, list[float]] = {mode: [] for mode in order}
            for _ in range(reps[scenario]):  # modes interleaved run by run within the round
                for mode in order:
                    client = clients[mode][scenario]
                    t0 = time.perf_counter()
                    run(client)
                    times[mode].append(time.perf_counter() - t0)
            for mode in order:
                out[scenario][mode].append(statistics.median(times[mode]))
        progress(f"client round {r + 1}/{rounds}")
    return out


async def drive(http: httpx2.AsyncClient, root: str, turns: list[Turn], loops: int) -> int:
    """``loops`` runs of the scenario's turns, in order, by each of 16 concurrent clients."""

    async def one_client() -> int:
        done = 0
        for _ in range(loops):
            for turn in turns:
                async with http.stream("POST", root + turn.path, content=turn.body, headers=turn.headers) as r:
                    size = 0
                    async for piece in r.aiter_raw():
                        size += len(piece)
                    if r.status_code != 200 or size != len(turn.reply):
                        raise RuntimeError(f"{root}{turn.path}: status {r.status_code}, {size} bytes")
                done += 1
        return done

    return sum(await asyncio.gather(*(one_client() for _ in range(CONCURRENCY))))


async def server_phase(
    servers: dict[str, Server],
    captured: dict[str, list[Turn]],
    rounds: int,
    loops: dict[str, int],
    progress: Callable[[str], None],
) -> tuple[dict[str, dict[str, list[float]]], dict[str, dict[str, list[float]]], dict[str, tuple[int, int]]]:
    """Per scenario and server: per-round CPU µs per request, and requests/s."""
    modes = tuple(servers)
    cpu: dict[str, dict[str, list[float]]] = {s: {m: [] for m in modes} for s in SCENARIOS}
    rate: dict[str, dict[str, list[float]]] = {s: {m: [] for m in modes} for s in SCENARIOS}
    totals = {m: [0, 0] for m in modes}  # schedstat ns, stat ns
    # The clients let an idle connection go before uvicorn's 5 s keep-alive timeout does:
    # on a loaded machine a mode can wait longer than that between its batches, and a
    # request sent as the server closes the connection fails (httpx2.ReadError).
    limits = httpx2.Limits(max_connections=CONCURRENCY, max_keepalive_connections=CONCURRENCY, keepalive_expiry=2.0)
    clients = {m: httpx2.AsyncClient(limits=limits, timeout=60) for m in modes}
    try:
        for mode in modes:  # warm up: connections open, code paths hot
            for scenario in SCENARIOS:
                await drive(clients[mode], servers[mode].root, captured[scenario], 2)
        for r in range(rounds):
            for scenario in SCENARIOS:
                for mode in rotate(modes, r):
                    server = servers[mode]
                    s0, t0, w0 = server.cpu_ns(), server.stat_ns(), time.perf_counter()
                    n = await drive(clients[mode], server.root, captured[scenario], loops[scenario])
                    wall = time.perf_counter() - w0
                    await asyncio.sleep(0.02)  # let the server finish closing out the batch
                    s1, t1 = server.cpu_ns(), server.stat_ns()
                    cpu[scenario][mode].append((s1 - s0) / n / 1000)
                    rate[scenario][mode].append(n / wall)
                    totals[mode][0] += s1 - s0
                    totals[mode][1] += t1 - t0
            progress(f"server round {r + 1}/{rounds}")
    finally:
        for http in clients.values():
            await http.aclose()
    return cpu, rate, {m: (a, b) for m, (a, b) in totals.items()}


class _Baseline:
    """``MockLLM`` and ``HTTPX2Transport`` of another checkout's mockllm."""

    def __init__(self, root: Path) -> None:
        package, transports = import_baseline(root, "mockllm._transports")
        self.MockLLM = package.MockLLM
        self.HTTPX2Transport = transports.HTTPX2Transport


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=None, help="rounds per phase (default 15; --quick 5)")
    parser.add_argument("--quick", action="store_true", help="a short run (under a minute)")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target fails")
    parser.add_argument("--write-docs", action="store_true", help=f"write the figures into {DOC.relative_to(ROOT)}")
    parser.add_argument("--profile", action="store_true", help="also cProfile MockLLM.handle per scenario")
    parser.add_argument(
        "--baseline",
        type=Path,
        metavar="DIR",
        help="also measure (a) and (c) with the mockllm package of the checkout DIR",
    )
    args = parser.parse_args(argv)
    baseline = _Baseline(args.baseline) if args.baseline is not None else None

    rounds = args.rounds if args.rounds is not None else (5 if args.quick else 15)
    rounds = max(1, min(rounds, 1000))
    reps = {"text": 3, "tools": 3} if args.quick else {"text": 6, "tools": 6}
    loops = {"text": 4, "tools": 2} if args.quick else {"text": 8, "tools": 4}  # per client, per batch
    settings = (
        f"Rounds: {rounds}; per round and mode {reps['text']} text runs and {reps['tools']} "
        f"tool loops (client phase, median within the round); per round and server "
        f"{CONCURRENCY}x{loops['text']} text requests and {CONCURRENCY}x{loops['tools']}x3 "
        "tool-loop requests (server phase)."
    )

    def progress(message: str) -> None:
        print(f"  .. {message} ({time.monotonic() - started:.0f} s)", file=sys.stderr, flush=True)

    started = time.monotonic()
    captured, expected = capture()
    servers: dict[str, Server] = {}
    with tempfile.TemporaryDirectory(prefix="bench_wire_") as tmp:
        workdir = Path(tmp)
        bodies = workdir / "bodies.json"
        write_bodies(captured, bodies)
        try:
            servers["server"] = start_server("server", ["-m", "mockllm", "serve", "--port", "0"], workdir, ROOT)
            servers["starlette"] = start_server(
                "starlette", [str(ROOT / "bench" / "_apps.py"), "plain", str(bodies)], workdir, ROOT
            )
            servers["sse"] = start_server("sse", [str(ROOT / "bench" / "_apps.py"), "sse", str(bodies)], workdir, ROOT)
            servers["work"] = start_server(
                "work", [str(ROOT / "bench" / "_apps.py"), "work", str(bodies)], workdir, ROOT
            )
            if baseline is not None:
                servers["server-baseline"] = start_server(
                    "server-baseline", ["-m", "mockllm", "serve", "--port", "0"], workdir, args.baseline.resolve()
                )
            check_bytes(servers, captured)
            progress("servers up; every server's bytes equal MockLLM().handle's")

            pools = {
                "in-process": httpx2.Client(transport=HTTPX2Transport(MockLLM())),
                "floor": httpx2.Client(transport=floor_transport(captured)),
                **{m: httpx2.Client(timeout=60) for m in servers},
            }
            roots = {"in-process": "http://mockllm", "floor": "http://mockllm", **{m: servers[m].root for m in servers}}
            modes = CLIENT_MODES
            if baseline is not None:
                pools["in-process-baseline"] = httpx2.Client(transport=baseline.HTTPX2Transport(baseline.MockLLM()))
                roots["in-process-baseline"] = "http://mockllm"
                modes += BASELINE_CLIENT_MODES
            clients = {m: {s: sdk_client(pools[m], roots[m], s) for s in SCENARIOS} for m in modes}
            for mode in modes:  # warm up, and every mode must give the same result
                for scenario in SCENARIOS:
                    for _ in range(2):
                        got = RUNNERS[scenario](clients[mode][scenario])
                        if got != expected[scenario]:
                            raise SystemExit(f"{mode}/{scenario}: SDK result differs: {got!r:.300}")
            client = client_phase(clients, rounds, reps, progress)
            for pool in pools.values():
                pool.close()
            measured = {m: servers[m] for m in SERVER_MODES + (BASELINE_SERVER_MODES if baseline else ())}
            cpu, rate, totals = asyncio.run(server_phase(measured, captured, rounds, loops, progress))
        finally:
            for server in servers.values():
                stop_server(server)

    requests = {s: [(t.path, dict(t.headers), t.body) for t in turns] for s, turns in captured.items()}
    handle_us = {s: handle_cpu(requests[s]) for s in SCENARIOS}
    body, targets = tables(client, cpu, rate, totals, handle_us, turns=TURNS, concurrency=CONCURRENCY)
    if baseline is not None:
        pairs = {s: handle_cpu_side_by_side(requests[s], (MockLLM, baseline.MockLLM)) for s in SCENARIOS}
        body += (
            "\n\n`MockLLM.handle`, this checkout against the baseline, in alternating rounds "
            "(medians of 15; the ratio is the median of per-round ratios): "
            + "; ".join(
                f"{s} {ours:.0f} µs vs {theirs:.0f} µs ({1 / ratio:.3f}x)"
                for s, ((ours, _), (theirs, ratio)) in pairs.items()
            )
            + "."
        )
    failing = [s for s in SCENARIOS if any(not t.ok and t.scenario == s for t in targets)]
    if failing:
        body += (
            "\n\nWhere the mock's time goes in the failing case(s), from `bench/bench_wire.py`'s own "
            "cProfile of `MockLLM.handle` (next to (d), the mock server's per-request path adds essentially only this call):\n\n"
        )
        body += "\n\n".join(handle_breakdown(requests[s], s, handle_us[s], ROOT) for s in failing)
    elapsed = time.monotonic() - started
    print()
    print(f"bench_wire: {rounds} rounds, {elapsed:.0f} s. {settings}")
    print()
    print(body)
    if args.profile:
        print(profile_handle(requests))
    if args.write_docs:
        command = (
            "python bench/bench_wire.py --write-docs"
            + (f" --rounds {args.rounds}" if args.rounds else "")
            + (" --quick" if args.quick else "")
            + (" --baseline DIR" if args.baseline else "")
        )
        write_docs(DOC, body, command, settings)
        print(f"\nwrote the section {SECTION!r} of {DOC.relative_to(ROOT)}")
    failed = [t for t in targets if not t.ok]
    return 1 if args.check and failed else 0


if __name__ == "__main__":
    sys.exit(main())
