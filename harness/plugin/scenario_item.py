"""Scenario files as test items: one per scenario and protocol, each playing the scenario
with its runner, checking its expectations and comparing its golden through syrupy
(see ``harness.plugin.scenario_collection``, which collects them).

A runner that needs an extra which is not installed (the bundled ``agent``, ``chain``
and ``planner`` runners need the ``agent`` extra: the SDKs) fails its items with the
install command, not a traceback.
"""

from __future__ import annotations

import asyncio
import contextlib
import difflib
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from syrupy.terminal import disable_color

from harness.exceptions import MissingExtra
from harness.golden.assertion import GoldenAssertion
from harness.golden.extension import ScenarioGoldenExtension
from harness.golden.location import golden_extension
from harness.golden.refusal import FallbackRefusal
from harness.plugin.config import base_settings
from harness.plugin.fixtures import MockLLMFixture, MockLLMServer
from harness.scenarios.contract import ScenarioRunner, spoken_protocols
from harness.scenarios.model import Scenario, ScenarioError, field_line, load_scenario
from harness.scenarios.playback import check_expectations, run_scenario, scenario_golden
from harness.scenarios.registry import RunnerNotFound, resolve_runner
from mockllm import Allowances, MintedIds, MockLLM, Problem, ProblemKind, StrictnessError, refuse_hosts, verify_findings
from mockllm.testing import MissingExtraError

__all__ = ["ScenarioFile", "ScenarioItem", "replay_scenario", "unscripted_play"]

_FIRST_TEXTS = pytest.StashKey[dict[str, tuple[str, str]]]()
"""Per session, under --snapshot-update: golden location -> (first protocol, its text)."""


def _hook_runners(collector: pytest.Collector) -> Mapping[str, ScenarioRunner]:
    merged: dict[str, ScenarioRunner] = {}
    # pluggy calls the newest registration (a conftest) first; it wins.
    for runners in reversed(collector.ihook.pytest_mockllm_runners(config=collector.config)):
        merged.update(runners or {})
    return merged


class ScenarioFile(pytest.File):
    def collect(self) -> Iterator[pytest.Item]:
        try:
            scenario = load_scenario(self.path)
            runner = resolve_runner(scenario.runner, _hook_runners(self))
        except ScenarioError as exc:
            raise self.CollectError(str(exc)) from None
        except RunnerNotFound as exc:
            raise self.CollectError(f"{self.path}:{field_line(self.path, 'runner')}: runner: {exc}") from None
        spoken = spoken_protocols(runner)
        unspoken = [p for p in scenario.protocol_list if p not in spoken]
        if unspoken and scenario.protocols != "all":
            # Without a ``protocols:`` line the file asked for nothing: say what it defaulted to.
            default = "" if "protocols" in scenario.model_fields_set else " (the default: the file names no protocols)"
            raise self.CollectError(
                f"{self.path}:{field_line(self.path, 'protocols')}: protocols: runner {scenario.runner!r} does not "
                f"speak {', '.join(unspoken)}{default}; it speaks {', '.join(spoken)}. Name them with "
                f"`protocols: [{', '.join(spoken)}]`, or `protocols: all` for every protocol it speaks"
            )
        only = self.config.getoption("--mockllm-protocol")
        # ``protocols: all`` is every protocol the runner speaks: a runner is never handed
        # one it did not declare (a listed one it does not speak is the error above).
        for protocol in scenario.protocol_list:
            if (only and protocol != only) or protocol not in spoken:
                continue
            item = ScenarioItem.from_parent(self, name=f"{self.path.stem}[{protocol}]", callobj=replay_scenario)
            item.stash[_SCENARIO] = (scenario, protocol, runner)
            yield item


_SCENARIO = pytest.StashKey[tuple[Scenario, str, ScenarioRunner]]()


class ScenarioItem(pytest.Function):
    """One scenario under one protocol: a test function (``replay_scenario``) as syrupy
    knows them, so its golden is a snapshot like any other."""

    def reportinfo(self) -> tuple[Path, int | None, str]:
        scenario, protocol, _ = self.stash[_SCENARIO]
        return self.path, 0, f"scenario {scenario.name} [{protocol}]"


def _mock(request: pytest.FixtureRequest) -> MockLLMFixture | MockLLMServer:
    config = request.config
    seed = base_settings(config).seed
    if config.getoption("--mockllm-replay-server"):
        server: MockLLMServer = request.getfixturevalue("mockllm_server_process")
        # A server-side session of this item's own: its journal holds this scenario only.
        session = server.session(seed=seed)
        door = session.__enter__()
        request.addfinalizer(lambda: session.__exit__(None, None, None))
        return door
    return MockLLMFixture(MockLLM(seed=seed))


def _differs_across_protocols(
    request: pytest.FixtureRequest, golden: GoldenAssertion, text: str, protocol: str
) -> str | None:
    """Under --snapshot-update, a protocol whose golden differs from the first one's in
    this session (in one process; xdist workers each see their own share)."""
    if not golden.update_snapshots:
        return None
    location = golden.extension.get_location(test_location=golden.test_location, index=0)
    first = request.config.stash.setdefault(_FIRST_TEXTS, {}).setdefault(location, (protocol, text))
    if first[1] == text:
        return None
    diff = "".join(
        difflib.unified_diff(first[1].splitlines(True), text.splitlines(True), fromfile=first[0], tofile=protocol)
    )
    return f"{protocol} behaves differently from {first[0]}:\n{diff}"


