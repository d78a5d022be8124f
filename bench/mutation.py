"""Mutation testing of the seed-rule code with mutmut, area by area.

    python bench/mutation.py [AREA ...] [--max-children N] [--show-survivors]
    python bench/mutation.py --write-pyproject

It is a measurement, not a test. mutmut changes the code one small edit at a time (a
``<`` for a ``<=``, a dropped call, a string altered) and runs the tests that cover the
edited function; a mutant the tests do not notice "survives". Each area is mutated on
its own, with the tests that exercise it, so an area's run stays short:

    selection   mockllm/_selection.py            the mock's instruction selection (seed 003)
    invariants  harness/invariants/*             the seed 002 flow checks
    agent       harness/systems/agent/*, harness/events.py   runner, approvals, emitter, store (seed 002)
    planner     harness/systems/planner/*                plan validation, ADR-002 (seed 004)
    chain       harness/systems/chain/*                  the chain executor (seeds 000/001)
    isolation   the organization filters of the chain, the service and the identity store
                (seed 001 §6.2): only those functions' mutants are run (``Area.functions``)
    verdict     mockllm/_verdict.py, _tool_check.py, _steps.py   the rule every door applies

No AREA runs them all. Each area runs in ``bench/results/mutation/<area>/`` (git-ignored),
from scratch: the project's ``pyproject.toml`` with its ``[tool.mutmut]`` section narrowed
to the area, and links to the sources and tests; mutmut's working copy is that folder's
``mutants/``. The script prints, per area, the mutants and how many were killed, survived,
timed out or had no test, writes ``bench/results/mutation/summary.json``, and with
``--show-survivors`` each survivor's diff (``mutmut show``) to ``<area>/survivors.txt``.
To look at one survivor afterwards: ``cd bench/results/mutation/<area> && mutmut show NAME``.

``--max-children`` is how many mutants run at once (default 2: the machine's two cores).
mutmut first runs the area's tests once, recording which tests reach which function and
how long each takes; then each mutant runs only the tests that reach its function, in
a forked process stopped after ``TIMEOUT``. That limit is wall-clock time, so on a busy
machine a mutant starved of CPU can time out though its tests would pass: every mutant
that timed out is run again with ``RECHECK`` times the limit, and only what times out
again counts as a timeout (caught: the mutant made a wait never end).

The areas are named here only. ``[tool.mutmut]`` of pyproject.toml, which a plain
``mutmut run`` from the root reads, is their union: ``--write-pyproject`` writes it from
``AREAS``, and ``tests/test_mutation_areas.py`` fails when the two differ or an area
names a file or test that does not exist.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from fnmatch import fnmatch
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: mutmut brings toml
    import toml as tomllib  # type: ignore[no-redef]

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results" / "mutation"
LINKED = ("harness", "mockllm", "tests", "scenarios", "golden", "conftest.py")

# mutmut's exit codes of a mutant's test run (mutmut.stats.status_by_exit_code).
STATUS = {
    1: "killed",
    3: "killed",
    0: "survived",
    5: "no tests",
    33: "no tests",
    34: "skipped",
    36: "timeout",
    -24: "timeout",
    24: "timeout",
    152: "timeout",
    255: "timeout",
    37: "caught by type check",
    None: "not checked",
}


@dataclass(frozen=True)
class Area:
    mutate: tuple[str, ...]
    tests: tuple[str, ...]
    functions: tuple[str, ...] = ()
    """Mutant-name patterns (``fnmatch``) to run; empty: every mutant of ``mutate``."""

    def selects(self, mutant: str) -> bool:
        return not self.functions or any(fnmatch(mutant, pattern) for pattern in self.functions)


_SEPARATOR = "\u01c1"  # mutmut's separator of class and method in a mutant's name


def _mutants(module: str, *functions: str) -> tuple[str, ...]:
    """The mutant-name patterns of ``functions`` of ``module`` (``Class.method`` or ``function``)."""
    names = ("x" + _SEPARATOR + f.replace(".", _SEPARATOR) if "." in f else f"x_{f}" for f in functions)
    return tuple(f"{module}.{name}__mutmut_*" for name in names)


AREAS = {
    "selection": Area(
        ("mockllm/_selection.py",),
        (
            "tests/mockllm/test_selection_properties.py",
            "tests/mockllm/test_instructions.py",
            "tests/mockllm/test_seed_acceptance.py",
            "tests/mockllm/test_seed_acceptance_loops.py",
            "tests/mockllm/test_explain.py",
            "tests/mockllm/test_generation.py",
            # starts fresh interpreters, and reads no selection
            "--deselect",
            "tests/mockllm/test_generation.py::test_same_chain_turn_and_seed_give_the_same_plan_in_fresh_processes",
        ),
    ),
    # The bundled scenarios are tests too: their goldens hold every field of every event.
    "invariants": Area(
        ("harness/invariants/*",),
        (
            "tests/harness/test_invariants.py",
            "tests/harness/test_chain_invariants.py",
            "tests/harness/systems/agent",
            "scenarios",
        ),
    ),
    "agent": Area(
        ("harness/systems/agent/*", "harness/events.py"),
        ("tests/harness/systems/agent", "tests/harness/test_invariants.py", "scenarios"),
    ),
    "planner": Area(
        ("harness/systems/planner/*",),
        (
            "tests/harness/systems/planner",
            *(
                f"scenarios/planner_{name}.yaml"
                for name in ("calculator", "division_by_zero", "planning_failure", "simple_chat")
            ),
        ),
    ),
    # The chain scenarios' goldens hold every field of every chain event, as for the planner.
    "chain": Area(
        ("harness/systems/chain/*",),
        (
            "tests/harness/systems/chain",
            *(f"scenarios/{path.name}" for path in sorted((ROOT / "scenarios").glob("chain_*.yaml"))),
        ),
    ),
    # Every organization-scoped read: plans, configs, policies, characters, identity,
    # vectors, MCP resources and subscriptions, WebSocket status (seed 001 §6.2).
    "isolation": Area(
        (
            "harness/systems/chain/isolation.py",
            "harness/systems/chain/store.py",
            "harness/systems/chain/uris.py",
            "harness/systems/chain/characters.py",
            "harness/systems/service/resources.py",
            "harness/systems/service/core.py",
            "harness/systems/service/mcp_chain.py",
            "harness/systems/service/mcp_subscriptions.py",
            "harness/systems/identity/store.py",
        ),
        (
            "tests/harness/systems/chain/test_chain_isolation.py",
            "tests/harness/systems/chain/test_chain_scoping.py",
            "tests/harness/systems/service/test_isolation.py",
            "tests/harness/systems/service/test_isolation_doors.py",
            "tests/harness/systems/service/test_isolation_subscriptions.py",
            "tests/harness/systems/service/test_org_scoping.py",
            "tests/harness/systems/identity",
            # the character tools' own rules (by name or description, the caller's permissions)
            "tests/harness/systems/chain/test_chain_seed_rules_steps.py::"
            "test_the_character_tools_find_by_name_or_description_and_keep_the_callers_permissions",
        ),
        (
            "harness.systems.chain.isolation.*",
            *_mutants(
                "harness.systems.chain.store",
                "SQLitePlanStore.save",
                "SQLitePlanStore.load",
                "SQLitePlanStore.list_ids",
            ),
            *_mutants("harness.systems.chain.uris", "resolve_name"),
            *_mutants("harness.systems.chain.characters", "read_character", "character_tools"),
            *_mutants("harness.systems.service.resources", "resources_for"),
            *_mutants(
                "harness.systems.service.core",
                *(
                    f"ChainService.{method}"
                    for method in (
                        "resources",
                        "_check_data_references",
                        "executor",
                        "subscribe",
                        "unsubscribe",
                        "wait",
                        "cancel",
                        "plan",
                        "plan_by_uri",
                        "status",
                    )
                ),
            ),
            *_mutants(
                "harness.systems.service.mcp_chain", "_ChainHandlers.list_resources", "_ChainHandlers.read_resource"
            ),
            *_mutants(
                "harness.systems.service.mcp_subscriptions", "PlanSubscriptions.plan", "PlanSubscriptions.listen"
            ),
            *_mutants(
                "harness.systems.identity.store",
                *(
                    f"SQLiteIdentityStore.{method}"
                    for method in (
                        "insert",
                        "update",
                        "touch",
                        "get",
                        "kind_of",
                        "list",
                        "delete",
                        "members",
                        "set_members",
                        "groups_of",
                    )
                ),
            ),
        ),
    ),
    # The one rule of docs/strictness.md: what may make a green test untrustworthy.
    "verdict": Area(
        ("mockllm/_verdict.py", "mockllm/_tool_check.py", "mockllm/_steps.py"),
        ("tests/mockllm/test_verdict.py", "tests/mockllm/test_intercept_block.py"),
    ),
}


TIMEOUT = {"timeout_multiplier": 15.0, "timeout_constant": 1.0}
"""mutmut's per-mutant limit, its defaults written out: a mutant's tests get
``(their measured time + 1 s) x 15`` seconds of wall clock (twice that of CPU) before the
mutant counts as a timeout (caught). Not tighter: on a loaded machine a slow mutant
that survives must not be counted as a timeout."""

RECHECK = 4
"""How many times longer a mutant that timed out is given when it is run again."""

_SECTION = re.compile(r"^\[tool\.mutmut\]\n.*?(?=^\[)", re.M | re.S)


def _covered(test: str, by: str) -> bool:
    """Whether pytest argument ``test`` is inside ``by`` (a folder, or a file with its node ids)."""
    return test != by and (test.startswith(by + "/") or test.startswith(by + "::"))


def whole_run() -> dict[str, list[str]]:
    """What ``mutmut run`` from the repository root mutates and runs: every area's files and
    tests, each once. ``[tool.mutmut]`` in pyproject.toml must say the same (a test checks
    it; ``--write-pyproject`` writes it), so the areas are named in one place: ``AREAS``.
    The root run mutates whole files: the ``isolation`` area's function selection is the
    script's (its files' other functions belong to no other area and are mutated too)."""
    mutate = list(dict.fromkeys(path for area in AREAS.values() for path in area.mutate))
    mutate = [path for path in mutate if not any(path != by and fnmatch(path, by) for by in mutate)]
    tests: list[str] = []
    deselected: list[str] = []
    for area in AREAS.values():
        arguments = iter(area.tests)
        for argument in arguments:
            if argument == "--deselect":
                deselected += [argument, next(arguments)]
            elif argument not in tests:
                tests.append(argument)
    tests = [test for test in tests if not any(_covered(test, by) for by in tests)]
    return {"only_mutate": mutate, "pytest_add_cli_args_test_selection": tests + deselected, **TIMEOUT}


def _toml(value: object) -> str:
    """``value`` in TOML (JSON's spelling of strings, numbers, booleans and arrays is TOML's);
    a long array one item a line."""
    flat = json.dumps(value)
    if not isinstance(value, list) or len(flat) <= 100:
        return flat
    return "[\n" + "".join(f"    {json.dumps(item)},\n" for item in value) + "]"


def _with_section(text: str, settings: dict[str, object], comment: str = "") -> str:
    if not _SECTION.search(text):
        raise SystemExit("pyproject.toml has no [tool.mutmut] section followed by another section")
    body = "".join(f"{key} = {_toml(value)}\n" for key, value in settings.items())
    return _SECTION.sub(lambda _: f"[tool.mutmut]\n{comment}{body}\n", text)


def root_pyproject() -> str:
    """The project's pyproject.toml with ``[tool.mutmut]`` naming every area (``whole_run``)."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    comment = (
        "# Mutation testing of the seed-rule code (docs/mutation.md). `python bench/mutation.py`\n"
        "# runs it area by area; `mutmut run` here runs every area at once. Written by\n"
        "# `python bench/mutation.py --write-pyproject` from the script's AREAS: edit those.\n"
    )
    return _with_section(text, {**tomllib.loads(text)["tool"]["mutmut"], **whole_run()}, comment)


