"""Fuzz ``python -m mockllm serve`` over loopback and report what it answered.

    python bench/fuzz_server.py [--requests 100000] [--concurrency 8] [--seed 0]

Requests come from the fuzz test's generators (``tests/mockllm/fuzz_strategies.py``:
random JSON and bytes, huge and non-finite numbers, deep nesting, lone surrogates,
random headers, scripted instruction blocks), drawn ahead in batches (``--seed``) and
sent to the three endpoints by ``--concurrency`` keep-alive connections. After each
batch one connection also asks for the largest reply the output cap allows (streamed
and not), sends a body past the body cap (a 413) and then a good request on the same
connection. At the end it prints the requests sent, the status classes, the 5xx count
(faults an instruction scripted are counted apart, as "scripted 5xx"), connection
failures, tracebacks in the server's log and the server's RSS (start, peak ``VmHWM``
from ``/proc/<pid>/status``, after ``/_mockllm/reset``), and exits 1 if any reply was a
5xx or not provider-shaped, a connection broke or the server logged a traceback.
"""

from __future__ import annotations

import argparse
import collections
import datetime
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from http.client import HTTPConnection
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hypothesis import HealthCheck, given, seed, settings  # noqa: E402

from mockllm import Limits  # noqa: E402
from tests.mockllm.fuzz_strategies import fuzz_request, is_scripted_fault  # noqa: E402

Request = tuple[str, dict[str, str], bytes]


def draw_requests(count: int, batch_seed: int) -> list[Request]:
    drawn: list[Request] = []

    @seed(batch_seed)
    @settings(max_examples=count, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(fuzz_request())
    def collect(request: Request) -> None:
        drawn.append(request)

    collect()
    return drawn


def _chain_body(words: int, stream: bool) -> bytes:
    messages = [{"text_message": {"length": min(100_000, words - i)}} for i in range(0, words, 100_000)]
    block = json.dumps({"instruction_chain": [{"id": "max", "messages": messages}]})
    return json.dumps(
        {
            "model": "m",
            "stream": stream,
            "messages": [{"role": "user", "content": f"<|instruction_start|>{block}<|instruction_end|>"}],
        }
    ).encode()


# The largest replies the default output cap allows (tests/mockllm/test_memory.py), a body
# past the body cap, then a good request: all on one keep-alive connection.
PROBES: list[tuple[str, bytes, int]] = [
    ("largest reply", _chain_body(680_000, stream=False), 200),
    ("largest stream", _chain_body(19_000, stream=True), 200),
    ("body past the cap", b" " * (Limits.max_body_bytes + 1), 413),
    ("good request", _chain_body(5, stream=False), 200),
]


def rss_kib(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def start_server(log: Any) -> tuple[subprocess.Popen[bytes], str, int]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "mockllm", "serve", "--port", "0", "--max-delay-ms", "1"],
        stdout=subprocess.PIPE,
        stderr=log,
        cwd=ROOT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert proc.stdout is not None
    line = proc.stdout.readline().decode()
    host, port = line.split()[-1].removeprefix("http://").split(":")
    return proc, host, int(port)


def send_all(
    host: str,
    port: int,
    requests: list[tuple[str, dict[str, str], bytes]],
    counts: collections.Counter[str],
    failures: list[str],
) -> None:
    connection = HTTPConnection(host, port, timeout=60)
    for path, headers, body in requests:
        try:
            connection.request("POST", path, body=body, headers={"content-type": "application/json", **headers})
            response = connection.getresponse()
            payload = response.read()
        except (OSError, ValueError) as exc:  # a broken connection: the promise is broken too
            failures.append(f"{type(exc).__name__}: {exc}")
            connection.close()
            connection = HTTPConnection(host, port, timeout=60)
            continue
        if response.status >= 500 and is_scripted_fault(response.getheaders(), payload):
            counts["scripted 5xx"] += 1  # an instruction's "error" asked for it
        else:
            counts[f"{response.status // 100}xx"] += 1
            counts[str(response.status)] += 1
        if response.status >= 500 and not is_scripted_fault(response.getheaders(), payload):
            failures.append(f"{response.status} for {path} {body[:200]!r}: {payload[:300]!r}")
        kind = response.getheader("content-type", "")
        if kind.startswith("application/json"):
            try:
                json.loads(payload)
            except ValueError:
                failures.append(f"{response.status}: a body that is not JSON")
    connection.close()


def probe(host: str, port: int, failures: list[str]) -> None:
    connection = HTTPConnection(host, port, timeout=120)
    try:
        for name, body, expected in PROBES:
            connection.request("POST", "/v1/chat/completions", body=body, headers={"content-type": "application/json"})
            response = connection.getresponse()
            payload = response.read()
            if response.status != expected or response.getheader("x-mockllm-fallback"):
                failures.append(f"{name}: {response.status} {payload[:300]!r}")
    except (OSError, ValueError) as exc:
        failures.append(f"{name}: {type(exc).__name__}: {exc}")
    finally:
        connection.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=100_000)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--batch", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0, help="draws the same requests for the same seed")
    args = parser.parse_args()
    print(
        f"{datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC: python bench/fuzz_server.py "
        f"--requests {args.requests} --concurrency {args.concurrency} --seed {args.seed}",
        flush=True,
    )
    log = tempfile.TemporaryFile()
    proc, host, port = start_server(log)
    counts: collections.Counter[str] = collections.Counter()
    failures: list[str] = []
    started = time.monotonic()
    try:
        baseline = rss_kib(proc.pid, "VmRSS")
        sent = batches = 0
        while sent < args.requests:
            batch = draw_requests(min(args.batch, args.requests - sent), args.seed * 1_000_003 + batches)
            shares = [batch[i :: args.concurrency] for i in range(args.concurrency)]
            with ThreadPoolExecutor(args.concurrency) as pool:
                list(pool.map(lambda share: send_all(host, port, share, counts, failures), shares))
            probe(host, port, failures)
            sent += len(batch)
            batches += 1
            print(
                f"  {sent} requests, {counts['5xx']} 5xx, {len(failures)} failures, "
                f"peak RSS {rss_kib(proc.pid, 'VmHWM') // 1024} MiB",
                flush=True,
            )
        peak = rss_kib(proc.pid, "VmHWM")
        reset = HTTPConnection(host, port, timeout=30)
        reset.request("POST", "/_mockllm/reset")
        reset.getresponse().read()
        reset.close()
        after_reset = rss_kib(proc.pid, "VmRSS")
    finally:
        proc.terminate()  # by its PID
        proc.wait(timeout=10)
    elapsed = time.monotonic() - started
    log.seek(0)
    tracebacks = log.read().count(b"Traceback")
    classes = {k: v for k, v in sorted(counts.items()) if k.endswith("xx")}  # scripted 5xx included
    total = sum(classes.values())
    print(
        f"requests: {total} in {elapsed:.0f} s ({total / elapsed:.0f}/s, drawing included), "
        f"plus {batches} x {len(PROBES)} probes; status classes: {classes}"
    )
    print(f"statuses: {dict(sorted((k, v) for k, v in counts.items() if not k.endswith('xx')))}")
    print(
        f"5xx: {counts['5xx']}; broken connections, bodies or probes: {len(failures)}; "
        f"tracebacks in the server log: {tracebacks}"
    )
    print(
        f"server RSS: {baseline // 1024} MiB at start, {peak // 1024} MiB peak, {after_reset // 1024} MiB after reset"
    )
    for failure in failures[:10]:
        print(f"  {failure}")
    return 1 if counts["5xx"] or failures or tracebacks else 0


if __name__ == "__main__":
    sys.exit(main())