def _scenario_opt_out(name: str) -> str | None:
    """An opt-out as a scenario file says it; None where a scenario has none (undeclared
    tool calls: the script or the runner is what to fix)."""
    if name in ("allow_fallback", "allow_unused_steps", "allow_impossible_replies"):
        return f"{name}: true in the scenario file"
    if name == "allow_real_providers":
        return "the flag --mockllm-allow-real-providers (or the ini option mockllm_allow_real_providers)"
    return None


def unscripted_play(
    mock: MockLLMFixture | MockLLMServer,
    scenario: Scenario,
    refused: Sequence[str] = (),
    allow_real_providers: bool = False,
) -> str | None:
    """Why what the mock served this scenario's run is not what the scenario scripted, or
    None: mockllm's one verdict rule (``mockllm.verify_findings``: a fallback reply, an
    unscripted 4xx, a scripted step never reached, a tool call the request did not
    declare, a request ``refused`` on its way to a provider's host), less what the scenario
    allows (``allow_fallback``, ``allow_unused_steps``, ``allow_impossible_replies``; the
    flag for real providers).

    Checked before the scenario's expectations and its golden, so that a run nobody
    scripted neither passes nor writes a golden. The findings are counted apart from the
    journal, so a long run forgets none."""
    allowances = Allowances(
        allow_fallback=scenario.allow_fallback,
        allow_unused_steps=scenario.allow_unused_steps,
        allow_impossible_replies=scenario.allow_impossible_replies,
        allow_real_providers=allow_real_providers,
    )
    findings = mock.findings().plus(Problem(kind=ProblemKind.UNMOCKED_HOST, summary=shown) for shown in refused)
    try:
        verify_findings(findings, allowances, opt_out=_scenario_opt_out)
    except StrictnessError as exc:
        return str(exc)
    return None


def _refusal(shown: str) -> str:
    return (
        f"mockllm refused {shown} before it left the process: the scenario's runner built a client that is "
        "not pointed at the mock and would reach the real provider. Build it from the runner's context "
        "(context.openai_base_url, its clients) or from the environment, which points at the mock."
    )


async def _play(
    scenario: Scenario,
    protocol: str,
    mock: MockLLMFixture | MockLLMServer,
    runner: ScenarioRunner,
    seed: int,
    refused: list[str],
) -> Any:
    # A runner's own client, built from context.openai_base_url or from the environment,
    # reaches this mock: the environment points at it and, in process, its host is
    # intercepted for the run. A client still aimed at a provider's host is refused.
    with pytest.MonkeyPatch.context() as monkeypatch, refuse_hosts(_refusal) as blocked:
        mock.patch_env(monkeypatch)
        try:
            return await run_scenario(scenario, protocol, mock, runner=runner, seed=seed)
        finally:
            refused.extend(blocked)


def replay_scenario(snapshot: Any, request: pytest.FixtureRequest) -> None:
    """Play this item's scenario, check it, and compare its golden."""
    scenario, protocol, runner = request.node.stash[_SCENARIO]
    title = f"scenario {scenario.name!r} under {protocol}"
    mock = _mock(request)
    settings = base_settings(request.config)
    refused: list[str] = []
    missing: str | None  # why the runner cannot run here, said once outside the except
    try:
        try:
            run = asyncio.run(_play(scenario, protocol, mock, runner, settings.seed, refused))
        except (MissingExtra, MissingExtraError) as exc:
            missing = f"{title}: runner {scenario.runner!r}: {exc}"
        else:
            missing = None
        if missing is not None:  # outside the except: the message alone, no chained traceback
            pytest.fail(missing, pytrace=False)
        problem = unscripted_play(mock, scenario, refused, settings.allow_real_providers) or check_expectations(
            scenario, run
        )
        if problem is not None:
            pytest.fail(f"{title}: {problem}", pytrace=False)
        extension = golden_extension(request.config, ScenarioGoldenExtension)
        refusal = FallbackRefusal(
            journal=lambda: mock.journal, findings=mock.findings, allow_fallback=scenario.allow_fallback
        )
        minted = MintedIds.of(mock.journal)  # read once: the play is over
        golden = GoldenAssertion.wrap(snapshot, extension, refusal, lambda: minted)
        data = scenario_golden(scenario, run)
        serialized = golden.serialized(data)  # text, though syrupy's type allows bytes
        text = serialized if isinstance(serialized, str) else serialized.decode("utf-8")
        mismatch = _differs_across_protocols(request, golden, text, protocol)
        if mismatch is not None:
            pytest.fail(f"{title}: {mismatch}", pytrace=False)
        if not golden == data:
            location = Path(golden.extension.get_location(test_location=golden.test_location, index=0))
            shown = (
                location.relative_to(request.config.rootpath)
                if location.is_relative_to(request.config.rootpath)
                else location
            )
            with disable_color() if request.config.option.no_colors else contextlib.nullcontext():
                diff = golden.get_assert_diff(diff_mode=request.config.option.diff_mode)
            pytest.fail(
                f"{title} differs from its golden {shown} (--snapshot-update accepts the new one):\n" + "\n".join(diff),
                pytrace=False,
            )
    finally:
        mock.close()
