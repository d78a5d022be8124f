"""The chain executor's run invariant (``check_chain_flow``) accepts a whole run and
rejects a broken one, showing its events."""

from __future__ import annotations

from typing import Any

import pytest

from harness import invariants as inv
from tests.harness.event_flows import Flow


def chain(*events: tuple[str, dict[str, Any]]) -> list[dict[str, Any]]:
    flow = Flow()
    for kind, data in events:
        flow.add(kind, "transient", **data)
    return flow.events


def step_events(n: int, total: int = 2, end: str = "stepComplete") -> list[tuple[str, dict[str, Any]]]:
    return [("stepStart", {"stepNumber": n, "totalSteps": total}), (end, {"stepNumber": n, "totalSteps": total})]


def test_a_whole_chain_run_passes() -> None:
    inv.check_chain_flow(chain(*step_events(1), *step_events(2), ("chainComplete", {"totalSteps": 2})))
    inv.check_chain_flow(chain(*step_events(1), *step_events(2, end="stepError")))
    inv.check_chain_flow(chain(("stepStart", {"stepNumber": 1}), ("chainCancelled", {})))


@pytest.mark.parametrize(
    ("events", "rule"),
    [
        (
            [("stepStart", {"stepNumber": 1}), ("stepStart", {"stepNumber": 2})],
            "a step ends before the next one starts",
        ),
        (
            [("stepStart", {"stepNumber": 1}), ("stepComplete", {"stepNumber": 2})],
            "a step ends as the step that started",
        ),
        ([("stepComplete", {"stepNumber": 1}), ("chainComplete", {})], "a step ends only after it started"),
        ([*step_events(1), ("chainComplete", {}), *step_events(2)], "the chain's ending event is the last event"),
        ([*step_events(1, end="stepError"), ("chainComplete", {})], "a failed step ends the run"),
        ([*step_events(1)], "a run that did not fail ends with exactly one ending event"),
        ([("stepStart", {"stepNumber": 1}), ("chainComplete", {})], "the chain ends only between steps"),
        ([*step_events(1, total=3), *step_events(2, total=2), ("chainComplete", {})], "totalSteps never shrinks"),
    ],
)
def test_a_broken_chain_run_fails_showing_the_events(events: list[tuple[str, dict[str, Any]]], rule: str) -> None:
    with pytest.raises(inv.InvariantError) as info:
        inv.check_chain_flow(chain(*events))
    message = str(info.value)
    assert message.startswith(f"invariant broken: {rule}")
    assert "EVENT TYPE" in message and "   <-- " in message  # the table, with the offending events marked


def test_a_chain_that_fails_before_any_step_may_end_with_a_step_error_of_its_own() -> None:
    inv.check_chain_flow(chain(("stepError", {"stepNumber": 0, "error": "no plan"})))
    inv.check_chain_flow(chain(("stepError", {"error": "no plan"})))
    for stray in [("stepError", {"stepNumber": 2}), ("stepComplete", {"stepNumber": 0})]:
        with pytest.raises(inv.InvariantError, match="a step ends only after it started"):
            inv.check_chain_flow(chain(stray, ("chainComplete", {})))


def test_nothing_runs_after_a_failed_step_even_without_an_ending() -> None:
    with pytest.raises(inv.InvariantError, match="a failed step ends the run"):
        inv.check_chain_flow(chain(*step_events(1, end="stepError"), *step_events(2)))


def test_total_steps_may_not_shrink_between_two_events() -> None:
    grows_then_shrinks = [
        ("stepStart", {"stepNumber": 1, "totalSteps": 2}),
        ("stepComplete", {"stepNumber": 1, "totalSteps": 2}),
        ("stepStart", {"stepNumber": 2, "totalSteps": 3}),
        ("stepComplete", {"stepNumber": 2, "totalSteps": 2}),
        ("chainComplete", {}),
    ]
    with pytest.raises(inv.InvariantError, match="totalSteps never shrinks") as info:
        inv.check_chain_flow(chain(*grows_then_shrinks))
    assert "3 -> 2" in str(info.value)
