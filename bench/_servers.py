"""Server processes for ``bench/bench_wire.py``: start, CPU time from /proc, stop by PID."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Server", "start_server", "stop_server"]


@dataclass
class Server:
    """A server process the benchmark started, and its CPU time read from /proc."""

    name: str
    proc: subprocess.Popen[bytes]
    root: str
    log: Path
    schedstat: bool = field(default=True)

    def cpu_ns(self) -> int:
        """CPU time of all the process's threads, in ns (schedstat; stat ticks if absent)."""
        if self.schedstat:
            total = 0
            try:
                for tid in os.listdir(f"/proc/{self.proc.pid}/task"):
                    with open(f"/proc/{self.proc.pid}/task/{tid}/schedstat") as handle:
                        total += int(handle.read().split()[0])
                return total
            except (OSError, ValueError, IndexError):
                self.schedstat = False
        return self.stat_ns()

    def stat_ns(self) -> int:
        """utime + stime from /proc/<pid>/stat (clock-tick resolution), in ns."""
        with open(f"/proc/{self.proc.pid}/stat") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        ticks = int(fields[11]) + int(fields[12])  # utime, stime (fields 14, 15)
        return ticks * 1_000_000_000 // os.sysconf("SC_CLK_TCK")


def start_server(name: str, argv: list[str], workdir: Path, root: Path) -> Server:
    """Run ``python ARGV`` in ``root`` (importable first) and wait for its first line,
    which names the URL it serves on (``http://127.0.0.1:PORT``)."""
    log = workdir / f"{name}.stderr"
    out = workdir / f"{name}.stdout"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")])))
    with open(log, "wb") as err, open(out, "wb") as stdout:
        proc = subprocess.Popen(
            [sys.executable, *argv], cwd=root, env=env, stdin=subprocess.DEVNULL, stdout=stdout, stderr=err
        )
    server = Server(name, proc, "", log)
    deadline = time.monotonic() + 30
    first = ""
    while time.monotonic() < deadline and proc.poll() is None:  # bounded wait for the first line
        text = out.read_text(errors="replace")
        if "\n" in text:
            first = text.split("\n", 1)[0]
            break
        time.sleep(0.05)
    match = re.search(r"(http://127\.0\.0\.1:\d+)", first)
    if match is None:
        stop_server(server)
        raise RuntimeError(f"{name} did not start: {first!r}\n{log.read_text(errors='replace')[-2000:]}")
    server.root = match.group(1)
    return server


def stop_server(server: Server) -> None:
    """SIGTERM the server's process (by its PID), then kill it if it lingers."""
    proc = server.proc
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