def area_pyproject(area: Area, timeout: dict[str, float] = TIMEOUT) -> str:
    """The project's pyproject.toml with ``[tool.mutmut]`` narrowed to ``area``."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    settings = {
        **tomllib.loads(text)["tool"]["mutmut"],
        "only_mutate": list(area.mutate),
        "pytest_add_cli_args_test_selection": list(area.tests),
        "use_git_change_detection": False,
        **timeout,
    }
    return _with_section(text, settings)


def prepare(name: str, area: Area) -> Path:
    work = RESULTS / name
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    for entry in LINKED:
        (work / entry).symlink_to(ROOT / entry, target_is_directory=(ROOT / entry).is_dir())
    (work / "pyproject.toml").write_text(area_pyproject(area), encoding="utf-8")
    return work


def show(work: Path, mutant: str) -> str:
    """``mutmut show``: the mutant's diff."""
    return subprocess.run(
        [sys.executable, "-m", "mutmut", "show", mutant], cwd=work, text=True, capture_output=True
    ).stdout


def outcomes(work: Path) -> dict[str, str]:
    """Each mutant's status, read from mutmut's ``.meta`` files."""
    found: dict[str, str] = {}
    for meta in sorted((work / "mutants").rglob("*.py.meta")):
        for key, code in json.loads(meta.read_text(encoding="utf-8"))["exit_code_by_key"].items():
            found[key] = STATUS.get(code, "suspicious")
    return found


