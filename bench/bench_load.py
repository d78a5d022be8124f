"""Benchmark: thousands of concurrent paced streams against ``python -m mockllm serve``.

    python bench/bench_load.py [--streams 10000] [--events 60] [--interval-ms 500]
                               [--ramp-s 10] [--clients 1] [--workers N] [--profile FILE]

It is a measurement, not a test (issue 28's load run). The server runs as a process of
its own (``serve --port 0``, and ``--workers N`` passed through when asked for: an
error if this checkout's ``serve`` has no such option). Every stream is an OpenAI Chat
Completions request whose script paces it (``timing: {first_chunk_ms, chunk_ms}`` at
``--interval-ms``) and whose reply is ``--events`` SSE events long (``[DONE]``
included). The streams start spread evenly over ``--ramp-s`` seconds, so that they are
all open at once for the rest of a 30-second stream, and are held by ``--clients``
client processes of raw asyncio sockets (bench/_load_client.py).

Targets: 0 errors, p99 lateness of an event against its schedule (request written +
``interval * (i + 1)``) at most ``--p99-ms``, and the server's peak RSS (VmHWM summed
over the server process and all its children) at most ``--rss-mb``. The script prints
the figures with the load average (the machine may be shared) and exits 1 when a target
is missed. Open files: this process raises its soft limit to the hard one
(``resource.setrlimit``); the server and the clients inherit it. ``--profile FILE``
runs the server (one process) under cProfile timed by CPU (bench/_profiled_serve.py) and
prints where its time went.
``--target http://HOST:PORT`` loads a mock that is already running (a Kubernetes Service,
deploy/README.md) instead: no server is started and its memory and CPU are not read.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import platform
import pstats
import subprocess
import sys
import tempfile
import time
from array import array
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._load_client import ClientResult, StreamPlan, raise_fd_limit, run_client  # noqa: E402
from bench._servers import Server, start_server, stop_server  # noqa: E402
from mockllm import InstructionChain, MockLLM  # noqa: E402

PATH = "/v1/chat/completions"


def _body(length: int, interval_ms: float) -> bytes:
    step = {
        "messages": [{"text_message": {"length": length}}],
        "timing": {"first_chunk_ms": interval_ms, "chunk_ms": interval_ms},
    }
    prompt = InstructionChain(instruction_chain=[step]).tagged("load test")
    return json.dumps({"model": "gpt-mock", "stream": True, "messages": [{"role": "user", "content": prompt}]}).encode()


def _request_for(events: int, interval_ms: float, host: str, port: int) -> bytes:
    """The request bytes of a stream of exactly ``events`` events (the text's length found
    with the mock in process: the same engine as the server's)."""
    mock = MockLLM()
    for length in range(1, 10 * events + 10):
        body = _body(length, interval_ms)
        count = len(mock.handle("POST", PATH, {}, body).events)
        if count == events:
            head = f"POST {PATH} HTTP/1.1\r\nhost: {host}:{port}\r\ncontent-type: application/json\r\n"
            return f"{head}content-length: {len(body)}\r\n\r\n".encode() + body
        if count > events:
            break
    raise SystemExit(f"--events {events}: no Chat Completions stream has exactly that many events; try another")


def _serve_options() -> str:
    return subprocess.run(
        [sys.executable, "-m", "mockllm", "serve", "--help"], capture_output=True, text=True, cwd=ROOT, check=True
    ).stdout


def _process_tree(pid: int) -> list[int]:
    tree, todo = [], [pid]
    while todo:
        current = todo.pop()
        tree.append(current)
        try:
            for task in os.listdir(f"/proc/{current}/task"):
                with open(f"/proc/{current}/task/{task}/children") as handle:
                    todo += [int(child) for child in handle.read().split()]
        except OSError:
            continue
    return tree


def _status_kb(pid: int, field: str) -> int:
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _cpu_s(pids: list[int]) -> tuple[float, float]:
    """User and system CPU seconds of ``pids`` (/proc/PID/stat utime, stime)."""
    user = system = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
            user, system = user + int(fields[11]), system + int(fields[12])
        except OSError:
            continue
    tick = os.sysconf("SC_CLK_TCK")
    return user / tick, system / tick


def _percentile(values: array[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] if ordered else float("nan")


def _load(args: argparse.Namespace, host: str, port: int) -> tuple[list[ClientResult], float]:
    """Run the streams from ``args.clients`` processes; their results and the wall time."""
    request = _request_for(args.events, args.interval_ms, host, port)
    interval = args.interval_ms / 1000
    starts_at = time.monotonic() + 1.0
    clients = max(1, args.clients)
    plans = [
        StreamPlan(
            host=host,
            port=port,
            request=request,
            events=args.events,
            first_s=interval,
            interval_s=interval,
            starts=[starts_at + args.ramp_s * k / args.streams for k in range(c, args.streams, clients)],
            timeout_s=interval * (args.events + 1) + 120,
        )
        for c in range(clients)
    ]
    began = time.monotonic()
    with multiprocessing.get_context("fork").Pool(clients) as pool:
        results: list[ClientResult] = pool.map(run_client, plans)
    return results, time.monotonic() - began


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--streams", type=int, default=10_000)
    parser.add_argument("--events", type=int, default=60)
    parser.add_argument("--interval-ms", type=float, default=500.0)
    parser.add_argument("--ramp-s", type=float, default=10.0, help="the streams start spread over this time")
    parser.add_argument("--clients", type=int, default=1, help="client processes")
    parser.add_argument("--workers", type=int, default=None, help="passed to serve --workers (when it has it)")
    parser.add_argument("--p99-ms", type=float, default=100.0)
    parser.add_argument("--rss-mb", type=float, default=1024.0)
    parser.add_argument("--profile", type=Path, default=None, help="cProfile the server into FILE (one process)")
    parser.add_argument("--target", default=None, help="http://HOST:PORT of a running mock (no server started)")
    parser.add_argument("--json", type=Path, default=None, help="write the figures here too")
    args = parser.parse_args()

    serve_args = ["--port", "0"]
    if args.workers is not None:
        if "--workers" not in _serve_options():
            print("serve has no --workers option in this checkout (issue 28); run without --workers", file=sys.stderr)
            return 2
        serve_args += ["--workers", str(args.workers)]
    limit = raise_fd_limit(args.streams + 256)  # the server and the clients inherit it
    argv = ["-m", "mockllm", "serve", *serve_args]
    if args.profile is not None:
        argv = [str(ROOT / "bench" / "_profiled_serve.py"), str(args.profile), *argv[2:]]

    load_before = os.getloadavg()
    tree: list[int] = []
    server_user = server_sys = hwm_mb = 0.0
    if args.target is not None:
        host, port = args.target.removeprefix("http://").rstrip("/").rsplit(":", 1)
        results, wall = _load(args, host, int(port))
    else:
        with tempfile.TemporaryDirectory() as work:
            server: Server = start_server("mock", argv, Path(work), ROOT)
            try:
                host, port = server.root.removeprefix("http://").rsplit(":", 1)
                cpu_before = _cpu_s(_process_tree(server.proc.pid))
                results, wall = _load(args, host, int(port))
                tree = _process_tree(server.proc.pid)
                cpu_after = _cpu_s(tree)
                server_user, server_sys = cpu_after[0] - cpu_before[0], cpu_after[1] - cpu_before[1]
                hwm_mb = sum(_status_kb(pid, "VmHWM") for pid in tree) / 1024
            finally:
                stop_server(server)
    load_after = os.getloadavg()

    lateness: array[float] = array("d")
    for result in results:
        lateness.frombytes(result.lateness_s)
    errors = sum(r.errors for r in results)
    figures: dict[str, Any] = {
        "command": " ".join(["python", *sys.argv]),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "open_files_limit": limit,
        "server_processes": len(tree),
        "streams": args.streams,
        "completed": sum(r.completed for r in results),
        "errors": errors,
        "error_samples": [s for r in results for s in r.error_samples][:5],
        "peak_open_streams": sum(r.peak_open for r in results),
        "events": len(lateness),
        "lateness_ms": {
            name: round(_percentile(lateness, q) * 1000, 1)
            for name, q in (("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("max", 1.0))
        },
        "server_vmhwm_mb": round(hwm_mb, 1),
        "server_cpu_s": round(server_user + server_sys, 1),
        "server_user_s": round(server_user, 1),
        "server_sys_s": round(server_sys, 1),
        "server_cpu_us_per_event": round((server_user + server_sys) / max(1, len(lateness)) * 1e6, 1),
        "wall_s": round(wall, 1),
        "client_cpu_s": round(sum(r.cpu_s for r in results), 1),
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in load_after],
    }
    print(json.dumps(figures, indent=2))
    if args.json is not None:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    if args.profile is not None and args.profile.exists():
        pstats.Stats(str(args.profile)).sort_stats("tottime").print_stats(30)
    missed = []
    if errors:
        missed.append(f"{errors} streams failed")
    if figures["lateness_ms"]["p99"] > args.p99_ms:
        missed.append(f"p99 lateness {figures['lateness_ms']['p99']} ms > {args.p99_ms:g} ms")
    if args.target is None and hwm_mb > args.rss_mb:
        missed.append(f"server peak RSS {hwm_mb:.0f} MB > {args.rss_mb:g} MB")
    print("targets met" if not missed else "targets missed: " + "; ".join(missed))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
