"""Start-up benchmark: the CPU a process spends before it does a user's work.

    python bench/bench_startup.py [--rounds N] [--baseline DIR] [--write-docs]

Each case is a fresh ``python`` process; its CPU (user + system, from ``wait4``; a
server's from /proc as its banner is read) is what a user pays each time a test, a CI
step or a container starts it:

- ``python``:                 ``python -c pass``, the interpreter alone (the floor);
- ``import mockllm``:         the package, as ``from mockllm import MockLLM`` loads it;
- ``import mockllm.testing``: the public module the tooling and a user's conftest import;
- ``mockllm serve``:          ``python -m mockllm serve --port 0`` to its banner (started
  and stopped by ``bench/_servers.py``, as ``bench_wire`` does);
- ``harness serve``:          ``python -m harness serve --port 0 --with-mock`` likewise (one
  token configured);
- ``pytest, plugin on``:      ``pytest --collect-only`` of a one-test project, the plugin
  loaded (every run of every project that installs the package pays it);
- ``pytest, plugin off``:     the same with ``-p no:mockllm``.

Cases alternate within each round (and with ``--baseline DIR``, a ``git archive`` of
another checkout, each case runs there right after here), so the machine's load falls on
both alike; the figures are medians over rounds and the ratio is the median of the
per-round ratios. ``--write-docs`` writes them into ``docs/performance.md`` (section
"## Start-up: import, serve and the plugin").
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from _baseline import checkouts, rounds_baseline_docs
from _docs import replace_section
from _servers import start_server, stop_server

DOC = ROOT / "docs" / "performance.md"
SECTION = "## Start-up: import, serve and the plugin"
TOKENS = '{"tok-bench": {"user": "ada", "organization": "acme"}}'  # harness serve refuses to start without


@dataclass(frozen=True)
class Case:
    name: str
    argv: tuple[str, ...]
    serves: bool = False  # runs until signalled: measured and stopped once its banner names its URL


def cases(project: Path) -> list[Case]:
    collect = ("-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", str(project))
    return [
        Case("python", ("-c", "pass")),
        Case("import mockllm", ("-c", "from mockllm import MockLLM")),
        Case("import mockllm.testing", ("-c", "import mockllm.testing")),
        Case("mockllm serve", ("-m", "mockllm", "serve", "--port", "0"), serves=True),
        Case("harness serve", ("-m", "harness", "serve", "--port", "0", "--with-mock"), serves=True),
        Case("pytest, plugin on", collect),
        Case("pytest, plugin off", (*collect, "-p", "no:mockllm")),
    ]


def cpu_of(case: Case, tree: Path, workdir: Path) -> float:
    """Run ``case`` with ``tree``'s packages first on the path; its CPU in seconds (a
    server's to its banner: ``bench/_servers.py`` starts and stops it)."""
    if case.serves:
        server = start_server(case.name.replace(" ", "-"), list(case.argv), workdir, tree)
        try:
            return server.cpu_ns() / 1e9
        finally:
            stop_server(server)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(tree), os.environ.get("PYTHONPATH")])))
    proc = subprocess.Popen(
        [sys.executable, *case.argv], cwd=tree, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL
    )
    _, status, usage = os.wait4(proc.pid, 0)
    code = proc.returncode = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise SystemExit(f"{case.name} in {tree} exited {code}")
    return usage.ru_utime + usage.ru_stime


def measure(trees: dict[str, Path], rounds: int, project: Path) -> dict[tuple[str, str], list[float]]:
    samples: dict[tuple[str, str], list[float]] = {}
    for _ in range(rounds):
        for case in cases(project):
            for label, tree in trees.items():
                samples.setdefault((case.name, label), []).append(cpu_of(case, tree, project))
    return samples


def report(samples: dict[tuple[str, str], list[float]], labels: list[str], rounds: int, project: Path) -> str:
    header = "| case | " + " | ".join(f"{label} CPU ms" for label in labels)
    rule = "| --- | " + " | ".join("---:" for _ in labels)
    if len(labels) == 2:
        header += " | ratio |"
        rule += " | ---: |"
    else:
        header += " |"
        rule += " |"
    lines = [header, rule]
    for case in cases(project):
        medians = [statistics.median(samples[(case.name, label)]) * 1000 for label in labels]
        row = f"| {case.name} | " + " | ".join(f"{m:.0f}" for m in medians)
        if len(labels) == 2:
            ours, base = (samples[(case.name, label)] for label in labels)
            row += f" | {statistics.median(a / b for a, b in zip(ours, base, strict=True)):.2f}x"
        lines.append(row + " |")
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    load = os.getloadavg()[0]
    note = (
        f"Measured {when} with `python bench/bench_startup.py --rounds {rounds}"
        + (" --baseline DIR" if len(labels) == 2 else "")
        + f"` (load average {load:.1f}, Python {sys.version.split()[0]}): each case a fresh process, "
        "its CPU (user + system) from `wait4`, a server's to its banner from /proc; medians over rounds, cases "
        "alternating" + (", the ratio the median of per-round ratios." if len(labels) == 2 else ".")
    )
    return "\n".join([note, "", *lines])


def main() -> None:
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # a user's run reads and writes bytecode caches
    os.environ["HARNESS_CHAIN_TOKENS"] = TOKENS
    args = rounds_baseline_docs(__doc__ or "", 7)
    trees = checkouts(args.baseline, "mockllm/__init__.py")
    with tempfile.TemporaryDirectory() as folder:
        project = Path(folder)
        (project / "test_one.py").write_text("def test_one():\n    assert True\n", encoding="utf-8")
        samples = measure(trees, args.rounds, project)
        table = report(samples, list(trees), args.rounds, project)
    print(table)
    if args.write_docs:
        replace_section(DOC, SECTION, f"{SECTION}\n\n{table}\n")


if __name__ == "__main__":
    main()
