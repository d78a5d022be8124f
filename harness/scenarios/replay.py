"""Replaying a scenario: run it under each protocol, check it, compare its golden.

One golden per scenario, ``golden/scenarios/<name>.golden``: every protocol must
produce the same table after normalisation, so a protocol that behaves differently is
a failure naming that protocol. A run is fully determined by the scenario (the mock is
stateless and seeded), so the golden is byte-identical on every run, in process or
against the loopback server, under any number of xdist workers.
"""

from __future__ import annotations

import asyncio
import difflib
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import httpx2

from harness import invariants
from harness.golden.table import render_event_table
from harness.llm import model_client
from harness.scenarios.model import Scenario
from harness.scenarios.runners import ScenarioRun, get_runner
from mockllm.engine import MockLLM
from mockllm.transports import HTTPX2Transport

__all__ = ["ReplayOutcome", "golden_path", "golden_text_for", "replay_scenario", "run_scenario"]

Status = Literal["passed", "written", "differs", "missing", "broken", "error"]

_FLOW_CHECKS = {
    "simple_message": invariants.check_simple_message_flow,
    "extended_thinking": invariants.check_extended_thinking_flow,
    "tool_use": invariants.check_tool_use_flow,
    "approval": invariants.check_approval_flow,
    "error": invariants.check_error_flow,
    "attachment": invariants.check_attachment_flow,
    "chain": invariants.check_chain_flow,
}


@dataclass
class ReplayOutcome:
    """What replaying one scenario under one protocol found."""

    scenario: str
    protocol: str
    status: Status
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.status in ("passed", "written")


def golden_path(golden_dir: Path, scenario: Scenario) -> Path:
    return golden_dir / "scenarios" / f"{scenario.name}.golden"


async def run_scenario(scenario: Scenario, protocol: str, *, base_url: str | None = None,
                       seed: int = 0) -> ScenarioRun:
    """Run ``scenario`` under ``protocol`` against a fresh in-process mock, or the
    server at ``base_url``."""
    runner = get_runner(scenario.runner)
    http = None if base_url else httpx2.AsyncClient(transport=HTTPX2Transport(MockLLM(seed=seed)))
    client = model_client(protocol, base_url=base_url, http_client=http)
    try:
        return await runner(scenario, client)
    finally:
        await client.aclose()


def golden_text_for(scenario: Scenario, run: ScenarioRun) -> str:
    """The golden file's text: a short header, then the event table."""
    outcome = "success" if run.success else f"failure: {run.error}"
    header = f"# scenario: {scenario.name}\n# runner: {scenario.runner}\n# outcome: {outcome}\n"
    return header + render_event_table(run.events)


def check_expectations(scenario: Scenario, run: ScenarioRun) -> str | None:
    """Why the run breaks the scenario's expectations, or None."""
    expect = scenario.expect
    if run.success != expect.success:
        wanted = "succeed" if expect.success else "fail"
        return f"the run was expected to {wanted}, but it {'succeeded' if run.success else 'failed'}: {run.error}"
    if expect.error_contains is not None and expect.error_contains not in (run.error or ""):
        return f"the error {run.error!r} does not contain {expect.error_contains!r}"
    if expect.flow is not None:
        try:
            _FLOW_CHECKS[expect.flow](run.events)
        except invariants.InvariantError as exc:
            return str(exc)
    return None


def _write_atomically(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(tmp, path)


def compare_golden(path: Path, text: str, *, label: str) -> str | None:
    """A unified diff of ``text`` against the golden at ``path``, or None if equal."""
    expected = path.read_text(encoding="utf-8")
    if expected == text:
        return None
    return "".join(difflib.unified_diff(expected.splitlines(keepends=True), text.splitlines(keepends=True),
                                        fromfile=str(path), tofile=label))


def replay_scenario(scenario: Scenario, *, golden_dir: Path, protocols: Sequence[str] | None = None,
                    base_url: str | None = None, update: bool = False) -> list[ReplayOutcome]:
    """Replay ``scenario`` under each protocol; see the module docstring."""
    path = golden_path(golden_dir, scenario)
    outcomes: list[ReplayOutcome] = []
    texts: dict[str, str] = {}
    for protocol in protocols or scenario.protocol_list:
        try:
            run = asyncio.run(run_scenario(scenario, protocol, base_url=base_url))
        except Exception as exc:  # reported per scenario; the other scenarios still run
            outcomes.append(ReplayOutcome(scenario.name, protocol, "error", f"{type(exc).__name__}: {exc}"))
            continue
        problem = check_expectations(scenario, run)
        if problem is not None:
            outcomes.append(ReplayOutcome(scenario.name, protocol, "broken", problem))
            continue
        texts[protocol] = text = golden_text_for(scenario, run)
        first = next(iter(texts.values()))
        if update and text != first:
            diff = "".join(difflib.unified_diff(first.splitlines(True), text.splitlines(True),
                                                fromfile=next(iter(texts)), tofile=protocol))
            outcomes.append(ReplayOutcome(scenario.name, protocol, "differs",
                                          f"{protocol} behaves differently from {next(iter(texts))}:\n{diff}"))
        elif update:
            _write_atomically(path, text)
            outcomes.append(ReplayOutcome(scenario.name, protocol, "written", str(path)))
        elif not path.exists():
            outcomes.append(ReplayOutcome(scenario.name, protocol, "missing",
                                          f"no golden at {path}; run with --update to write it"))
        else:
            diff = compare_golden(path, text, label=f"{scenario.name} under {protocol}")
            outcomes.append(ReplayOutcome(scenario.name, protocol, "differs" if diff else "passed", diff or ""))
    return outcomes


def unused_goldens(golden_dir: Path, names: set[str]) -> list[Path]:
    """Scenario goldens no scenario of that name produces."""
    folder = golden_dir / "scenarios"
    return sorted(p for p in folder.glob("*.golden") if p.stem not in names) if folder.is_dir() else []
