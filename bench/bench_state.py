"""State benchmark: what the shared state costs the server on the S200 request.

    python bench/bench_state.py [--rounds N] [--quick] [--write-docs] [--baseline DIR]

The server CPU method of ``bench/bench_wire.py`` (CPU time from /proc per request, 16
concurrent async clients, modes alternating in rounds, medians of per-round ratios),
on its two scenarios (``text``: the 200-word streamed reply, S200; ``tools``: a 3-turn
tool loop), against:

- ``memory``:   ``python -m mockllm serve --port 0`` (one process, in-memory state);
- ``sqlite``:   the same with ``--state sqlite://FILE`` (one process, SQLite state:
  every request's journal entry and step use written to the file);
- ``workers``:  ``--workers 2`` (SQLite state; CPU summed over the workers, whose
  connections the kernel spreads);
- ``baseline``: with ``--baseline DIR``, the ``memory`` server of another checkout
  (``git archive`` of main), for the in-memory path's before and after.

Target (issue 28): ``sqlite`` costs at most 1.15x ``memory`` server CPU on S200.
``--write-docs`` writes the figures into ``docs/performance.md`` (section
"## State backends: SQLite's cost on the S200 request").
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx2

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import bench_wire
from _docs import replace_section
from _servers import Server, start_server, stop_server
from bench_wire import SCENARIOS, Turn, capture, check_bytes, server_phase

DOC = ROOT / "docs" / "performance.md"
SECTION = "## State backends: SQLite's cost on the S200 request"
TARGET = 1.15


async def drive(http: Any, root: str, turns: list[Turn], loops: int) -> int:
    """bench_wire's ``drive``, retrying a request whose kept-alive connection the server
    closed as it was reused (uvicorn closes connections idle for 5 s, and on this loaded
    machine a server waits longer than that while the others are measured)."""

    async def one_client() -> int:
        done = 0
        for _ in range(loops):
            for turn in turns:
                for attempt in range(3):  # bounded
                    try:
                        async with http.stream("POST", root + turn.path, content=turn.body, headers=turn.headers) as r:
                            size = 0
                            async for piece in r.aiter_raw():
                                size += len(piece)
                        break
                    except (httpx2.ReadError, httpx2.RemoteProtocolError):
                        if attempt == 2:
                            raise
                if r.status_code != 200 or size != len(turn.reply):
                    raise RuntimeError(f"{root}{turn.path}: status {r.status_code}, {size} bytes")
                done += 1
        return done

    return sum(await asyncio.gather(*(one_client() for _ in range(bench_wire.CONCURRENCY))))


bench_wire.drive = drive  # server_phase looks it up at call time


class Workers(Server):
    """``serve --workers N``: the CPU of its worker processes (the parent only waits)."""

    def _pids(self) -> list[int]:
        children = Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children").read_text().split()
        return [int(pid) for pid in children]

    def cpu_ns(self) -> int:
        total = 0
        for pid in self._pids():
            for tid in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{tid}/schedstat") as handle:
                    total += int(handle.read().split()[0])
        return total

    def stat_ns(self) -> int:
        total = 0
        for pid in self._pids():
            with open(f"/proc/{pid}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) * 1_000_000_000 // os.sysconf("SC_CLK_TCK")
        return total


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=None, help="rounds (default 15; --quick 5)")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--write-docs", action="store_true")
    parser.add_argument("--baseline", type=Path, metavar="DIR", help="also the memory server of checkout DIR")
    args = parser.parse_args(argv)
    rounds = max(1, min(args.rounds or (5 if args.quick else 15), 1000))
    loops = {"text": 4, "tools": 2} if args.quick else {"text": 8, "tools": 4}
    started = time.monotonic()

    def progress(message: str) -> None:
        print(f"  .. {message} ({time.monotonic() - started:.0f} s)", file=sys.stderr, flush=True)

    captured, _ = capture()
    servers: dict[str, Server] = {}
    with tempfile.TemporaryDirectory(prefix="bench_state_") as tmp:
        workdir = Path(tmp)
        serve = ["-m", "mockllm", "serve", "--port", "0"]
        try:
            servers["memory"] = start_server("memory", serve, workdir, ROOT)
            servers["sqlite"] = start_server("sqlite", [*serve, "--state", f"sqlite://{workdir}/one.db"], workdir, ROOT)
            workers = start_server("workers", [*serve, "--workers", "2"], workdir, ROOT)
            servers["workers"] = Workers(workers.name, workers.proc, workers.root, workers.log)
            if args.baseline is not None:
                servers["baseline"] = start_server("baseline", serve, workdir, args.baseline.resolve())
            check_bytes(servers, captured)
            progress("servers up; every server's bytes equal MockLLM().handle's")
            try:
                cpu, rate, _ = asyncio.run(server_phase(servers, captured, rounds, loops, progress))
            except Exception:
                for server in servers.values():  # what the servers said, to see which one failed
                    said = server.log.read_text(errors="replace")[-1500:]
                    print(f"--- {server.name} (exit {server.proc.poll()}):\n{said}", file=sys.stderr)
                raise
        finally:
            for server in servers.values():
                stop_server(server)
    rows = ["| server | " + " | ".join(f"{s} CPU µs/req | {s} ratio | {s} req/s" for s in SCENARIOS) + " |"]
    rows.append("| --- |" + " ---: | ---: | ---: |" * len(SCENARIOS))
    ratios: dict[str, dict[str, float]] = {}
    for mode in servers:
        cells = []
        for scenario in SCENARIOS:
            per_round = [m / r for m, r in zip(cpu[scenario][mode], cpu[scenario]["memory"], strict=True)]
            ratios.setdefault(mode, {})[scenario] = statistics.median(per_round)
            cells.append(
                f"{statistics.median(cpu[scenario][mode]):.0f} | {ratios[mode][scenario]:.3f}x | "
                f"{statistics.median(rate[scenario][mode]):.0f}"
            )
        rows.append(f"| {mode} | " + " | ".join(cells) + " |")
    measured = ratios["sqlite"]["text"]
    verdict = "PASS" if measured <= TARGET else "FAIL"
    table = "\n".join(rows)
    summary = (
        f"SQLite state on S200: {measured:.3f}x the in-memory server's CPU per request (target <= {TARGET}x): {verdict}"
    )
    print(f"\nbench_state: {rounds} rounds, {time.monotonic() - started:.0f} s\n\n{table}\n\n{summary}")
    if args.write_docs:
        command = "python bench/bench_state.py --write-docs" + (" --quick" if args.quick else "")
        command += f" --rounds {args.rounds}" if args.rounds else ""
        command += " --baseline DIR" if args.baseline else ""
        section = "\n".join(
            [
                SECTION,
                "",
                f"Measured {time.strftime('%Y-%m-%d')} with `{command}` (DIR: `git archive` of main) on this "
                "project's 2-core machine, shared and noisy: medians of per-round ratios to the `memory` server, "
                f"{rounds} rounds of 16 concurrent clients ({loops['text']} text and {loops['tools']} tool loops "
                "each per round), server CPU from /proc as in bench_wire. `sqlite`: one process with `--state "
                "sqlite://FILE`; `workers`: `--workers 2` (SQLite), CPU summed over both workers; `baseline`: the "
                "in-memory server of main.",
                "",
                table,
                "",
                summary + ".",
                "",
            ]
        )
        replace_section(DOC, SECTION, section)
        print(f"wrote the section {SECTION!r} of {DOC.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
