"""Suite benchmark: the README's test command, its wall time and its CPU.

    python bench/bench_suite.py [--rounds N] [--baseline DIR] [--write-docs]

Runs the Quickstart's second command's test run (plain ``pytest`` at the repository
root: the whole suite on one xdist worker per core, see the root conftest.py) in a
fresh process, ``-q``; this checkout as installed (``pip install -e``), a baseline with
its folder first on ``PYTHONPATH``. The CPU
is the run's own and that of every process it started (user + system): the workers, the
servers and browsers they start, orphans included (this process adopts them: Chromium's
renderers end as orphans, about half its CPU). A process the suite leaves running is
named, then killed. With ``--baseline DIR`` (a checkout of
another commit, with its own copy of the repository's test files) the two alternate
run by run, so the machine's load falls on both alike.

Target (issue 29): the Quickstart's test command in 90 s or less on the project's
2-core machine. ``--write-docs`` writes the figures into ``docs/performance.md``
(section "## Test suite: the Quickstart's command").
"""

from __future__ import annotations

import ctypes
import os
import re
import resource
import signal
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from _baseline import checkouts, rounds_baseline_docs
from _docs import replace_section

DOC = ROOT / "docs" / "performance.md"
SECTION = "## Test suite: the Quickstart's command"
TARGET_S = 90.0
COMMAND = ("-m", "pytest", "-q")
SUMMARY = re.compile(r"^=* ?(\d+ passed.*?) in [\d.]+s", re.MULTILINE)


PR_SET_CHILD_SUBREAPER = 36
ORPHANS_WAIT_S = 15.0
SUITE_TIMEOUT_S = 3600.0


def adopt_orphans() -> None:
    """Make this process the reaper of its descendants' orphans (Linux): Chromium's zygote
    and renderers, and any server a test left behind, end as orphans, and without this their
    CPU (half of Chromium's) is counted nowhere."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise SystemExit(f"prctl(PR_SET_CHILD_SUBREAPER): {os.strerror(ctypes.get_errno())}")


def reap_orphans() -> list[int]:
    """Reap the orphans this process adopted; those still running after a while (a process
    the suite leaked) are named, then killed."""
    deadline = time.monotonic() + ORPHANS_WAIT_S
    while time.monotonic() < deadline:  # bounded: orphans end as their parents did
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return []
        if pid == 0:
            time.sleep(0.05)
    leaked = [int(p) for p in os.listdir("/proc") if p.isdigit() and _parent(int(p)) == os.getpid()]
    for pid in leaked:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    return leaked


def _parent(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return int(stat.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return -1


def run(tree: Path) -> tuple[float, float, str]:
    """One run of the suite in ``tree``: wall seconds, CPU seconds of it and every process
    it started (orphans included), pytest's summary."""
    env = dict(os.environ)
    if tree != ROOT:  # this checkout runs as a user's does, from its (editable) install
        env["PYTHONPATH"] = str(tree)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # a user's run reads and writes bytecode caches
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, *COMMAND], cwd=tree, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    read: list[str] = []
    reader = threading.Thread(target=lambda: read.append(proc.stdout.read() if proc.stdout else ""), daemon=True)
    reader.start()
    status = None
    deadline = start + SUITE_TIMEOUT_S
    while status is None and time.monotonic() < deadline:  # bounded: a hung suite is stopped below
        # Orphans are reaped as they end, as init would: a zombie still "exists" for a test
        # that waits for a stopped process's PID to be gone.
        pid, ended = os.waitpid(-1, os.WNOHANG)
        if pid == proc.pid:
            status = ended
        elif pid == 0:
            time.sleep(0.05)
    wall = time.monotonic() - start
    if status is None:
        proc.kill()
        _, status = os.waitpid(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    reader.join()
    output = read[0] if read else ""
    leaked = reap_orphans()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    if proc.returncode != 0:
        raise SystemExit(f"the suite failed in {tree} (exit {proc.returncode}):\n{output[-4000:]}")
    if leaked:
        print(f"{tree}: the suite left {len(leaked)} process(es) running (killed): {leaked}", file=sys.stderr)
    summary = SUMMARY.search(output)
    return wall, cpu, summary.group(1) if summary else "?"


def main() -> None:
    args = rounds_baseline_docs(__doc__ or "", 2)
    trees = checkouts(args.baseline, "conftest.py")
    adopt_orphans()
    runs: dict[str, list[tuple[float, float, str]]] = {label: [] for label in trees}
    loads = []
    for _ in range(args.rounds):
        for label, tree in trees.items():
            loads.append(os.getloadavg()[0])
            runs[label].append(run(tree))
            print(f"{label}: {runs[label][-1][0]:.1f} s wall, {runs[label][-1][1]:.1f} CPU-s, {runs[label][-1][2]}")
    lines = ["| run | wall s (median) | CPU-s (median) | tests |", "| --- | ---: | ---: | --- |"]
    for label, results in runs.items():
        wall = statistics.median(r[0] for r in results)
        cpu = statistics.median(r[1] for r in results)
        lines.append(f"| {label} | {wall:.1f} | {cpu:.1f} | {results[-1][2]} |")
    ours = statistics.median(r[0] for r in runs["this checkout"])
    verdict = "PASS" if ours <= TARGET_S else "FAIL"
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    text = "\n".join(
        [
            f"Measured {when} with `python bench/bench_suite.py --rounds {args.rounds}"
            + (" --baseline DIR" if args.baseline else "")
            + f"` on {os.cpu_count()} cores (load average at each run's start "
            + ", ".join(f"{load:.1f}" for load in loads)
            + f"; Python {sys.version.split()[0]}): plain `pytest -q` at the "
            "repository root, its CPU counting every process it started, orphans included.",
            "",
            *lines,
            "",
            f"Target: {TARGET_S:.0f} s or less: {ours:.1f} s, {verdict}.",
        ]
    )
    print(text)
    if args.write_docs:
        replace_section(DOC, SECTION, f"{SECTION}\n\n{text}\n")


if __name__ == "__main__":
    main()