def run_area(name: str, area: Area, max_children: int, show_survivors: bool) -> dict[str, object]:
    work = prepare(name, area)
    started = time.monotonic()

    def mutmut_run(*mutants: str) -> int:
        with open(work / "mutmut-run.log", "a", encoding="utf-8") as log:  # follow it with tail -f
            return subprocess.run(
                [sys.executable, "-m", "mutmut", "run", "--max-children", str(max_children), *mutants],
                cwd=work,
                stdout=log,
                stderr=subprocess.STDOUT,
            ).returncode

    code = mutmut_run(*area.functions)
    found = {key: status for key, status in outcomes(work).items() if area.selects(key)}
    timeouts = sorted(k for k, status in found.items() if status == "timeout")
    if code == 0 and timeouts:
        # mutmut's limit is wall-clock time: on a busy machine a mutant starved of CPU
        # times out though its tests would pass. Each is run again with RECHECK times
        # the limit; what still times out counts as a timeout.
        longer = {key: value * RECHECK if key == "timeout_multiplier" else value for key, value in TIMEOUT.items()}
        (work / "pyproject.toml").write_text(area_pyproject(area, longer), encoding="utf-8")
        code = mutmut_run(*timeouts)
        found = {key: status for key, status in outcomes(work).items() if area.selects(key)}
    seconds = round(time.monotonic() - started)
    if code != 0 or not found:
        raise SystemExit(f"{name}: mutmut run failed (exit {code}); see {work / 'mutmut-run.log'}")
    survivors = sorted(k for k, status in found.items() if status == "survived")
    if show_survivors:
        diffs = [show(work, key) for key in survivors]
        (work / "survivors.txt").write_text("\n".join(diffs), encoding="utf-8")
    counts = Counter(found.values())
    return {
        "area": name,
        "mutate": list(area.mutate),
        "tests": list(area.tests),
        "mutants": len(found),
        **{status: counts.get(status, 0) for status in ("killed", "survived", "timeout", "no tests")},
        "other": sum(n for s, n in counts.items() if s not in ("killed", "survived", "timeout", "no tests")),
        "seconds": seconds,
        "survivors": survivors,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("areas", nargs="*", metavar="AREA", help=f"areas to mutate (default: all): {', '.join(AREAS)}")
    parser.add_argument("--max-children", type=int, default=2, help="mutants run at once (default 2)")
    parser.add_argument("--show-survivors", action="store_true", help="write each survivor's diff to survivors.txt")
    parser.add_argument(
        "--write-pyproject", action="store_true", help="write [tool.mutmut] of pyproject.toml from the areas, and stop"
    )
    options = parser.parse_args(argv)
    if options.write_pyproject:
        (ROOT / "pyproject.toml").write_text(root_pyproject(), encoding="utf-8")
        print("pyproject.toml: [tool.mutmut] names every area's files and tests")
        return 0
    if importlib.util.find_spec("mutmut") is None:
        parser.error('mutmut is not installed: pip install -e ".[dev]" (or pip install "mutmut>=3.8")')
    names = options.areas or list(AREAS)
    unknown = [n for n in names if n not in AREAS]
    if unknown:
        parser.error(f"unknown area(s) {unknown}; the areas are {list(AREAS)}")
    print(f"{'area':<11} {'mutants':>7} {'killed':>6} {'survived':>8} {'timeout':>7} {'no tests':>8} {'seconds':>7}")
    summary = RESULTS / "summary.json"
    for name in names:
        row = run_area(name, AREAS[name], options.max_children, options.show_survivors)
        print(
            f"{name:<11} {row['mutants']:>7} {row['killed']:>6} {row['survived']:>8} {row['timeout']:>7} "
            f"{row['no tests']:>8} {row['seconds']:>7}",
            flush=True,
        )
        recorded = json.loads(summary.read_text(encoding="utf-8")) if summary.exists() else {}
        recorded[name] = {**row, "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")}
        summary.write_text(json.dumps(recorded, indent=2) + "\n", encoding="utf-8")
    print(f"survivors by name: {summary}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
