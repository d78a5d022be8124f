"""Replaying a scenario: run it under one protocol, check its expectations, and give
the golden it is compared with.

One golden per scenario, ``golden/scenarios/<file stem>.golden``, shared by every
protocol it runs under: each must produce the same table after normalisation, so a
protocol that behaves differently fails. Storing and comparing goldens is syrupy's
job (``harness.golden.extension.ScenarioGoldenExtension``); running them is pytest's
(``harness.plugin.scenario_collection``). A run is fully determined by the scenario (the
mock is stateless and seeded), so the golden is byte-identical on every run, in
process or against the loopback server, under any number of xdist workers.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from harness import invariants
from harness.events import Event
from harness.flows import FLOW_CHECKS
from harness.scenarios.contract import MockClients, RunnerContext, ScenarioRun, ScenarioRunner, play
from harness.scenarios.model import Scenario
from harness.scenarios.registry import resolve_runner
from mockllm import JournalEntry, explain

__all__ = [
    "ScenarioGolden",
    "check_expectations",
    "run_scenario",
    "scenario_golden",
    "unsent_scripts",
    "unspoken_protocol",
]


@dataclass(frozen=True)
class ScenarioGolden:
    """What a scenario's golden records: a short header, then the events' table."""

    golden_header: str
    events: list[Any]


def scenario_golden(scenario: Scenario, run: ScenarioRun) -> ScenarioGolden:
    outcome = "success" if run.success else f"failure: {run.error}"
    header = f"# scenario: {scenario.name}\n# runner: {scenario.runner}\n# outcome: {outcome}\n"
    return ScenarioGolden(header, run.events)


async def run_scenario(
    scenario: Scenario, protocol: str, mock: MockClients, *, runner: ScenarioRunner | None = None, seed: int = 0
) -> ScenarioRun:
    """Play ``scenario`` under ``protocol`` against ``mock`` with its runner (or ``runner``).

    Where ``mock`` has a ``journal`` (the plugin's fixtures do), the run notes what it did
    not play, which ``check_expectations`` reports: a protocol it never spoke
    (``ScenarioRun.unspoken_protocol``: an item per protocol that passes in another one
    tests nothing of its own), and a script whose prompt it never sent (``unsent_scripts``:
    the mock counts the unused steps of the chains it saw only)."""
    run = await play(runner or resolve_runner(scenario.runner), RunnerContext(scenario, protocol, mock, seed))
    journal = getattr(mock, "journal", None)
    if journal is not None:
        entries = list(journal)
        run.unspoken_protocol = unspoken_protocol(protocol, entries)
        run.unsent_scripts = unsent_scripts(scenario, entries)
    return run


def unspoken_protocol(protocol: str, journal: Iterable[JournalEntry]) -> str | None:
    """Why a run that reached the mock never in ``protocol``, only in others, is no run
    of it; None when it spoke ``protocol`` (or asked nothing)."""
    spoken = sorted({entry.protocol for entry in journal if entry.protocol is not None})
    if not spoken or protocol in spoken:
        return None
    return (
        f"the runner sent its requests in {', '.join(spoken)}, never in {protocol}, the protocol of this item. "
        "Speak context.protocol (context.model_client(), or a client for it), or declare the protocols the "
        f"runner speaks with @speaks({', '.join(repr(p) for p in spoken)}) so that only those get items."
    )


def _chain_id(tagged_prompt: str) -> str | None:
    """The chain id the mock gives the script in ``tagged_prompt`` (as its journal does)."""
    return explain({"model": "scenario", "messages": [{"role": "user", "content": tagged_prompt}]}).chain_id


def unsent_scripts(scenario: Scenario, journal: Iterable[JournalEntry]) -> str | None:
    """Which of the scenario's scripts (``script``, each ``turns[i].script``) no request
    in ``journal`` carried, said with the fix; None when every one was sent."""
    seen = {entry.chain_id for entry in journal if entry.chain_id is not None}
    scripted = [("script", scenario.prompt, scenario.script, scenario.tagged_prompt())]
    scripted += [(f"turns[{i}].script", t.prompt, t.script, t.tagged_prompt()) for i, t in enumerate(scenario.turns)]
    unsent = [
        f"{where} (prompt {prompt!r}, {len(script)} step{'s' if len(script) != 1 else ''})"
        for where, prompt, script, tagged in scripted
        if script and _chain_id(tagged) not in seen
    ]
    if not unsent:
        return None
    return (
        f"no request to the mock carried {', '.join(unsent)}, so none of its steps "
        "was reached: the runner never sent that prompt. Send the prompt with its script attached "
        "(context.scenario.tagged_prompt(), each turn's tagged_prompt()), or allow it with "
        "allow_unused_steps: true."
    )


def check_expectations(scenario: Scenario, run: ScenarioRun) -> str | None:
    """Why the run breaks the scenario's expectations, or None. First: what it did not
    play (a protocol never spoken; a script never sent, which ``allow_unused_steps``
    allows, like a step never reached)."""
    if run.unspoken_protocol is not None:
        return run.unspoken_protocol
    if run.unsent_scripts is not None and not scenario.allow_unused_steps:
        return run.unsent_scripts
    expect = scenario.expect
    if run.success != expect.success:
        wanted = "succeed" if expect.success else "fail"
        return f"the run was expected to {wanted}, but it {'succeeded' if run.success else 'failed'}: {run.error}"
    if expect.error_contains is not None and expect.error_contains not in (run.error or ""):
        return f"the error {run.error!r} does not contain {expect.error_contains!r}"
    if expect.flow is not None:
        try:
            if scenario.turns:
                return _check_session(scenario, run.events)
            FLOW_CHECKS[expect.flow](run.events)
        except invariants.InvariantError as exc:
            return str(exc)
    return None


def _check_session(scenario: Scenario, events: list[Any]) -> str | None:
    """A session of several messages: its sequence numbers run on across the runs, and
    each run passes its flow from the number the session had reached."""
    records = [e.to_json_dict() if isinstance(e, Event) else dict(e) for e in events]
    starts = [i for i, r in enumerate(records) if r.get("type") == "user_message_sent"]
    flows = scenario.flows
    if len(starts) != len(flows):
        return (
            f"the scenario's session has {len(flows)} messages, but its events hold {len(starts)} "
            "user_message_sent (one per message)"
        )
    invariants.check_sequence_numbers(records)
    numbered = [
        (k, r["sequenceNumber"])
        for k, r in enumerate(filter(_takes_a_number, records))
        if r.get("sequenceNumber") is not None
    ]
    start = numbered[0][1] - numbered[0][0] if numbered else 0  # the session's first number
    for flow, begin, end in zip(flows, starts, [*starts[1:], len(records)], strict=False):
        run = records[begin:end]
        if flow == "chain":
            invariants.check_chain_flow(run)
        elif flow is not None:
            FLOW_CHECKS[flow](run, start=start)
        start += sum(map(_takes_a_number, run))
    return None


def _takes_a_number(record: dict[str, Any]) -> bool:
    """Persisted events carry a sequence number; a pending one takes the next when stored."""
    return record.get("sequenceNumber") is not None or record.get("persistence") == "pending"
