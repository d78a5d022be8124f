"""Fuzz ``python -m mockllm serve`` over loopback and report what it answered.

    python bench/fuzz_server.py [--requests 100000] [--concurrency 8] [--seed 0]

Requests come from the fuzz test's generators (``tests/mockllm/fuzz_strategies.py``:
random JSON and bytes, huge and non-finite numbers, deep nesting, lone surrogates,
random headers, scripted instruction blocks), drawn ahead in batches and sent by
``--concurrency`` keep-alive connections. Between batches the script also asks for
the largest reply the output cap allows. At the end it prints the requests sent, the
status classes, the 5xx count (faults an instruction scripted are counted apart, as
"scripted 5xx"), connection failures and the server's peak RSS
(``VmHWM`` in ``/proc/<pid>/status``), and exits 1 if any reply was a 5xx or not
provider-shaped, or a connection broke.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from http.client import HTTPConnection
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from tests.mockllm.fuzz_strategies import fuzz_request, is_scripted_fault  # noqa: E402


def draw_requests(count: int, seed: int) -> list[tuple[str, dict[str, str], bytes]]:
    drawn: list[tuple[str, dict[str, str], bytes]] = []

    @settings(max_examples=count, deadline=None, database=None, derandomize=False,
              suppress_health_check=list(HealthCheck))
    @given(st.randoms(use_true_random=False), fuzz_request())
    def collect(_: Any, request: tuple[str, dict[str, str], bytes]) -> None:
        drawn.append(request)

    collect()
    return drawn


def rss_kib(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def start_server() -> tuple[subprocess.Popen[bytes], str, int]:
    proc = subprocess.Popen([sys.executable, "-m", "mockllm", "serve", "--port", "0", "--max-delay-ms", "1"],
                            stdout=subprocess.PIPE, cwd=ROOT, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert proc.stdout is not None
    line = proc.stdout.readline().decode()
    host, port = line.split()[-1].removeprefix("http://").split(":")
    return proc, host, int(port)


def send_all(host: str, port: int, requests: list[tuple[str, dict[str, str], bytes]],
             counts: collections.Counter[str], failures: list[str]) -> None:
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=100_000)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--batch", type=int, default=2000)
    args = parser.parse_args()
    proc, host, port = start_server()
    counts: collections.Counter[str] = collections.Counter()
    failures: list[str] = []
    started = time.monotonic()
    try:
        baseline = rss_kib(proc.pid, "VmRSS")
        sent = 0
        while sent < args.requests:
            batch = draw_requests(min(args.batch, args.requests - sent), sent)
            shares = [batch[i::args.concurrency] for i in range(args.concurrency)]
            with ThreadPoolExecutor(args.concurrency) as pool:
                list(pool.map(lambda share: send_all(host, port, share, counts, failures), shares))
            sent += len(batch)
            print(f"  {sent} requests, {counts['5xx']} 5xx, peak RSS {rss_kib(proc.pid, 'VmHWM') // 1024} MiB",
                  flush=True)
        peak = rss_kib(proc.pid, "VmHWM")
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    elapsed = time.monotonic() - started
    classes = {k: v for k, v in sorted(counts.items()) if k.endswith("xx")}  # scripted 5xx included
    print(f"requests: {sum(classes.values())} in {elapsed:.0f} s; status classes: {classes}")
    print(f"statuses: {dict(sorted((k, v) for k, v in counts.items() if not k.endswith('xx')))}")
    print(f"5xx: {counts['5xx']}; broken connections or bodies: {len(failures)}")
    print(f"server RSS: {baseline // 1024} MiB at start, {peak // 1024} MiB peak")
    for failure in failures[:10]:
        print(f"  {failure}")
    return 1 if counts["5xx"] or failures else 0


if __name__ == "__main__":
    sys.exit(main())
