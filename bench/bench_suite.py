"""Suite benchmark: the README's test command, its wall time and its CPU.

    python bench/bench_suite.py [--rounds N] [--baseline DIR] [--write-docs]

Runs the Quickstart's second command's test run (plain ``pytest`` at the repository
root: the whole suite on one xdist worker per core, see the root conftest.py) in a
fresh process, ``-q -p no:cacheprovider`` so no run warms the next one's cache. The CPU
is the run's own and its children's (user + system, ``wait4``): the workers, the servers
and browsers they start, once they are reaped. With ``--baseline DIR`` (a checkout of
another commit, with its own copy of the repository's test files) the two alternate
run by run, so the machine's load falls on both alike.

Target (issue 29): the Quickstart's test command in 90 s or less on the project's
2-core machine. ``--write-docs`` writes the figures into ``docs/performance.md``
(section "## Test suite: the Quickstart's command").
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from _docs import replace_section

DOC = ROOT / "docs" / "performance.md"
SECTION = "## Test suite: the Quickstart's command"
TARGET_S = 90.0
COMMAND = ("-m", "pytest", "-q", "-p", "no:cacheprovider")
SUMMARY = re.compile(r"^=* ?(\d+ passed.*?) in [\d.]+s", re.MULTILINE)


def run(tree: Path) -> tuple[float, float, str]:
    """One run of the suite in ``tree``: wall seconds, CPU seconds, pytest's summary."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # a user's run reads and writes bytecode caches
    start = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, *COMMAND], cwd=tree, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    with proc.stdout:
        output = proc.stdout.read()  # to pytest's exit (Popen.wait would reap it without its rusage)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"the suite failed in {tree} (exit {proc.returncode}):\n{output[-4000:]}")
    summary = SUMMARY.search(output)
    return wall, usage.ru_utime + usage.ru_stime, summary.group(1) if summary else "?"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--baseline", type=Path, help="another checkout to run alternately")
    parser.add_argument("--write-docs", action="store_true")
    args = parser.parse_args()
    trees = {"this checkout": ROOT}
    if args.baseline:
        if not (args.baseline / "conftest.py").exists():
            raise SystemExit(f"--baseline {args.baseline}: no repository checkout there (no conftest.py)")
        trees["baseline"] = args.baseline.resolve()
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
            + f"; Python {sys.version.split()[0]}): plain `pytest -q -p no:cacheprovider` at the "
            "repository root, its CPU counting the children it reaped.",
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
